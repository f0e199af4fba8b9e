package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/internal/wait"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/bench/rss"
	"github.com/sluice-dev/sluice/reader"
)

// pollEvery is how often a trial checks whether its window is complete.
const pollEvery = 50 * time.Millisecond

// Harness measures trials in this process by running the pipeline over
// Files with the trial's batch size and concurrency.
type Harness struct {
	// Files is the corpus (see Corpus), fed to the pipeline again and again
	// until the trial ends. Required.
	Files []reader.File
	// Pipeline is the template of each run: Splitter is required; Logger
	// (which also gets an HTTP embedder's log of its requests),
	// MemoryBudget, SplitConcurrency and the like are kept, and OnDocument
	// is called after the harness's own. Source, Embedder, Store,
	// BatchSize, MaxBatchTokens, EmbedConcurrency, Stats and DryRun are set
	// per trial, and State and Prescan are cleared: a benchmark neither
	// reads nor writes the run manifest.
	Pipeline pipeline.Options
	// Embedder configures each trial's embedder; its batchSize and
	// concurrency are replaced by the trial's.
	Embedder embedder.Config
	// OpenStore opens the store of a trial, closed (if an io.Closer) when
	// the trial ends; nil means Discard.
	OpenStore func(ctx context.Context) (pipeline.Writer, error)
	// TokensPerMinute is the quota TPMUtilization is measured against;
	// 0 means no quota and a null utilisation.
	TokensPerMinute int
	// Options set the warm-up and the measured window; the lists of batch
	// sizes and concurrencies are not used.
	Options Options
}

// mark is the state of the counters at one end of the window, taken by
// the recorder as a successful Embed call returns (see recorder).
type mark struct {
	at time.Time
	// tokens are the tokens of the successful Embed calls so far (the
	// call's own included), calls their number and embedded their inputs.
	tokens, calls, embedded int64
	throttled, retries      int64
	// requests is the embedding requests completed so far and inputs
	// their inputs, counted together (by the client's Stats, or by the
	// recorder for an embedder without them): the inputs of the requests
	// completed in the window over their number is the mean batch sent.
	requests, inputs int64
}

// fillMark returns the recorder's fill for a trial: the client's
// counters, when emb keeps Stats.
func fillMark(emb embedder.Embedder) func(*mark) {
	sr, _ := emb.(embedder.StatsReporter)
	return func(m *mark) {
		if sr != nil {
			st := sr.Stats()
			m.throttled, m.retries = st.Throttled, st.Retries
			m.requests, m.inputs = st.Succeeded, st.InputsSent
		}
	}
}

