package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/splitter"
)

// Values of bench --sink.
const (
	benchSinkDiscard    = "discard"
	benchSinkConfigured = "configured"
)

// benchScratchSuffix is appended to sink.cloudsearch.indexName to name the
// scratch index that `bench --sink configured` writes to.
const benchScratchSuffix = "-sluice-bench"

type benchFlags struct {
	opts      bench.Options
	sim       bench.SimOptions
	simulate  bool
	out       string
	json      bool
	sink      string
	inProcess bool
	// Hidden: set when the command is a child measuring one trial.
	trial       string
	simURL      string
	scratchPath string // the scratch local store of --sink configured
}

// benchCommand is `sluice bench`: it runs the pipeline once per batch size
// and concurrency and recommends the fastest setting without 429s.
func (a *app) benchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [DIR]",
		Short: "Find the embedding batch size and concurrency with the most throughput for a quota",
		Long: "Run the real pipeline over a folder (DIR overrides source.dir) once per batch size and concurrency,\n" +
			"against the configured embedder or, with --simulate, a built-in simulated provider whose latency is a\n" +
			"base plus a cost per token and whose RPM/TPM quota answers 429 like a real one. Each configuration\n" +
			"warms up (against a quota, at least as long as the quota takes to refill its burst allowance), then measures\n" +
			"chunks/s, tokens/s, quota use, p50/p95 request latency, 429s, retries and peak RSS, in a process of\n" +
			"its own. Prints a table with the winner marked (or --json lines) and writes bench.csv and bench.svg\n" +
			"(throughput against batch size) to --out. Before it starts, it says how long it will take (at least how\n" +
			"long, when the provider's latency is unknown), from the size of the corpus's chunks and the quota's pace.\n\n" +
			"The configured index is never written to. By default the vectors are discarded (--sink discard);\n" +
			"--sink configured also measures writing, to a scratch index of the configured kind and settings: a\n" +
			"local store in a temporary folder, or the Cloud AI Search index <indexName>" + benchScratchSuffix + ", created\n" +
			"for the benchmark and deleted after it.\n\n" +
			"Exit codes: 0 every configuration was measured; 1 some or all failed (the others are still printed\n" +
			"and written), or the benchmark was interrupted (what was measured is printed and written, marked\n" +
			"partial); 2 a usage or configuration error, found before anything is measured.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.bench(cmd, args, &f) },
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&f.opts.BatchSizes, "batch-sizes", bench.DefaultBatchSizes, "comma-separated batch sizes (chunks per request) to try, each allowed by embedder.batchSize's limits")
	fl.IntSliceVar(&f.opts.Concurrencies, "concurrency", bench.DefaultConcurrencies, "comma-separated numbers of requests in flight to try, each allowed by embedder.concurrency's limits")
	fl.StringVar(&f.out, "out", filepath.Join(".sluice", "bench"), "write bench.csv and bench.svg to `DIR` (created, and checked before measuring)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per configuration instead of the table")
	fl.StringVar(&f.sink, "sink", benchSinkDiscard, "where nodes go: discard (measure embedding alone), or configured (also measure writing, to a scratch index of the configured kind and settings, deleted afterwards; the configured index is never touched)")
	fl.DurationVar(&f.opts.Warmup, "warmup", bench.DefaultWarmup, "run and discard this long before measuring each configuration (0s: none; against a quota, raised to its burst window)")
	fl.DurationVar(&f.opts.Duration, "duration", bench.DefaultDuration, "shortest measured window per configuration (more than 0s)")
	fl.DurationVar(&f.opts.MaxDuration, "max-duration", bench.DefaultMaxDuration, "longest measured window, when --min-requests takes long to reach (0s: the default, 30s)")
	fl.IntVar(&f.opts.MinRequests, "min-requests", bench.DefaultMinRequests, "fewest embedding requests per measured window, for stable medians (1 or more); the window stays open until they complete, at the pace of the provider or its quota, up to --max-duration")
	fl.DurationVar(&f.opts.Cooldown, "cooldown", bench.DefaultCooldown, "pause before each configuration against a quota, so that it refills (0s: none)")
	fl.BoolVar(&f.inProcess, "in-process", false, "measure in this process instead of one process per configuration (peak RSS is then the running peak)")
	fl.BoolVar(&f.simulate, "simulate", false, "benchmark against the built-in simulated provider instead of the configured embedder")
	fl.DurationVar(&f.sim.Latency, "sim-latency", 100*time.Millisecond, "simulated base latency of a request")
	fl.DurationVar(&f.sim.TokenLatency, "sim-token-latency", 10*time.Microsecond, "simulated latency added per token")
	fl.IntVar(&f.sim.RPM, "sim-rpm", 0, "simulated requests-per-minute quota (0: unlimited)")
	fl.IntVar(&f.sim.TPM, "sim-tpm", 0, "simulated tokens-per-minute quota (0: unlimited)")
	fl.StringVar(&f.trial, "trial", "", "measure only this BATCHxCONCURRENCY and print its JSON result (used by bench itself)")
	fl.StringVar(&f.simURL, "sim-url", "", "base URL of a running simulated provider (used by bench itself)")
	fl.StringVar(&f.scratchPath, "scratch-path", "", "the scratch local store of --sink configured (used by bench itself)")
	_ = fl.MarkHidden("trial")
	_ = fl.MarkHidden("sim-url")
	_ = fl.MarkHidden("scratch-path")
	return cmd
}

