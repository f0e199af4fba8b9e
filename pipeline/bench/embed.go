package bench

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// recorder follows the embedding requests of a trial and marks its measured
// window. The window opens at the completion of a request and closes at the
// completion of another: it then holds the whole time of every request it
// counts. A window opened at an arbitrary moment and closed as its last
// request completed would count the tokens of a request sent mostly before
// it opened, and read high by up to one request in the window (a third,
// for a window of three requests). So the recorder takes a mark (see mark)
// at each successful Embed call, as it returns, before the pipeline counts
// or writes its chunks, and the window is the time between two marks.
//
// It also keeps the request latencies of the window's calls, those that
// its Requests count (see Harness.result): a call's latencies come with it
// as it returns (see timed), and are the window's if the call is. Someone
// reading a window's p95 beside its requests takes it for the p95 of those
// requests. The latencies observed while the window was open would be
// another set with several workers, a call apart at each end: a request
// that completed before the window opened, of a call that returned inside
// it, would be left out, and one that completed inside it, of a call that
// returned after it closed, counted.
type recorder struct {
	// fill, set before the first Embed call, completes a mark with the
	// counters the recorder does not keep: the chunks written, and the
	// client's Stats.
	fill func(m *mark)

	mu     sync.Mutex
	calls  int64 // successful Embed calls
	inputs int64 // their inputs
	tokens int64 // their tokens
	first  time.Time
	last   mark // at the latest successful Embed call
	// openAfter, once set, opens the window at the first successful Embed
	// call at or after it; open reports that it did, at start.
	openAfter time.Time
	open      bool
	start     mark
	// closeAfter and closeCalls, once set, close the window at the first
	// successful Embed call that ends it at least closeAfter after it
	// opened with at least closeCalls calls in it; closed reports that it
	// did, at end. Closing at a call as it returns, not at the next poll,
	// matters with concurrency: requests sent together return together,
	// and a window that opened at the first of such a cluster and closed
	// at the last of another would count a whole cluster more than its
	// time holds (5 requests in 1.02s for 4 workers whose requests take 1s).
	closeAfter time.Duration
	closeCalls int64
	closed     bool
	end        mark
	lat        []latency // of the calls after the one that opened the window
}

// latency is a request latency and the call it was of, numbered as
// mark.calls counts them.
type latency struct {
	call int64
	d    time.Duration
}

// embedded records a successful Embed call of inputs texts of tokens tokens
// whose requests took lat. The latencies are kept once the window is open,
// for latencies to pick the window's calls from: not those of the call
// that opens it, which is not in it.
func (r *recorder) embedded(lat []time.Duration, inputs, tokens int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.calls++
	if r.open {
		for _, d := range lat {
			r.lat = append(r.lat, latency{r.calls, d})
		}
	}
	r.inputs += int64(inputs)
	r.tokens += int64(tokens)
	m := mark{at: now, tokens: r.tokens, calls: r.calls, embedded: r.inputs, requests: r.calls, inputs: r.inputs}
	if r.fill != nil {
		r.fill(&m)
	}
	r.last = m
	if r.first.IsZero() {
		r.first = now
	}
	switch {
	case !r.open && !r.openAfter.IsZero() && !now.Before(r.openAfter):
		r.open, r.start = true, m
	case r.open && !r.closed && r.closeCalls > 0 && m.at.Sub(r.start.at) >= r.closeAfter && m.calls-r.start.calls >= r.closeCalls:
		r.closed, r.end = true, m
	}
}

// closeWhen sets when the window closes: at the first successful Embed
// call at least d after it opened with at least calls calls (at least one)
// in it.
func (r *recorder) closeWhen(d time.Duration, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeAfter, r.closeCalls = d, max(int64(calls), 1)
}

// closing returns the mark that closed the window, and whether it closed.
func (r *recorder) closing() (end mark, closed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end, r.closed
}

// firstCall returns when the first successful Embed call returned, or
// the zero time if none has.
func (r *recorder) firstCall() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// openAt opens the window at the first successful Embed call at or after
// t, or at the latest one if it returned at or after t already.
func (r *recorder) openAt(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.openAfter.IsZero() {
		return
	}
	r.openAfter = t
	if !r.open && !r.last.at.IsZero() && !r.last.at.Before(t) {
		r.open, r.start = true, r.last
	}
}

// window returns the mark that opened the window, the latest mark, and
// whether the window is open.
func (r *recorder) window() (start, last mark, open bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start, r.last, r.open
}

// latencies returns the latencies of the calls between start and end: of
// the calls after the one that took start, up to the one that took end.
func (r *recorder) latencies(start, end mark) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ds []time.Duration
	for _, l := range r.lat {
		if l.call > start.calls && l.call <= end.calls {
			ds = append(ds, l.d)
		}
	}
	return ds
}

// newEmbedder builds the embedder cfg selects, wrapped so that rec marks
// each successful Embed call with its request latencies: per HTTP attempt
// for the HTTP providers (the time waiting for the quota is not latency),
// which count their requests and inputs in their Stats, and per Embed call
// for the others. An HTTP provider logs its requests to log (see
// embedder.WithLogger; nil logs nothing). It also returns the unwrapped
// embedder.
func newEmbedder(ctx context.Context, cfg embedder.Config, rec *recorder, log *slog.Logger) (wrapped, inner embedder.Embedder, err error) {
	e, err := embedder.New(ctx, cfg, embedder.WithLogger(log), embedder.WithBatchSizeSetting("--batch-sizes"))
	if err != nil {
		return nil, nil, err
	}
	_, client := e.(*embedder.Client)
	return timed{e, client, func(lat []time.Duration, in []embedder.Input) {
		tokens := 0
		for _, x := range in {
			tokens += x.Tokens
		}
		rec.embedded(lat, len(in), tokens)
	}}, e, nil
}

// timed reports the inputs and the request latencies of each successful
// Embed call of the embedder it wraps, as the call returns: with attempts,
// the latency of each of the call's successful HTTP attempts, which the
// embedder (an *embedder.Client) reports through the call's context (see
// embedder.ContextWithLatencyObserver); without, the call's duration.
type timed struct {
	embedder.Embedder
	attempts bool
	record   func(lat []time.Duration, in []embedder.Input)
}

// callLatencies collects the latencies of one Embed call's requests, which
// the call may send concurrently.
type callLatencies struct {
	mu sync.Mutex
	ds []time.Duration
}

// observe adds the latency of a request.
func (c *callLatencies) observe(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ds = append(c.ds, d)
}

// all returns the latencies added so far.
func (c *callLatencies) all() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ds
}

// Local forwards the wrapped embedder's Local, so that the pipeline caps
// a local embedder's concurrency at the core count in a benchmark as it
// does in a run.
func (t timed) Local() bool {
	l, ok := t.Embedder.(interface{ Local() bool })
	return ok && l.Local()
}

func (t timed) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	var lat callLatencies
	if t.attempts {
		ctx = embedder.ContextWithLatencyObserver(ctx, lat.observe)
	}
	start := time.Now()
	v, err := t.Embedder.Embed(ctx, in)
	if err != nil {
		return v, err
	}
	if !t.attempts {
		lat.observe(time.Since(start))
	}
	t.record(lat.all(), in)
	return v, nil
}
