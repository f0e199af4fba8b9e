package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/splitter"
)

// Values of bench --sink.
const (
	benchSinkDiscard    = "discard"
	benchSinkConfigured = "configured"
)

type benchFlags struct {
	opts      bench.Options
	sim       bench.SimOptions
	simulate  bool
	out       string
	json      bool
	sink      string
	inProcess bool
	// Hidden: set when the command is a child measuring one trial.
	trial  string
	simURL string
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
			"warms up, then measures chunks/s, tokens/s, quota use, p50/p95 request latency, 429s, retries and\n" +
			"peak RSS, in a process of its own. Prints a table with the winner marked (or --json lines) and\n" +
			"writes bench.csv and bench.svg (throughput against batch size) to --out.",
		Args: positionalArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return a.bench(cmd, args, &f) },
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&f.opts.BatchSizes, "batch-sizes", bench.DefaultBatchSizes, "comma-separated batch sizes (chunks per request) to try")
	fl.IntSliceVar(&f.opts.Concurrencies, "concurrency", bench.DefaultConcurrencies, "comma-separated numbers of requests in flight to try")
	fl.StringVar(&f.out, "out", filepath.Join(".sluice", "bench"), "write bench.csv and bench.svg to `DIR`")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per configuration instead of the table")
	fl.StringVar(&f.sink, "sink", "", "where nodes go: discard or configured (default: discard with --simulate, else configured)")
	fl.DurationVar(&f.opts.Warmup, "warmup", bench.DefaultWarmup, "run and discard this long before measuring each configuration")
	fl.DurationVar(&f.opts.Duration, "duration", bench.DefaultDuration, "shortest measured window per configuration")
	fl.DurationVar(&f.opts.MaxDuration, "max-duration", bench.DefaultMaxDuration, "longest measured window, when --min-requests takes long to reach")
	fl.IntVar(&f.opts.MinRequests, "min-requests", bench.DefaultMinRequests, "fewest embedding requests per measured window, for stable medians")
	fl.DurationVar(&f.opts.Cooldown, "cooldown", bench.DefaultCooldown, "pause before each configuration against a quota, so that it refills")
	fl.BoolVar(&f.inProcess, "in-process", false, "measure in this process instead of one process per configuration (peak RSS is then the running peak)")
	fl.BoolVar(&f.simulate, "simulate", false, "benchmark against the built-in simulated provider instead of the configured embedder")
	fl.DurationVar(&f.sim.Latency, "sim-latency", 100*time.Millisecond, "simulated base latency of a request")
	fl.DurationVar(&f.sim.TokenLatency, "sim-token-latency", 10*time.Microsecond, "simulated latency added per token")
	fl.IntVar(&f.sim.RPM, "sim-rpm", 0, "simulated requests-per-minute quota (0: unlimited)")
	fl.IntVar(&f.sim.TPM, "sim-tpm", 0, "simulated tokens-per-minute quota (0: unlimited)")
	fl.StringVar(&f.trial, "trial", "", "measure only this BATCHxCONCURRENCY and print its JSON result (used by bench itself)")
	fl.StringVar(&f.simURL, "sim-url", "", "base URL of a running simulated provider (used by bench itself)")
	_ = fl.MarkHidden("trial")
	_ = fl.MarkHidden("sim-url")
	return cmd
}

func (a *app) bench(cmd *cobra.Command, args []string, f *benchFlags) error {
	ctx := cmd.Context()
	cfg, err := a.configForDir(args, nil, nil)
	if err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	if f.trial != "" {
		return a.benchTrial(ctx, cfg, f)
	}

	emb := cfg.Embedder
	tpm := emb.TokensPerMinute
	if f.simulate {
		sim, err := bench.StartSimulator(f.sim, emb.Dimensions)
		if err != nil {
			return err
		}
		defer sim.Close()
		f.simURL = sim.URL()
		emb, tpm = bench.SimulatedEmbedder(emb, f.simURL, f.sim), f.sim.TPM
		fmt.Fprintf(a.stderr, "bench: simulated provider at %s (latency %s + %s/token, rpm %d, tpm %d)\n",
			f.simURL, f.sim.Latency, f.sim.TokenLatency, f.sim.RPM, f.sim.TPM)
	}
	if err := checkBatchSizes(emb, f.opts.BatchSizes); err != nil {
		return err
	}
	var m bench.Measurer
	if f.inProcess {
		h, err := a.benchHarness(ctx, cfg, emb, tpm, f)
		if err != nil {
			return err
		}
		m = h
	} else {
		if _, err := bench.Corpus(ctx, cfg.Source); err != nil {
			return usagef("%v", err)
		}
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench: finding the sluice binary to run each configuration in (or use --in-process): %w", err)
		}
		m = bench.Exec{Command: func(ctx context.Context, t bench.Trial) *exec.Cmd {
			return exec.CommandContext(ctx, exe, a.trialArgs(cfg.Source.Dir, t, f)...)
		}}
	}

	trials := f.opts.Trials()
	fmt.Fprintf(a.stderr, "bench: %d configurations over %s, about %s each\n", len(trials), cfg.Source.Dir, f.opts.Cooldown+f.opts.Warmup+f.opts.Duration)
	results, runErr := bench.Run(ctx, m, trials, func(r bench.Result) {
		if r.Error != "" {
			fmt.Fprintf(a.stderr, "bench: %s failed: %s\n", r.Trial(), r.Error)
			return
		}
		fmt.Fprintf(a.stderr, "bench: %s: %.0f tokens/s, %.1f chunks/s, %d throttled, p95 %.0f ms\n", r.Trial(), r.TokensPerS, r.ChunksPerS, r.HTTP429, r.P95Ms)
	})
	if len(results) > 0 {
		if err := a.writeBenchResults(results, f); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if bench.Pick(results) < 0 {
		return errors.New("bench: every configuration failed; the error of each is printed above and in the error column of bench.csv")
	}
	return nil
}

