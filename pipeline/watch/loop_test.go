package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		setting string // "" for valid
		value   string // the value the message must quote, if any
	}{
		{"defaults", Config{}, "", ""},
		{"no debounce", Config{Debounce: NoDebounce}, "", ""},
		{"no debounce, short max delay", Config{Debounce: NoDebounce, MaxDelay: time.Millisecond}, "", ""},
		{"max delay below debounce", Config{Debounce: 2 * time.Second, MaxDelay: time.Second}, "watch.maxDelay", "1s"},
		{"negative max delay", Config{MaxDelay: -time.Second}, "watch.maxDelay", "-1s"},
		{"negative max delay without debouncing", Config{Debounce: NoDebounce, MaxDelay: -time.Second}, "watch.maxDelay", "-1s"},
		{"negative rescan", Config{RescanInterval: -time.Minute}, "watch.rescanInterval", ""},
		{"rescan too often", Config{RescanInterval: time.Millisecond}, "watch.rescanInterval", ""},
		{"hourly rescan", Config{RescanInterval: time.Hour}, "", ""},
		{"no grace period", Config{GracePeriod: NoGracePeriod}, "", ""},
		{"negative batch", Config{MaxBatch: -1}, "watch.maxBatch", "-1"},
		{"pending below batch", Config{MaxBatch: 50, MaxPending: 10}, "watch.maxPending", "10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.WithDefaults().Validate()
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var cerr *ConfigError
			if !errors.As(err, &cerr) || cerr.Setting != tt.setting || !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate() = %v, want a *ConfigError naming %s", err, tt.setting)
			}
			if !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("message %q does not name %s", err, tt.setting)
			}
			if tt.value != "" && !strings.Contains(err.Error(), "is "+tt.value+";") {
				t.Errorf("message %q does not give the value %s", err, tt.value)
			}
		})
	}
}

// TestConfigOff checks that WithDefaults keeps the settings turned off:
// a zero setting takes its default, NoDebounce and NoGracePeriod stay.
func TestConfigOff(t *testing.T) {
	c := Config{Debounce: NoDebounce, GracePeriod: NoGracePeriod}.WithDefaults()
	if c.Debounce != NoDebounce || c.GracePeriod != NoGracePeriod || c.MaxDelay != DefaultMaxDelay {
		t.Errorf("WithDefaults() = %+v, want debounce and grace period kept off, max delay %v", c, DefaultMaxDelay)
	}
	if got := c.watchOptions().WithDefaults().Debounce; got != reader.NoDebounce {
		t.Errorf("the watcher's debounce is %v, want reader.NoDebounce", got)
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	want := Config{Debounce: 500 * time.Millisecond, MaxDelay: 10 * time.Second, GracePeriod: 10 * time.Second, MaxBatch: 1000, MaxPending: 10000}
	if c != want {
		t.Errorf("DefaultConfig() = %+v, want %+v", c, want)
	}
}

// TestCoalesce checks how events become rounds, without goroutines.
func TestCoalesce(t *testing.T) {
	ch, rm, rs, fl := reader.Changed, reader.Removed, reader.Rescan, reader.Failed
	type ev struct {
		id string
		op reader.EventOp
	}
	tests := []struct {
		name   string
		events []ev
		want   []string // rounds, as "kind changed... -removed... !failed..."
	}{
		{"dedupe keeps the latest op", []ev{{"a", ch}, {"b", ch}, {"a", rm}}, []string{"update b -a"}},
		{"back again", []ev{{"a", rm}, {"a", ch}}, []string{"update a"}},
		{"batches in arrival order", []ev{{"a", ch}, {"b", ch}, {"c", ch}, {"d", rm}}, []string{"update a b c", "update -d"}},
		{"rescan drops the pending ids", []ev{{"a", ch}, {"", rs}, {"b", ch}}, []string{"rescan"}},
		{"overflow becomes a rescan", []ev{{"a", ch}, {"b", ch}, {"c", ch}, {"d", ch}, {"e", ch}, {"f", ch}, {"g", ch}}, []string{"rescan"}},
		{"failed folders", []ev{{"nd", fl}, {"a", ch}, {"b", rm}}, []string{"update a -b !nd"}},
		{"a failed folder back", []ev{{"nd", fl}, {"nd", rm}}, []string{"update -nd"}},
		{"nothing to do", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Loop{cfg: Config{MaxBatch: 3, MaxPending: 6}.WithDefaults(), log: discard()}
			s := &runState{l: l, latest: map[string]reader.Event{}, ready: true}
			for _, e := range tt.events {
				s.add(reader.Event{ID: e.id, Op: e.op})
			}
			var got []string
			for {
				p, ok := s.next()
				if !ok {
					break
				}
				r := p.kind.String()
				for _, id := range p.changed {
					r += " " + id
				}
				for _, id := range p.removed {
					r += " -" + id
				}
				for _, ev := range p.failed {
					r += " !" + ev.ID
				}
				got = append(got, r)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rounds %q, want %q", got, tt.want)
			}
			if l.Pending() != 0 {
				t.Errorf("Pending() = %d after taking every round", l.Pending())
			}
		})
	}
}