func (a *app) bench(cmd *cobra.Command, args []string, f *benchFlags) (err error) {
	ctx := cmd.Context()
	cfg, err := a.configForDir(args, nil, nil, false)
	if err != nil {
		return err
	}
	// A --duration above the default --max-duration raises it, rather than
	// failing on a flag the user did not give.
	if !cmd.Flags().Changed("max-duration") && f.opts.Duration > f.opts.MaxDuration {
		f.opts.MaxDuration = f.opts.Duration
	}
	if err := f.validate(); err != nil {
		return err
	}
	if !f.simulate && f.simURL == "" {
		for _, name := range []string{"sim-latency", "sim-token-latency", "sim-rpm", "sim-tpm"} {
			if cmd.Flags().Changed(name) {
				return usagef("--%s sets the simulated provider, which only --simulate uses; add --simulate, or drop --%s to measure the configured embedder", name, name)
			}
		}
	}
	if f.trial != "" {
		return a.benchTrial(ctx, cfg, f)
	}
	var cutNote string // said once the preflight passed, not before its error
	if !cmd.Flags().Changed("batch-sizes") {
		emb, _ := benchEmbedder(cfg, f)
		if fit, cut := fitBatchSizes(emb, f.opts.BatchSizes); cut {
			cutNote = fmt.Sprintf("bench: embedder.maxInputsPerRequest is %d: trying batch sizes %s, the default list cut to it (--batch-sizes tries others)",
				emb.MaxInputsPerRequest, joinInts(fit))
			f.opts.BatchSizes = fit
		}
	}
	preflight := time.Now()
	cfg, files, err := benchPreflight(ctx, cfg, f)
	if err != nil {
		return err
	}
	if cutNote != "" {
		a.benchNote(cutNote)
	}
	listed := time.Since(preflight) // mostly listing the corpus, which each trial's process does again
	if f.simulate {
		sim, err := bench.StartSimulator(f.sim, cfg.Embedder.Dimensions)
		if err != nil {
			return err
		}
		defer sim.Close()
		f.simURL = sim.URL()
		a.benchNote(fmt.Sprintf("bench: simulated provider at %s (latency %s + %s/token, rpm %d, tpm %d)",
			f.simURL, f.sim.Latency, f.sim.TokenLatency, f.sim.RPM, f.sim.TPM))
	}
	emb, tpm := benchEmbedder(cfg, f)
	if f.sink == benchSinkConfigured {
		cleanup, err := a.openBenchScratch(ctx, &cfg, f)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, cleanup()) }()
	}
	m, err := a.benchMeasurer(cfg, files, emb, tpm, f)
	if err != nil {
		return err
	}

	w, err := a.benchWorkload(ctx, cfg, files, emb, tpm, f, listed)
	if err != nil {
		return err
	}
	trials := f.opts.Trials()
	a.benchAnnounce(trials, cfg.Source.Dir, w, f)
	results, runErr := bench.Run(ctx, m, trials, func(r bench.Result) {
		if r.Error != "" {
			a.benchWarn(fmt.Sprintf("bench: %s failed: %s", r.Trial(), r.Reason()),
				"batch_size", r.BatchSize, "concurrency", r.Concurrency, "error", r.Error)
			return
		}
		a.benchNote(fmt.Sprintf("bench: %s: %.0f tokens/s, %.1f chunks/s, %d throttled, p95 %.0f ms", r.Trial(), r.TokensPerS, r.ChunksPerS, r.HTTP429, r.P95Ms),
			"batch_size", r.BatchSize, "concurrency", r.Concurrency, "tokens_per_s", r.TokensPerS, "chunks_per_s", r.ChunksPerS,
			"http_429", r.HTTP429, "p95_ms", r.P95Ms)
		if r.Requests < int64(f.opts.MinRequests) {
			a.benchWarn(fmt.Sprintf("bench: %s: only %d of --min-requests %d requests completed within --max-duration %s; its medians rest on few requests (raise --max-duration)",
				r.Trial(), r.Requests, f.opts.MinRequests, f.opts.MaxDuration), "batch_size", r.BatchSize, "concurrency", r.Concurrency, "requests", r.Requests)
		}
	})
	var render []bench.RenderOption
	if runErr != nil {
		render = append(render, bench.Interrupted(len(trials)))
	}
	if len(results) > 0 {
		if err := a.writeBenchResults(results, f, render...); err != nil {
			return errors.Join(runErr, err)
		}
	} else if removed, err := removeBenchResults(f.out); err != nil {
		return errors.Join(runErr, err)
	} else if len(removed) > 0 {
		a.benchNote("bench: removed " + strings.Join(removed, " and ") + ", which an earlier run left: nothing was measured to replace them")
	}
	return benchOutcome(results, runErr, f.out)
}

