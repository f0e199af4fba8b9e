package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluice-dev/sluice/pipeline/watch"
	"github.com/sluice-dev/sluice/reader"
)

// watchFlags are the command-line settings of `sluice watch`; each
// overrides the corresponding watch setting only when given.
type watchFlags struct {
	metricsAddr    string
	debounce       time.Duration
	maxDelay       time.Duration
	rescanInterval time.Duration
	gracePeriod    time.Duration
	verify         bool
}

func (a *app) watchCommand() *cobra.Command {
	var f watchFlags
	def := watch.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "watch [DIR]",
		Short: "Keep the vector store in step with a folder, reacting to file changes",
		Long: "Reconcile the folder with the store (like `sluice run`), then watch it: files created,\n" +
			"changed, renamed or deleted are ingested or removed within about a second of their last\n" +
			"write (--debounce; 0s ingests each change as soon as it is seen). DIR overrides source.dir.\n" +
			"The first SIGINT or SIGTERM stops taking changes, lets the documents in flight finish for\n" +
			"up to --grace-period (0s: not at all) and exits 0; a second one exits at once (code 1).\n" +
			"Either way the state stays consistent and the next start resumes. --metrics-addr serves\n" +
			"Prometheus metrics on /metrics, and /healthz and /readyz; port 0 picks a free port, and\n" +
			"the log line \"watch: serving metrics\" gives the address bound.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.watch(cmd, args, f) },
	}
	addWatchFlags(cmd.Flags(), &f, def)
	return cmd
}

// addWatchFlags defines the flags of `sluice watch` on fl, with the
// defaults of def, to be read into f.
func addWatchFlags(fl *pflag.FlagSet, f *watchFlags, def watch.Config) {
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics, /healthz and /readyz on `HOST:PORT`; port 0 picks a free port, logged at start (default off)")
	fl.DurationVar(&f.debounce, "debounce", def.Debounce, "how long a file must stay quiet before it is ingested; 0s ingests each change as soon as it is seen, so a file may be read while it is written (watch.debounce)")
	fl.DurationVar(&f.maxDelay, "max-delay", def.MaxDelay, "the longest a file that keeps changing is held back; at least --debounce, which raises it when only --debounce is given (watch.maxDelay)")
	fl.DurationVar(&f.rescanInterval, "rescan-interval", def.RescanInterval, "also reconcile the whole folder this often, as a safety net; 0s is off (watch.rescanInterval)")
	fl.BoolVar(&f.verify, "verify", false, "at start and on each rescan, check that the store still holds every chunk the manifest records, and write again those it lost (as run --verify)")
	fl.DurationVar(&f.gracePeriod, "grace-period", def.GracePeriod, "on SIGINT/SIGTERM, how long to let the documents in flight finish; 0s abandons them at once, for the next start to resume (watch.gracePeriod)")
}

// watchFlagOf names the flag of each watch setting, for error messages.
var watchFlagOf = map[string]string{
	"watch.debounce":       "debounce",
	"watch.maxDelay":       "max-delay",
	"watch.rescanInterval": "rescan-interval",
	"watch.gracePeriod":    "grace-period",
}