// Measure runs trial t: it waits Options.Cooldown when a quota applies,
// warms up for Options.WarmupFor (at least the quota's burst window), then
// measures a window of at least Options.Duration holding at least
// Options.MinRequests requests (up to Options.MaxDuration), then cancels
// the run. The window runs from one request's completion to another's, so
// that it holds the whole time of every request it counts (see recorder);
// HTTP429 and Retries count the whole trial, warm-up included. PeakRSSMB is
// the running peak of this process. A corpus from which a whole pass
// embeds no token fails the trial with an error wrapping
// ErrNothingEmbedded.
func (h *Harness) Measure(ctx context.Context, t Trial) (Result, error) {
	opts := h.Options
	opts.ApplyDefaults()
	if len(h.Files) == 0 {
		return Result{}, fmt.Errorf("%w: Harness.Files is empty", ErrNoFiles)
	}
	cfg := h.Embedder
	cfg.BatchSize, cfg.Concurrency = t.BatchSize, t.Concurrency
	if hasQuota(cfg, h.TokensPerMinute) {
		if err := wait.Sleep(ctx, opts.cooldown()); err != nil {
			return Result{}, err
		}
	}
	rec := new(recorder)
	emb, inner, err := newEmbedder(ctx, cfg, rec, h.Pipeline.Logger)
	if err != nil {
		return Result{}, fmt.Errorf("bench: trial %s: %w", t, err)
	}
	var store pipeline.Writer = Discard{}
	if h.OpenStore != nil {
		if store, err = h.OpenStore(ctx); err != nil {
			return Result{}, fmt.Errorf("bench: trial %s: opening the store: %w", t, err)
		}
		if c, ok := store.(io.Closer); ok {
			defer c.Close()
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	po := h.Pipeline
	po.Embedder, po.Store, po.Stats, po.DryRun = emb, store, new(pipeline.Stats), false
	prog := newProgress(&po.Stats.Tokens, h.Files)
	po.Source = cycle(h.Files, prog.endOfPass)
	po.OnDocument = chainOnDocument(prog.onDocument, h.Pipeline.OnDocument)
	po.State, po.Prescan = nil, false
	po.BatchSize, po.EmbedConcurrency = t.BatchSize, t.Concurrency
	po.MaxBatchTokens = cfg.Limits().MaxTokens
	rec.fill = fillMark(inner)
	done := make(chan error, 1)
	go func() {
		_, err := pipeline.Run(runCtx, po)
		done <- err
	}()

	warmup := opts.WarmupFor(cfg, h.TokensPerMinute)
	res, ended, err := h.window(runCtx, opts, warmup, rec, done)
	cancel()
	if !ended {
		<-done // the pipeline stops within a second of cancel
	}
	if err != nil {
		return Result{}, fmt.Errorf("bench: trial %s: %w", t, err)
	}
	if res.Seconds <= 0 {
		// Nothing to measure: a figure of 0 tokens/s would say the setting
		// is slow when the window was only too short for its requests.
		return Result{}, fmt.Errorf("bench: trial %s: no embedding request completed in its measured window of %s; raise --max-duration above the latency of one request", t, opts.MaxDuration)
	}
	if peak, err := rss.Peak(); err == nil {
		res.PeakRSSMB = float64(peak) / (1 << 20)
	}
	res.BatchSize, res.Concurrency = t.BatchSize, t.Concurrency
	return res, nil
}

// chainOnDocument calls first, then next (if not nil).
func chainOnDocument(first, next func(context.Context, pipeline.DocumentResult) error) func(context.Context, pipeline.DocumentResult) error {
	if next == nil {
		return first
	}
	return func(ctx context.Context, d pipeline.DocumentResult) error {
		if err := first(ctx, d); err != nil {
			return err
		}
		return next(ctx, d)
	}
}

// errRunEnded reports a pipeline run that ended by itself, which only an
// error can cause since the source never ends.
var errRunEnded = errors.New("the pipeline run ended before the measurement")

// window waits out the warm-up, counted from the first successful Embed
// call, then measures from the first Embed call to complete after it to
// the first to complete once the window has lasted Options.Duration and
// holds Options.MinRequests calls (see recorder). When Options.MaxDuration
// passes first, the window closes at the latest call completed; if none
// has, the result holds no request. ended reports that it received the
// run's end from done.
func (h *Harness) window(ctx context.Context, opts Options, warmup time.Duration, rec *recorder, done <-chan error) (res Result, ended bool, err error) {
	runEnded := func(err error) (Result, bool, error) {
		if err == nil {
			err = errRunEnded
		}
		return Result{}, true, err
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var warmEnd time.Time
	for {
		select {
		case <-ctx.Done():
			return Result{}, false, ctx.Err()
		case err := <-done:
			return runEnded(err)
		case now := <-tick.C:
			if warmEnd.IsZero() {
				first := rec.firstCall()
				if first.IsZero() {
					continue
				}
				warmEnd = first.Add(warmup)
				rec.closeWhen(opts.Duration, opts.MinRequests)
				rec.openAt(warmEnd)
			}
			start, last, open := rec.window()
			if !open {
				if now.Sub(warmEnd) >= opts.MaxDuration {
					// Not one request completed in a whole window.
					return Result{}, false, nil
				}
				continue
			}
			if end, closed := rec.closing(); closed {
				return h.result(start, end, rec.latencies(start, end)), false, nil
			}
			if now.Sub(start.at) >= opts.MaxDuration {
				return h.result(start, last, rec.latencies(start, last)), false, nil
			}
		}
	}
}

// result computes the figures of a window; lat are the latencies of its
// calls (see recorder.latencies).
func (h *Harness) result(start, end mark, lat []time.Duration) Result {
	secs := end.at.Sub(start.at).Seconds()
	if secs <= 0 {
		// No request completed after the one that opened the window.
		return Result{}
	}
	tokens := float64(end.tokens - start.tokens)
	r := Result{
		// The chunks of the calls that the tokens count: the chunks
		// written lag their calls, and would count the chunks of the call
		// that opened the window (a request more than the window holds).
		ChunksPerS: float64(end.embedded-start.embedded) / secs,
		TokensPerS: tokens / secs,
		// The whole trial's, warm-up included: a budget above the
		// provider's quota is throttled as it starts, then the client
		// slows down, so that a window after the warm-up may see no 429
		// although the budget is wrong.
		HTTP429: end.throttled,
		Retries: end.retries,
		// Of the calls Requests counts, whenever their requests completed
		// (see recorder): the percentiles of the requests beside them.
		P50Ms: millis(percentile(lat, 0.50)),
		P95Ms: millis(percentile(lat, 0.95)),
		// The calls the window holds, as its tokens and its closing count
		// them, not the latencies observed while it was open: with
		// concurrency, a request observed just before another call opened
		// the window may see its own call return inside it, and the
		// latencies then read fewer requests than the window was held
		// open for (7 of --min-requests 8, which bench then warned about).
		Requests: end.calls - start.calls,
		Seconds:  secs,
	}
	// Chunks written over requests completed would mix counts taken at
	// different moments (a chunk is written after its request completes),
	// and could exceed the batch size.
	if n := end.requests - start.requests; n > 0 {
		r.ChunksPerRequest = float64(end.inputs-start.inputs) / float64(n)
	}
	if h.TokensPerMinute > 0 {
		u := tokens / (float64(h.TokensPerMinute) / 60 * secs)
		r.TPMUtilization = &u
	}
	return r
}