// benchNote prints text, a line of bench's progress, on stderr; under
// --log-format json, as an info log line whose message is text, with
// attrs (key-value pairs) for log collectors.
func (a *app) benchNote(text string, attrs ...any) { a.benchLine(slog.LevelInfo, text, attrs...) }

// benchWarn is benchNote for what went wrong (a configuration that failed,
// a window with fewer requests than asked): a warning under --log-format
// json.
func (a *app) benchWarn(text string, attrs ...any) { a.benchLine(slog.LevelWarn, text, attrs...) }

func (a *app) benchLine(level slog.Level, text string, attrs ...any) {
	if a.logFormat == "json" {
		a.log.Log(context.Background(), level, text, attrs...)
		return
	}
	fmt.Fprintln(a.stderr, text)
}

// removeBenchResults removes the CSV and the chart an earlier run left in
// the --out folder dir, when this run has none to write (interrupted
// before its first configuration completed): they would read as its own.
// It returns the paths it removed.
func removeBenchResults(dir string) ([]string, error) {
	var removed []string
	for _, name := range []string{benchCSV, benchSVG} {
		p := filepath.Join(dir, name)
		switch err := os.Remove(p); {
		case err == nil:
			removed = append(removed, p)
		case !errors.Is(err, fs.ErrNotExist):
			return removed, fmt.Errorf("bench: removing the results of an earlier run, %s: %w", p, err)
		}
	}
	return removed, nil
}

// benchPreflight checks, before anything is started or measured, what
// would otherwise fail only later (each a usage error, exit 2): the
// scratch index's name, every batch size and concurrency against the
// embedder's limits, with --simulate one chunk against the simulated quota
// and the simulated latency of a request of one chunk against
// embedder.timeout, the corpus, and the --out folder, which it creates.
// It returns cfg with the scratch sink of --sink configured (see
// benchScratchConfig) and the corpus.
func benchPreflight(ctx context.Context, cfg Config, f *benchFlags) (Config, []reader.File, error) {
	scratchCfg, err := benchScratchConfig(cfg, f)
	if err != nil {
		return cfg, nil, err
	}
	emb, _ := benchEmbedder(cfg, f)
	if err := checkTrialLimits(emb, f.opts); err != nil {
		return cfg, nil, err
	}
	if !f.simulate && f.simURL == "" {
		// A missing API key (or credential setting) is found once, here,
		// not by every trial process in turn.
		if _, err := embedder.New(ctx, emb); err != nil {
			return cfg, nil, err
		}
	}
	if f.simulate {
		// The simulated quota caps each input as a configured one does:
		// a chunk above it would fail every document of every trial.
		sim := cfg
		sim.Embedder = emb
		if err := sim.checkChunkFits(); err != nil {
			if cfg.Embedder.TokensPerMinute > 0 {
				// The configured budget paces the client (SimulatedEmbedder
				// keeps it): its own message names it.
				return cfg, nil, usagef("%v (with --simulate, embedder.tokensPerMinute stays the client's budget; set it to 0 to pace at --sim-tpm)", err)
			}
			if size := cfg.Splitter.WithDefaults().ChunkSize; size > f.sim.TPM {
				return cfg, nil, usagef("--sim-tpm %d is below one chunk: splitter.chunkSize is %d tokens, more than the simulated quota allows a minute, so every document with a chunk that long would fail; "+
					"raise --sim-tpm to at least %d, or lower splitter.chunkSize to at most %d", f.sim.TPM, size, size, f.sim.TPM)
			}
			return cfg, nil, usagef("%v (the simulated provider has the caps of embedder %s)", err, emb.Provider) // another cap, such as maxTokensPerInput, which the message names
		}
		// A request of one full chunk must be answered within
		// embedder.timeout, or no configuration could embed one.
		withDefaults := emb
		withDefaults.ApplyDefaults()
		if err := f.sim.CheckTimeout(withDefaults.Timeout, cfg.Splitter.WithDefaults().ChunkSize); err != nil {
			return cfg, nil, &usageError{err}
		}
	}
	files, err := listBenchCorpus(ctx, cfg)
	if err != nil {
		return cfg, nil, err
	}
	return scratchCfg, files, checkBenchOut(f.out)
}

