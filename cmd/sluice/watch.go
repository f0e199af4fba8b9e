package main

import (
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
}

func (a *app) watchCommand() *cobra.Command {
	var f watchFlags
	def := watch.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "watch [DIR]",
		Short: "Keep the vector store in step with a folder, reacting to file changes",
		Long: "Reconcile the folder with the store (like `sluice run`), then watch it: files created,\n" +
			"changed, renamed or deleted are ingested or removed within about a second of their last\n" +
			"write (--debounce). DIR overrides source.dir. The first SIGINT or SIGTERM stops taking\n" +
			"changes, lets the documents in flight finish for up to --grace-period and exits 0; a second\n" +
			"one exits at once (code 1). Either way the state stays consistent and the next start\n" +
			"resumes. --metrics-addr serves Prometheus metrics on /metrics, and /healthz and /readyz.",
		Args: positionalArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return a.watch(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics, /healthz and /readyz on `HOST:PORT` (default off)")
	fl.DurationVar(&f.debounce, "debounce", def.Debounce, "how long a file must stay quiet before it is ingested (watch.debounce)")
	fl.DurationVar(&f.maxDelay, "max-delay", def.MaxDelay, "the longest a file that keeps changing is held back (watch.maxDelay)")
	fl.DurationVar(&f.rescanInterval, "rescan-interval", def.RescanInterval, "also reconcile the whole folder this often, as a safety net; 0 is off (watch.rescanInterval)")
	fl.DurationVar(&f.gracePeriod, "grace-period", def.GracePeriod, "on SIGINT/SIGTERM, how long to let the documents in flight finish (watch.gracePeriod)")
	return cmd
}

// watchFlagOf names the flag of each watch setting, for error messages.
var watchFlagOf = map[string]string{
	"watch.debounce":       "debounce",
	"watch.maxDelay":       "max-delay",
	"watch.rescanInterval": "rescan-interval",
	"watch.gracePeriod":    "grace-period",
}

// watchConfig returns base with the settings given on the command line.
func watchConfig(fl *pflag.FlagSet, base watch.Config, f watchFlags) watch.Config {
	set := map[string]func(){
		"debounce":        func() { base.Debounce = f.debounce },
		"max-delay":       func() { base.MaxDelay = f.maxDelay },
		"rescan-interval": func() { base.RescanInterval = f.rescanInterval },
		"grace-period":    func() { base.GracePeriod = f.gracePeriod },
	}
	for name, apply := range set {
		if fl.Changed(name) {
			apply()
		}
	}
	if fl.Changed("debounce") && !fl.Changed("max-delay") {
		base.MaxDelay = max(base.MaxDelay, base.Debounce)
	}
	return base.WithDefaults()
}

func (a *app) watch(cmd *cobra.Command, args []string, f watchFlags) error {
	ctx := cmd.Context()
	cfg, err := a.configForDir(args, nil, nil)
	if err != nil {
		return err
	}
	wc := watchConfig(cmd.Flags(), cfg.Watch, f)
	if err := wc.Validate(); err != nil {
		var cerr *watch.ConfigError
		if errors.As(err, &cerr) {
			return usagef("%w (--%s)", err, watchFlagOf[cerr.Setting])
		}
		return &usageError{err}
	}
	in, err := a.newIngester(ctx, cfg, false, false)
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
	a.log.Info("watch: reconciling, then watching", "dir", cfg.Source.Dir, "debounce", wc.Debounce)
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