// gate wraps a store: it passes the first pass calls to Add, then blocks
// later ones until their context ends, like a slow embedding in flight.
type gate struct {
	pipeline.Writer
	pass    int64
	calls   atomic.Int64
	blocked chan struct{}
	once    sync.Once
}

func newGate(w pipeline.Writer, pass int64) *gate {
	return &gate{Writer: w, pass: pass, blocked: make(chan struct{})}
}

func (g *gate) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if g.calls.Add(1) <= g.pass {
		return g.Writer.Add(ctx, nodes)
	}
	g.once.Do(func() { close(g.blocked) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStopDuringBurst stops the loop while a burst of new files is being
// ingested: gracefully with time to finish, with a grace period too short,
// and with Abort (a second signal). Every way leaves a state from which
// the next start converges on a clean run, with no duplicate chunks.
func TestStopDuringBurst(t *testing.T) {
	tests := []struct {
		name  string
		grace time.Duration
		hold  bool // block writes after a few, so the stop finds work in flight
		abort bool
		want  error
	}{
		{name: "finish within grace", grace: 10 * time.Second},
		{name: "grace period over", grace: time.Millisecond, hold: true},
		{name: "no grace period", grace: NoGracePeriod, hold: true},
		{name: "abort", grace: time.Hour, hold: true, abort: true, want: ErrAborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.cfg.GracePeriod = tt.grace
			e.writeFile("seed.md", "Present before the start.")
			var g *gate
			e.start(func(o *Options) {
				if tt.hold {
					g = newGate(o.Pipeline.Store, 3)
					o.Pipeline.Store = g
					o.Config.MaxBatch = 40
				}
			})
			e.waitReady()
			for i := range 120 {
				e.writeFile(fmt.Sprintf("burst/%02d/doc%03d.md", i%7, i), fmt.Sprintf("Document %d of the burst. It has its own words: w%d.", i, i*7919))
			}
			if tt.hold {
				select {
				case <-g.blocked:
				case <-time.After(waitLimit):
					t.Fatal("the burst never reached the store")
				}
			} else {
				e.log.await(t, 0, "ingesting the burst", func(r Round) bool { return r.Kind == Update })
			}
			if tt.abort {
				e.loop.Abort()
			}
			stopping := time.Now()
			if err := e.stop(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Run = %v, want %v", err, tt.want)
			}
			// The held round never finishes: only abandoning it ends Run.
			// Without a grace period that is at once, not after the default.
			if took := time.Since(stopping); tt.grace == NoGracePeriod && took >= DefaultGracePeriod/2 {
				t.Errorf("the stop took %v without a grace period, want it at once", took)
			}
			e.start(nil)
			e.waitReady()
			e.checkClean()
			if got := len(docsOf(nodesOf(t, e.store))); got != 121 {
				t.Errorf("%d documents after the restart, want 121", got)
			}
		})
	}
}

// failing fails Add with err for the first n calls.
type failing struct {
	pipeline.Writer
	n   atomic.Int64
	err error
}

func (f *failing) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if f.n.Add(-1) >= 0 {
		return nil, f.err
	}
	return f.Writer.Add(ctx, nodes)
}