// listBenchCorpus lists the files to benchmark with. None, or a folder
// that cannot be listed, is a usage error; an interruption is not.
func listBenchCorpus(ctx context.Context, cfg Config) ([]reader.File, error) {
	files, err := bench.Corpus(ctx, cfg.Source)
	if errors.Is(err, bench.ErrNoFiles) || errors.Is(err, reader.ErrConfig) {
		return nil, &usageError{err}
	}
	return files, err
}

// benchEmbedder returns the embedder configuration trials run against and
// the tokens-per-minute quota their utilisation is measured against: the
// configured embedder and its budget, or with --simulate (or a child's
// --sim-url) the simulated provider and its quota. Before the simulator
// has started its URL is a placeholder, which validates the same.
//
// A local embedder (hash, instant) has no quota: it ignores
// embedder.tokensPerMinute, so its utilisation is null, as without a
// budget, and the winner is chosen by throughput. Measured against that
// budget, every row would read as capped at the same "quota" and the
// largest batch would win whatever its throughput.
func benchEmbedder(cfg Config, f *benchFlags) (embedder.Config, int) {
	if !f.simulate && f.simURL == "" {
		if cfg.Embedder.Local() {
			return cfg.Embedder, 0
		}
		return cfg.Embedder, cfg.Embedder.TokensPerMinute
	}
	url := f.simURL
	if url == "" {
		url = "http://127.0.0.1/v1"
	}
	return bench.SimulatedEmbedder(cfg.Embedder, url, f.sim), f.sim.TPM
}

// benchMeasurer returns what measures each trial: a child process running
// `sluice bench --trial`, or with --in-process a harness over files and
// cfg, whose sink is the scratch index of --sink configured.
func (a *app) benchMeasurer(cfg Config, files []reader.File, emb embedder.Config, tpm int, f *benchFlags) (bench.Measurer, error) {
	if f.inProcess {
		return a.benchHarness(cfg, files, emb, tpm, f)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench: finding the sluice binary to run each configuration in (or use --in-process): %w", err)
	}
	m := bench.Exec{Command: func(ctx context.Context, t bench.Trial) *exec.Cmd {
		return exec.CommandContext(ctx, exe, a.trialArgs(cfg.Source.Dir, t, f)...)
	}, Prog: "sluice"}
	if a.debug {
		m.Stderr = a.stderr // the trial's log of its requests, as it comes
	}
	return m, nil
}

// benchOutcome is the error a benchmark ends with once its results are
// printed and written (each exit 1): runErr, when it was interrupted;
// every configuration failed; or N of M configurations failed. It is nil
// when every configuration was measured.
func benchOutcome(results []bench.Result, runErr error, out string) error {
	if runErr != nil {
		if len(results) > 0 {
			return fmt.Errorf("%w; what was measured is printed above and written to %s, marked partial, with no recommendation", runErr, out)
		}
		return runErr
	}
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
		}
	}
	switch {
	case failed == len(results):
		return fmt.Errorf("bench: every configuration failed; the error of each is printed above and in the error column of %s", filepath.Join(out, benchCSV))
	case failed > 0:
		return fmt.Errorf("bench: %d of %d configurations failed; the error of each is printed above and in the error column of %s, and the recommendation is among the others only",
			failed, len(results), filepath.Join(out, benchCSV))
	}
	return nil
}

// trialProcessStart is about how long a trial's process takes to start
// (the configuration, the tokenizer) before it lists the corpus.
const trialProcessStart = 100 * time.Millisecond