// watchConfig returns base, the watch settings of the configuration, with
// those given on the command line, validated and with defaults applied.
// The flags mean what the file's settings mean (see settleWatch):
// --debounce 0s and --grace-period 0s turn debouncing and the grace period
// off, --debounce without --max-delay raises max-delay to it, and
// --max-delay 0s is refused unless debouncing is off. An invalid value is
// a usage error naming the flag and its setting.
func watchConfig(fl *pflag.FlagSet, base watch.Config, f watchFlags) (watch.Config, error) {
	for _, d := range []struct {
		flag, setting string
		v             time.Duration
		hint          string
	}{
		{"debounce", "watch.debounce", f.debounce, debounceOffHint},
		{"grace-period", "watch.gracePeriod", f.gracePeriod, graceOffHint},
	} {
		if fl.Changed(d.flag) && d.v < 0 {
			return base, usagef("--%s is %v, which is negative; %s (%s)", d.flag, d.v, d.hint, d.setting)
		}
	}
	// cmp.Or(v, off): v, or off for 0s.
	set := map[string]func(){
		"debounce":        func() { base.Debounce = cmp.Or(f.debounce, watch.NoDebounce) },
		"max-delay":       func() { base.MaxDelay = f.maxDelay },
		"rescan-interval": func() { base.RescanInterval = f.rescanInterval },
		"grace-period":    func() { base.GracePeriod = cmp.Or(f.gracePeriod, watch.NoGracePeriod) },
	}
	for name, apply := range set {
		if fl.Changed(name) {
			apply()
		}
	}
	if fl.Changed("debounce") && !fl.Changed("max-delay") {
		base.MaxDelay = max(base.MaxDelay, base.Debounce)
	}
	// Before the defaults, which would take a max-delay of 0s for 10s.
	if err := base.Validate(); err != nil {
		var cerr *watch.ConfigError
		if errors.As(err, &cerr) && watchFlagOf[cerr.Setting] != "" {
			return base, usagef("%w (--%s)", err, watchFlagOf[cerr.Setting])
		}
		return base, &usageError{err}
	}
	return base.WithDefaults(), nil
}

func (a *app) watch(cmd *cobra.Command, args []string, f watchFlags) error {
	ctx := cmd.Context()
	cfg, err := a.configForDir(args, nil, nil, false)
	if err != nil {
		return err
	}
	wc, err := watchConfig(cmd.Flags(), cfg.Watch, f)
	if err != nil {
		return err
	}
	in, err := a.newIngester(ctx, cfg, ingestMode{verify: f.verify})
	if err != nil {
		return err
	}
	defer in.Close()
	loop, err := watch.New(watch.Options{Pipeline: in.opts, Config: wc, Logger: a.log})
	if errors.Is(err, reader.ErrConfig) {
		return &ConfigError{Err: err}
	}
	if err != nil {
		return err
	}
	defer loop.Close()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	release := relaySignals(stop, loop.Abort)
	defer release()
	if f.metricsAddr != "" {
		shutdown, err := a.serveMetrics(f.metricsAddr, watch.NewMetrics(loop))
		if err != nil {
			return err
		}
		defer shutdown()
	}
	a.warnIfNothingMatches(ctx, cfg.Source, "source.include (such as include: [\"**/*.md\", \"**/*.txt\"])")
	a.warnUnescaped(cfg.Source)
	a.log.Info("watch: reconciling, then watching", "dir", cfg.Source.Dir, "debounce", max(wc.Debounce, 0), "gracePeriod", max(wc.GracePeriod, 0))
	err = loop.Run(runCtx)
	switch {
	case errors.Is(err, watch.ErrAborted):
		return fmt.Errorf("stopped at once on a second signal: %w", err)
	case err != nil:
		return err
	}
	t, st := loop.Totals(), loop.Stats().Snapshot()
	a.log.Info("watch: stopped; the state is saved", "rounds", t.Rounds, "rescans", t.Rescans,
		"documents_processed", st.FilesDone, "documents_failed", st.FilesFailed, "documents_removed", t.Removed,
		"chunks_processed", st.ChunksDone, "tokens_embedded", st.Tokens)
	return nil
}

// relaySignals calls stop on the first SIGINT or SIGTERM and abort on any
// later one, until release is called. release stops listening and waits
// for the relaying goroutine.
func relaySignals(stop, abort func()) (release func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		first := true
		for {
			select {
			case <-done:
				return
			case <-sigs:
				if first {
					first = false
					stop()
				} else {
					abort()
				}
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			wg.Wait()
		})
	}
}

// serveMetrics serves m on addr until the returned shutdown is called.
func (a *app) serveMetrics(addr string, m *watch.Metrics) (shutdown func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--metrics-addr %q: %v; use a free HOST:PORT such as 127.0.0.1:9090", addr, err)
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// The address bound, which port 0 leaves to the system: the log line
	// tells users, and tests, where to connect.
	a.log.Info("watch: serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Warn("watch: metrics server", "err", err)
		}
	}, nil
}