func TestRoundErrors(t *testing.T) {
	t.Run("transient errors are retried as a rescan", func(t *testing.T) {
		e := newEnv(t)
		e.writeFile("a.md", "Alpha.")
		e.tweak = func(l *Loop) { l.retryIn = 5 * time.Millisecond }
		e.start(func(o *Options) {
			f := &failing{Writer: o.Pipeline.Store, err: errors.New("disk hiccup")}
			f.n.Store(2)
			o.Pipeline.Store = f
		})
		e.waitReady()
		e.wait()
		e.checkClean()
		if e.log.failed() == 0 {
			t.Error("no round failed; the fake store did not fail")
		}
	})
	t.Run("permanent errors stop the loop", func(t *testing.T) {
		e := newEnv(t)
		e.writeFile("a.md", "Alpha.")
		e.start(func(o *Options) {
			f := &failing{Writer: o.Pipeline.Store, err: &sink.DimensionError{}}
			f.n.Store(1 << 30)
			o.Pipeline.Store = f
		})
		var err error
		select {
		case err = <-e.done:
		case <-time.After(waitLimit):
			t.Fatal("Run did not stop on a permanent error")
		}
		e.done <- nil // for the cleanup's stop
		if !errors.Is(err, sink.ErrDimensionMismatch) {
			t.Errorf("Run = %v, want an error wrapping sink.ErrDimensionMismatch", err)
		}
		if e.loop.Ready() {
			t.Error("Ready() after the initial reconciliation failed")
		}
	})
}