// benchWorkload returns what benchAnnounce's prediction needs besides the
// options: the embedder and quota; the mean tokens of the corpus's chunks,
// from a dry run over up to bench.SampleBytes of its first files; with
// --simulate the simulated latency (unknown for a real provider, and with
// --sink configured, whose store may be slower than the provider); and the
// start-up of each trial, which for a process per trial is starting it and
// listing the corpus (listed: as long as the parent's preflight took).
// Only an interruption is an error: without the sample, the prediction is
// a lower bound.
func (a *app) benchWorkload(ctx context.Context, cfg Config, files []reader.File, emb embedder.Config, tpm int, f *benchFlags, listed time.Duration) (bench.Workload, error) {
	w := bench.Workload{Embedder: emb, TokensPerMinute: tpm}
	if !f.inProcess {
		w.Startup = trialProcessStart + listed
	}
	if f.simulate && f.sink != benchSinkConfigured {
		w.Latency = f.sim.RequestLatency
	}
	h, err := a.benchHarness(cfg, files, emb, tpm, f)
	if err == nil {
		w.TokensPerChunk, err = h.ChunkTokens(ctx, bench.SampleBytes)
	}
	if err != nil {
		if ctx.Err() != nil {
			return w, ctx.Err()
		}
		a.log.Debug("bench: the size of the corpus's chunks is unknown; the time announced is a lower bound", "err", err)
	}
	return w, nil
}

// benchAnnounce prints what the benchmark will do and how long it takes
// (bench.Options.Predict): the warm-up raised to a quota's burst window,
// with a note; then the configurations and the time of all and of each,
// with what makes them longer: --min-requests holding windows open, an
// unknown latency (then the times are lower bounds, with the most a
// configuration can take), a quota that may throttle.
func (a *app) benchAnnounce(trials []bench.Trial, dir string, w bench.Workload, f *benchFlags) {
	if given, warm := max(f.opts.Warmup, 0), f.opts.WarmupFor(w.Embedder, w.TokensPerMinute); warm > given {
		a.benchNote(fmt.Sprintf("bench: warm-up raised from %s to %s: against a quota, the warm-up is never shorter than the time the quota takes to refill its burst allowance", given, warm))
	}
	pace := "how fast the embedder answers"
	if f.sink == benchSinkConfigured {
		pace = "how fast the embedder answers and the store writes"
	}
	a.benchNote(fmt.Sprintf("bench: %s over %s, %s", plural(len(trials), "configuration", "configurations"), dir,
		describePrediction(f.opts.Predict(trials, w), f.opts, pace)))
}

// describePrediction says how long the trials of p take, for benchAnnounce;
// pace names what the time of a window depends on when p.AtLeast.
func describePrediction(p bench.Prediction, o bench.Options, pace string) string {
	o.ApplyDefaults()
	if len(p.Trials) == 0 {
		return "nothing to measure"
	}
	each := roundDuration(slices.Min(p.Trials))
	if most := roundDuration(slices.Max(p.Trials)); most != each {
		each += " to " + most
	}
	window := fmt.Sprintf("past --duration %s until --min-requests %d requests complete", o.Duration, o.MinRequests)
	var s string
	switch {
	case p.AtLeast:
		s = fmt.Sprintf("at least %s in all, at least %s each: each window stays open %s, which depends on %s, up to --max-duration %s (%s a configuration)",
			roundDuration(p.Total()), each, window, pace, o.MaxDuration, roundDuration(p.Most))
	case p.Extended > 0:
		s = fmt.Sprintf("about %s in all, %s each (%s open %s)", roundDuration(p.Total()), each,
			plural(p.Extended, "window stays", "windows stay"), window)
	default:
		s = fmt.Sprintf("about %s in all, %s each", roundDuration(p.Total()), each)
	}
	if p.Quota {
		s += "; more if the provider throttles"
	}
	return s
}