// checkBatchSizes refuses batch sizes the embedder's request cap forbids.
func checkBatchSizes(emb embedder.Config, sizes []int) error {
	emb.ApplyDefaults()
	if emb.Local() {
		return nil
	}
	for _, b := range sizes {
		if b > emb.MaxInputsPerRequest {
			return usagef("--batch-sizes: %d is above embedder.maxInputsPerRequest (%d); drop it or raise that setting if the provider allows", b, emb.MaxInputsPerRequest)
		}
	}
	return nil
}

func (f *benchFlags) validate() error {
	if err := f.opts.Validate(); err != nil {
		return &usageError{err}
	}
	if err := f.sim.Validate(); err != nil {
		return &usageError{err}
	}
	switch f.sink {
	case "":
		f.sink = benchSinkConfigured
		if f.simulate || f.simURL != "" {
			f.sink = benchSinkDiscard
		}
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

// trialArgs are the arguments of the child that measures t.
func (a *app) trialArgs(dir string, t bench.Trial, f *benchFlags) []string {
	args := []string{"bench", dir, "--trial", t.String(), "--sink", f.sink,
		"--warmup", f.opts.Warmup.String(), "--duration", f.opts.Duration.String(),
		"--max-duration", f.opts.MaxDuration.String(), "--min-requests", strconv.Itoa(f.opts.MinRequests),
		"--cooldown", f.opts.Cooldown.String()}
	if a.configPath != "" {
		args = append(args, "--config", a.configPath)
	}
	if a.debug {
		args = append(args, "--debug")
	}
	if f.simURL != "" {
		args = append(args, "--sim-url", f.simURL, "--sim-rpm", strconv.Itoa(f.sim.RPM), "--sim-tpm", strconv.Itoa(f.sim.TPM))
	}
	return args
}

// benchTrial is the child: it measures one trial and prints its result.
func (a *app) benchTrial(ctx context.Context, cfg Config, f *benchFlags) error {
	t, _ := bench.ParseTrial(f.trial) // checked by validate
	emb, tpm := cfg.Embedder, cfg.Embedder.TokensPerMinute
	if f.simURL != "" {
		emb, tpm = bench.SimulatedEmbedder(emb, f.simURL, f.sim), f.sim.TPM
	}
	h, err := a.benchHarness(ctx, cfg, emb, tpm, f)
	if err != nil {
		return err
	}
	r, err := h.Measure(ctx, t)
	if err != nil {
		return err
	}
	return bench.WriteResult(a.stdout, r)
}

// benchHarness measures trials over cfg's corpus in this process.
func (a *app) benchHarness(ctx context.Context, cfg Config, emb embedder.Config, tpm int, f *benchFlags) (*bench.Harness, error) {
	files, err := bench.Corpus(ctx, cfg.Source)
	if err != nil {
		return nil, usagef("%v", err)
	}
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
		h.OpenStore = func(ctx context.Context) (pipeline.Writer, error) {
			s, err := a.openStore(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	return h, nil
}

// writeBenchResults prints the results and writes the CSV and the chart.
func (a *app) writeBenchResults(results []bench.Result, f *benchFlags) error {
	var err error
	if f.json {
		err = bench.WriteJSON(a.stdout, results)
	} else {
		err = bench.WriteTable(a.stdout, results)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("bench: creating --out %s: %w", f.out, err)
	}
	csvPath, svgPath := filepath.Join(f.out, "bench.csv"), filepath.Join(f.out, "bench.svg")
	if err := writeFileWith(csvPath, func(w *os.File) error { return bench.WriteCSV(w, results) }); err != nil {
		return err
	}
	if bench.Pick(results) >= 0 {
		if err := writeFileWith(svgPath, func(w *os.File) error { return bench.WriteChart(w, results, "svg") }); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "bench: wrote %s and %s\n", csvPath, svgPath)
		return nil
	}
	fmt.Fprintf(a.stderr, "bench: wrote %s (no chart: every configuration failed)\n", csvPath)
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