func TestRunTwiceAndClose(t *testing.T) {
	e := newEnv(t)
	e.open()
	l, err := New(Options{Pipeline: e.options(e.store, e.state)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := l.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Errorf("Run after Close = %v, want ErrRunning", err)
	}
}

// stoppedSource is a watcher that closes its events when ctx is done, as
// reader.Watcher does, and then closes closed.
type stoppedSource struct{ closed chan struct{} }

func (s stoppedSource) Run(ctx context.Context, out chan<- reader.Event) error {
	defer close(s.closed) // after out: deferred calls run last in, first out
	defer close(out)
	<-ctx.Done()
	return nil
}

func (stoppedSource) Close() error { return nil }

func (stoppedSource) Waiting() int { return 0 }

func (stoppedSource) Unwatched() int { return 0 }

func (stoppedSource) CheckRoot() error { return nil }

// TestCancelWhileBusyIsGraceful cancels Run while its goroutine is busy
// (in OnRound), and keeps it busy until the watcher has closed its events,
// so that when the goroutine selects again the closed events and ctx.Done
// are both ready. Either case select picks, the stop is graceful, not a
// watcher failure. select picks at random among ready cases: each
// iteration takes the closed-events case with probability 1/2, so treating
// that close as a failure fails the test all but surely.
func TestCancelWhileBusyIsGraceful(t *testing.T) {
	for i := range 64 {
		ctx, cancel := context.WithCancel(context.Background())
		src := stoppedSource{closed: make(chan struct{})}
		l := &Loop{cfg: DefaultConfig(), log: discard(), w: src, retryIn: time.Hour, abort: make(chan struct{})}
		l.opts.OnRound = func(Round) {
			cancel()
			<-src.closed
		}
		if err := l.Run(ctx); err != nil {
			t.Fatalf("stop %d: Run = %v, want nil after a graceful stop", i, err)
		}
		if err := l.Healthy(); !errors.Is(err, errStopped) {
			t.Fatalf("stop %d: Healthy() = %v, want errStopped after a graceful stop", i, err)
		}
	}
}

func TestNewRejects(t *testing.T) {
	e := newEnv(t)
	e.open()
	tests := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"no state", func(o *Options) { o.Pipeline.State = nil }, "State is required"},
		{"no store", func(o *Options) { o.Pipeline.Store = nil }, "Store is required"},
		{"dry run", func(o *Options) { o.Pipeline.DryRun = true }, "dry run"},
		{"bad setting", func(o *Options) { o.Config.MaxBatch = -1 }, "watch.maxBatch"},
		{"missing folder", func(o *Options) { o.Pipeline.Reader.Dir = e.root + "/nope" }, "source.dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Pipeline: e.options(e.store, e.state)}
			tt.mod(&o)
			l, err := New(o)
			if err == nil {
				l.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestRemoveGone checks that watch mode removes documents whose file is
// gone from the store and the manifest (pipeline.RemoveDocument tests the
// order), and counts as removed only those the manifest held as documents,
// as cleared only those it held as dead letters.
func TestRemoveGone(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.writeFile("b.md", "Bravo.")
	e.open()
	ctx := context.Background()
	opts := e.options(e.store, e.state)
	if _, err := pipeline.Run(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if err := e.state.Fail(ctx, "bad.md", "invalid UTF-8", time.Now()); err != nil {
		t.Fatal(err)
	}
	asked := &docsAsked{Store: e.store}
	opts.Store = asked
	removed, cleared, err := removeGone(ctx, opts, []string{"a.md", "never-there.md", "bad.md"})
	// never-there.md, unknown to the manifest, is neither: a file removed
	// before a round read it, of which the round log must not count a
	// cleared failure, nor ask the store to delete anything.
	if err != nil || !slices.Equal(removed, []string{"a.md"}) || !slices.Equal(cleared, []string{"bad.md"}) {
		t.Fatalf("removeGone = %q, %q, %v; want [a.md], [bad.md], nil", removed, cleared, err)
	}
	if slices.Contains(asked.ids, "never-there.md") || !slices.Contains(asked.ids, "a.md") {
		t.Errorf("store asked to delete the documents %q, want a.md and not never-there.md", asked.ids)
	}
	if fails, err := e.state.Failures(ctx); err != nil || len(fails) != 0 {
		t.Errorf("dead-letter table %+v (%v), want it empty", fails, err)
	}
	if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"b.md"}) {
		t.Errorf("store holds %q, want [b.md]", got)
	}
	ids, err := e.state.DocIDs(ctx)
	if err != nil || !slices.Equal(ids, []string{"b.md"}) {
		t.Errorf("manifest holds %q (%v), want [b.md]", ids, err)
	}
}

// docsAsked records the documents a local store is asked to delete.
type docsAsked struct {
	*local.Store
	ids []string
}

func (d *docsAsked) DeleteDocs(ctx context.Context, refDocIDs []string) error {
	d.ids = append(d.ids, refDocIDs...)
	return d.Store.DeleteDocs(ctx, refDocIDs)
}

func (d *docsAsked) Delete(ctx context.Context, refDocID string) error {
	d.ids = append(d.ids, refDocID)
	return d.Store.Delete(ctx, refDocID)
}

func TestPeriodicRescan(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.cfg.RescanInterval = time.Second
	e.start(nil)
	e.waitReady()
	e.log.await(t, 1, "from the periodic rescan", func(r Round) bool { return r.Kind == Rescan && r.Err == nil })
	e.checkClean()
}

// TestConfigYAML decodes the `watch` section as the configuration file
// spells it.
func TestConfigYAML(t *testing.T) {
	const doc = `
debounce: 250ms
maxDelay: 5s
rescanInterval: 1h
gracePeriod: 20s
maxBatch: 500
maxPending: 20000
`
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	want := Config{Debounce: 250 * time.Millisecond, MaxDelay: 5 * time.Second, RescanInterval: time.Hour,
		GracePeriod: 20 * time.Second, MaxBatch: 500, MaxPending: 20000}
	if c != want {
		t.Errorf("decoded %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}