// roundDuration prints d to the millisecond below a second, to a tenth of
// a second below a minute, else to the second.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// fitBatchSizes cuts sizes, the default --batch-sizes, to those emb allows
// as embedder.batchSize (an HTTP provider no more than
// embedder.maxInputsPerRequest) and adds the largest it allows, so that a
// provider with a lower cap is measured up to it instead of refused. It
// reports whether it cut anything; an invalid emb is left to
// checkTrialLimits.
func fitBatchSizes(emb embedder.Config, sizes []int) ([]int, bool) {
	if emb.Validate() != nil {
		return sizes, false
	}
	allowed := func(v int) bool {
		c := emb
		c.BatchSize = v
		return c.Validate() == nil
	}
	var fit []int
	for _, v := range sizes {
		if allowed(v) {
			fit = append(fit, v)
		}
	}
	if len(fit) == len(sizes) {
		return sizes, false
	}
	if top := emb.MaxInputsPerRequest; allowed(top) && !slices.Contains(fit, top) {
		fit = append(fit, top)
		slices.Sort(fit)
	}
	return fit, true
}

// joinInts formats vs as a --batch-sizes value.
func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// checkTrialLimits refuses, before anything is measured, every batch size
// and concurrency the embedder would refuse: embedder.Config.Validate with
// the value as embedder.batchSize or embedder.concurrency (1 to
// embedder.MaxBatchSize inputs and 1 to embedder.MaxConcurrency requests
// for every provider, and for the HTTP providers no more inputs than
// embedder.maxInputsPerRequest).
func checkTrialLimits(emb embedder.Config, opts bench.Options) error {
	if err := emb.Validate(); err != nil {
		return err // exit 2: embedder.ErrConfig
	}
	for _, l := range []struct {
		flag, setting string
		vals          []int
		set           func(*embedder.Config, int)
	}{
		{"--batch-sizes", "embedder.batchSize", opts.BatchSizes, func(c *embedder.Config, v int) { c.BatchSize = v }},
		{"--concurrency", "embedder.concurrency", opts.Concurrencies, func(c *embedder.Config, v int) { c.Concurrency = v }},
	} {
		for _, v := range l.vals {
			c := emb
			l.set(&c, v)
			if err := c.Validate(); err != nil {
				return usagef("%s: %d is tried as %s, which the embedder configuration refuses (%v); drop it from %s", l.flag, v, l.setting, err, l.flag)
			}
		}
	}
	return nil
}

// checkBenchOut creates the --out folder and checks that files can be
// written in it, so that a benchmark does not measure for minutes only to
// fail at the end.
func checkBenchOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--out %s cannot be created: %v; name a folder you may write to", dir, unwrapPathError(err))
	}
	probe, err := os.CreateTemp(dir, ".sluice-bench-probe-*")
	if err != nil {
		return usagef("--out %s cannot be written: %v; name a folder you may write to", dir, unwrapPathError(err))
	}
	name := probe.Name()
	if err := errors.Join(probe.Close(), os.Remove(name)); err != nil {
		return err
	}
	// The files the results go to must be files that can be replaced.
	for _, file := range []string{benchCSV, benchSVG} {
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return usagef("--out %s holds a folder named %s, where the results go; move it or name another --out folder", dir, file)
		}
	}
	return nil
}

// The files bench writes into --out.
const (
	benchCSV = "bench.csv"
	benchSVG = "bench.svg"
)

func (f *benchFlags) validate() error {
	switch {
	case f.opts.Warmup < 0:
		return usagef("--warmup is %s; use 0s for no warm-up, or a duration such as %s", f.opts.Warmup, bench.DefaultWarmup)
	case f.opts.Cooldown < 0:
		return usagef("--cooldown is %s; use 0s for no cool-down, or a duration such as %s", f.opts.Cooldown, bench.DefaultCooldown)
	case f.opts.Duration <= 0:
		return usagef("--duration is %s; the measured window must be longer than 0s, such as %s", f.opts.Duration, bench.DefaultDuration)
	case f.opts.MinRequests < 1:
		return usagef("--min-requests is %d; a measured window needs at least 1 request for its latencies (default %d)", f.opts.MinRequests, bench.DefaultMinRequests)
	}
	// The flags carry the defaults, so 0s here was given: it means none.
	if f.opts.Warmup == 0 {
		f.opts.Warmup = bench.None
	}
	if f.opts.Cooldown == 0 {
		f.opts.Cooldown = bench.None
	}
	if err := f.opts.Validate(); err != nil {
		return &usageError{err}
	}
	if err := f.sim.Validate(); err != nil {
		return &usageError{err}
	}
	switch f.sink {
	case benchSinkDiscard, benchSinkConfigured:
	default:
		return usagef("--sink is %q; use discard or configured", f.sink)
	}
	if f.trial != "" {
		if _, err := bench.ParseTrial(f.trial); err != nil {
			return &usageError{err}
		}
	}
	return nil
}

// flagDuration formats d as a duration flag: 0s for bench.None.
func flagDuration(d time.Duration) string { return max(d, 0).String() }

// trialArgs are the arguments of the child that measures t.
func (a *app) trialArgs(dir string, t bench.Trial, f *benchFlags) []string {
	args := []string{"bench", dir, "--trial", t.String(), "--sink", f.sink,
		"--warmup", flagDuration(f.opts.Warmup), "--duration", f.opts.Duration.String(),
		"--max-duration", f.opts.MaxDuration.String(), "--min-requests", strconv.Itoa(f.opts.MinRequests),
		"--cooldown", flagDuration(f.opts.Cooldown)}
	if a.configPath != "" {
		args = append(args, "--config", a.configPath)
	}
	if a.envFile != defaultEnvFile {
		// The child reads the parent's env file, not ./.env.
		args = append(args, "--env-file", a.envFile)
	}
	if a.debug {
		args = append(args, "--debug")
	}
	args = append(args, "--log-format", a.logFormat)
	if f.simURL != "" {
		args = append(args, "--sim-url", f.simURL, "--sim-rpm", strconv.Itoa(f.sim.RPM), "--sim-tpm", strconv.Itoa(f.sim.TPM))
	}
	if f.scratchPath != "" {
		args = append(args, "--scratch-path", f.scratchPath)
	}
	return args
}

// benchScratchConfig returns cfg with its sink replaced by the scratch
// index that --sink configured writes to, so that a benchmark never touches
// the configured index: for Cloud AI Search the index
// <indexName>-sluice-bench (created if missing), for the local store the
// file --scratch-path names (set by openBenchScratch in the parent, passed
// to each trial's child). With --sink discard cfg is returned unchanged:
// its sink is never opened.
func benchScratchConfig(cfg Config, f *benchFlags) (Config, error) {
	if f.sink != benchSinkConfigured {
		return cfg, nil
	}
	if cfg.Sink.Type == sinkCloudSearch {
		cs := cfg.Sink.CloudSearch
		cs.IndexName += benchScratchSuffix
		cs.IndexManagement = cloudsearch.CreateIfNotExists
		if err := cs.Validate(); err != nil {
			return cfg, usagef("--sink configured benchmarks a scratch index named after sink.cloudsearch.indexName, %q, which the service would refuse (%v); shorten sink.cloudsearch.indexName to at most %d characters",
				cs.IndexName, err, 128-len(benchScratchSuffix))
		}
		cfg.Sink.CloudSearch = cs
		return cfg, nil
	}
	if f.trial != "" && f.scratchPath == "" {
		return cfg, usagef("--sink configured in a trial process needs --scratch-path, the scratch store sluice bench creates; run sluice bench without --trial")
	}
	cfg.Sink.Local.Path = f.scratchPath // "" in the parent until openBenchScratch
	return cfg, nil
}

// openBenchScratch creates the scratch index of --sink configured in the
// parent process and returns the function that removes it: for the local
// store a temporary folder (the store file in it is created by the first
// trial), whose path goes to the children as --scratch-path; for Cloud AI
// Search the index <indexName>-sluice-bench, created now (one already
// there is refused: it is not this benchmark's to delete) and deleted at
// the end.
func (a *app) openBenchScratch(ctx context.Context, cfg *Config, f *benchFlags) (func() error, error) {
	if cfg.Sink.Type == sinkCloudSearch {
		// The scratch index must be this benchmark's own, since it is
		// deleted at the end: an index of that name already there (a user's,
		// or another benchmark's in progress) is refused, never reused.
		name := cfg.Sink.CloudSearch.IndexName
		cs := cfg.Sink.CloudSearch
		cs.IndexManagement = cloudsearch.NoValidation
		s, err := cloudsearch.New(ctx, cs, cloudsearch.WithLogger(a.log))
		if err != nil {
			return nil, fmt.Errorf("bench: creating the scratch index %s: %w", name, err)
		}
		_, err = s.GetIndex(ctx)
		switch {
		case err == nil:
			return nil, usagef("--sink configured: the index %s already exists; bench writes to that scratch index and deletes it at the end, so it must not be there: "+
				"delete it if a benchmark left it (`sluice index delete` with sink.cloudsearch.indexName %s), or wait for the benchmark using it to end", name, name)
		case !errors.Is(err, cloudsearch.ErrIndexNotFound):
			return nil, fmt.Errorf("bench: checking the scratch index %s: %w", name, err)
		}
		if err := s.CreateIndex(ctx); err != nil {
			return nil, fmt.Errorf("bench: creating the scratch index %s: %w", name, err)
		}
		a.benchNote(fmt.Sprintf("bench: writing to the scratch index %s, deleted at the end", name))
		return func() error {
			// Delete it even after Ctrl-C, within a bound.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			defer s.Close()
			if err := s.DeleteIndex(dctx); err != nil {
				return fmt.Errorf("bench: deleting the scratch index %s: %w; delete it with `sluice index delete` and a config whose sink.cloudsearch.indexName is %s",
					cfg.Sink.CloudSearch.IndexName, err, cfg.Sink.CloudSearch.IndexName)
			}
			return nil
		}, nil
	}
	dir, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: creating the scratch store's temporary folder (set TMPDIR to a writable folder): %w", err)
	}
	f.scratchPath = filepath.Join(dir, "index.db")
	cfg.Sink.Local.Path = f.scratchPath
	a.benchNote(fmt.Sprintf("bench: writing to the scratch local store %s, removed at the end", f.scratchPath))
	return func() error {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("bench: removing the scratch store %s: %w", dir, err)
		}
		return nil
	}, nil
}

// benchTrial is the child: it measures one trial and prints its result.
func (a *app) benchTrial(ctx context.Context, cfg Config, f *benchFlags) error {
	t, _ := bench.ParseTrial(f.trial) // checked by validate
	cfg, err := benchScratchConfig(cfg, f)
	if err != nil {
		return err
	}
	files, err := listBenchCorpus(ctx, cfg)
	if err != nil {
		return err
	}
	emb, tpm := benchEmbedder(cfg, f)
	h, err := a.benchHarness(cfg, files, emb, tpm, f)
	if err != nil {
		return err
	}
	r, err := h.Measure(ctx, t)
	if err != nil {
		return err
	}
	return bench.WriteResult(a.stdout, r)
}

// benchHarness measures trials over files in this process. With --sink
// configured, cfg's sink must be the scratch index of benchScratchConfig.
func (a *app) benchHarness(cfg Config, files []reader.File, emb embedder.Config, tpm int, f *benchFlags) (*bench.Harness, error) {
	split, err := splitter.New(cfg.Splitter)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	h := &bench.Harness{
		Files: files,
		Pipeline: pipeline.Options{
			Splitter:         split,
			SplitConcurrency: cfg.Pipeline.SplitConcurrency,
			MemoryBudget:     int64(cfg.Pipeline.MemoryBudgetMB) << 20,
			Logger:           a.log,
		},
		Embedder:        emb,
		TokensPerMinute: tpm,
		Options:         f.opts,
	}
	if f.sink == benchSinkConfigured {
		h.OpenStore = func(ctx context.Context) (pipeline.Writer, error) { return a.openStore(ctx, cfg) }
	}
	return h, nil
}

// writeBenchResults prints the results and writes the CSV and the chart;
// render marks the results of an interrupted benchmark.
func (a *app) writeBenchResults(results []bench.Result, f *benchFlags, render ...bench.RenderOption) error {
	var err error
	if f.json {
		err = bench.WriteJSON(a.stdout, results, render...)
	} else {
		err = bench.WriteTable(a.stdout, results, render...)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("bench: creating --out %s: %w", f.out, err)
	}
	csvPath, svgPath := filepath.Join(f.out, benchCSV), filepath.Join(f.out, benchSVG)
	if err := writeFileWith(csvPath, func(w *os.File) error { return bench.WriteCSV(w, results, render...) }); err != nil {
		return err
	}
	if bench.Pick(results) >= 0 {
		if err := writeFileWith(svgPath, func(w *os.File) error { return bench.WriteChart(w, results, "svg", render...) }); err != nil {
			return err
		}
		a.benchNote(fmt.Sprintf("bench: wrote %s and %s", csvPath, svgPath))
		return nil
	}
	// No chart to go with this bench.csv: one an earlier run left would
	// read as this run's.
	if err := os.Remove(svgPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bench: removing the chart of an earlier run, %s: %w", svgPath, err)
	}
	a.benchNote(fmt.Sprintf("bench: wrote %s (no chart: every configuration failed)", csvPath))
	return nil
}

func writeFileWith(path string, write func(*os.File) error) error {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: writing results under --out: %w", err)
	}
	if err := write(file); err != nil {
		file.Close()
		return fmt.Errorf("bench: writing %s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("bench: writing %s: %w", path, err)
	}
	return nil
}
