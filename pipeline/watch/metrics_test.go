package watch

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/pipeline"
)

// reporting is an embedder with HTTP-client statistics.
type reporting struct {
	embedder.Embedder
	stats embedder.Stats
}

func (r reporting) Stats() embedder.Stats { return r.stats }

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// samples parses the sluice_ series of a scrape into name → value.
func samples(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "sluice_") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("bad sample %q: %v", sc.Text(), err)
		}
		out[name] = v
	}
	return out
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.writeFile("b.md", "Bravo.")
	e.open()
	opts := Options{Pipeline: e.options(e.store, e.state), Config: e.cfg}
	opts.Pipeline.Embedder = reporting{Embedder: opts.Pipeline.Embedder, stats: embedder.Stats{Requests: 9, Throttled: 7, Retries: 5, Failures: 1}}
	l, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewMetrics(l).Handler())
	defer srv.Close()

	if code, _ := get(t, srv, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code, _ := get(t, srv, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the initial reconciliation = %d, want 503", code)
	}

	e.log = &roundLog{notify: make(chan struct{}, 1)}
	l.opts.OnRound = e.log.add
	e.loop, e.done = l, make(chan error, 1)
	ctx, cancel := contextWithCancel()
	e.cancel = cancel
	go func() { e.done <- l.Run(ctx) }()
	e.waitReady()

	if code, _ := get(t, srv, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the initial reconciliation = %d, want 200", code)
	}
	code, text := get(t, srv, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	got := samples(t, text)
	for name, want := range map[string]float64{
		"sluice_documents_processed_total":  2,
		"sluice_documents_failed_total":     0,
		"sluice_chunks_processed_total":     2,
		"sluice_embedding_requests_total":   9,
		"sluice_embedding_throttled_total":  7,
		"sluice_embedding_retries_total":    5,
		"sluice_embedding_failures_total":   1,
		"sluice_watch_pending_documents":    0,
		"sluice_watch_debouncing_documents": 0,
		"sluice_watch_ready":                1,
		"sluice_watch_rescans_total":        1,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if got["sluice_tokens_embedded_total"] <= 0 || got["sluice_bytes_read_total"] != 12 {
		t.Errorf("tokens %v, bytes %v: want tokens > 0 and 12 bytes", got["sluice_tokens_embedded_total"], got["sluice_bytes_read_total"])
	}
	if got["sluice_watch_last_sync_timestamp_seconds"] <= 0 {
		t.Error("sluice_watch_last_sync_timestamp_seconds not set after a successful round")
	}
	if !strings.Contains(text, "go_goroutines") || !strings.Contains(text, "process_cpu_seconds_total") {
		t.Error("the Go and process collectors are missing")
	}
	testenv.Golden(t, filepath.Join("testdata", "metrics.golden"), []byte(describe(text)))
}

// describe keeps the HELP and TYPE lines of the sluice_ series: the shape
// dashboards depend on.
func describe(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "# HELP sluice_") || strings.HasPrefix(line, "# TYPE sluice_") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestInflightSettles checks that sluice_pipeline_inflight_documents counts
// the round in flight only: a failed or abandoned round leaves it at 0.
func TestInflightSettles(t *testing.T) {
	inflight := func(t *testing.T, srv *httptest.Server) float64 {
		t.Helper()
		_, text := get(t, srv, "/metrics")
		return samples(t, text)["sluice_pipeline_inflight_documents"]
	}
	t.Run("failed round", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.writeFile("a.md", "Alpha.")
		e.writeFile("b.md", "Bravo.")
		e.tweak = func(l *Loop) { l.retryIn = time.Hour } // no retry while the test looks
		e.start(func(o *Options) {
			f := &failing{Writer: o.Pipeline.Store, err: errors.New("disk hiccup")}
			f.n.Store(1)
			o.Pipeline.Store = f
		})
		srv := httptest.NewServer(NewMetrics(e.loop).Handler())
		defer srv.Close()
		e.log.await(t, 0, "failing", func(r Round) bool { return r.Err != nil })
		if got := inflight(t, srv); got != 0 {
			t.Errorf("in flight after a failed round = %v, want 0", got)
		}
	})
	t.Run("abandoned round", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.cfg.GracePeriod = time.Millisecond
		e.writeFile("a.md", "Alpha.")
		var g *gate
		e.start(func(o *Options) {
			g = newGate(o.Pipeline.Store, 0)
			o.Pipeline.Store = g
		})
		srv := httptest.NewServer(NewMetrics(e.loop).Handler())
		defer srv.Close()
		select {
		case <-g.blocked:
		case <-time.After(waitLimit):
			t.Fatal("the round never reached the store")
		}
		if got := inflight(t, srv); got != 1 {
			t.Errorf("in flight while a round is stuck = %v, want 1", got)
		}
		if err := e.stop(); err != nil {
			t.Fatal(err)
		}
		if got := inflight(t, srv); got != 0 {
			t.Errorf("in flight after the round was abandoned = %v, want 0", got)
		}
	})
}

// TestPendingWhileRescanDue checks that sluice_watch_pending_documents
// counts a full reconciliation that is due or running as 1: while a failed
// round waits for its retry, the changes seen meanwhile are left to the
// rescan and are not in the index, so the three gauges must not all read 0.
func TestPendingWhileRescanDue(t *testing.T) {
	gauges := func(t *testing.T, srv *httptest.Server) [3]float64 {
		t.Helper()
		_, text := get(t, srv, "/metrics")
		m := samples(t, text)
		return [3]float64{m["sluice_watch_debouncing_documents"], m["sluice_watch_pending_documents"], m["sluice_pipeline_inflight_documents"]}
	}
	t.Run("failed round waiting for its retry", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.writeFile("a.md", "Alpha.")
		e.tweak = func(l *Loop) { l.retryIn = time.Hour } // no retry while the test looks
		e.start(func(o *Options) {
			f := &failing{Writer: o.Pipeline.Store, err: errors.New("disk full")}
			f.n.Store(1)
			o.Pipeline.Store = f
		})
		srv := httptest.NewServer(NewMetrics(e.loop).Handler())
		defer srv.Close()
		e.log.await(t, 0, "failing", func(r Round) bool { return r.Err != nil })
		if got, want := gauges(t, srv), [3]float64{0, 1, 0}; got != want {
			t.Errorf("debouncing, pending, in flight = %v while the rescan waits for its retry, want %v", got, want)
		}
		if got := e.loop.Pending(); got != 1 {
			t.Errorf("Pending() = %d, want 1", got)
		}
	})
	t.Run("rescan in flight", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.cfg.GracePeriod = time.Millisecond
		e.writeFile("a.md", "Alpha.")
		var g *gate
		e.start(func(o *Options) {
			g = newGate(o.Pipeline.Store, 0)
			o.Pipeline.Store = g
		})
		select {
		case <-g.blocked:
		case <-time.After(waitLimit):
			t.Fatal("the round never reached the store")
		}
		if got := e.loop.Pending(); got != 1 {
			t.Errorf("Pending() = %d while the initial reconciliation runs, want 1", got)
		}
	})
	t.Run("caught up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.writeFile("a.md", "Alpha.")
		e.start(nil)
		srv := httptest.NewServer(NewMetrics(e.loop).Handler())
		defer srv.Close()
		e.waitReady()
		if got, want := gauges(t, srv), [3]float64{0, 0, 0}; got != want {
			t.Errorf("debouncing, pending, in flight = %v after the initial reconciliation, want %v", got, want)
		}
	})
}

// TestMetricsRegistry checks both uses of Registry: a collector a program
// registers on it is served by Handler's /metrics, and the program's own
// endpoint serves Sluice's series by gathering it with its registry.
func TestMetricsRegistry(t *testing.T) {
	l := &Loop{cfg: DefaultConfig(), log: discard(), w: stoppedSource{}, abort: make(chan struct{})}
	l.opts.Pipeline.Stats = new(pipeline.Stats)
	l.opts.Pipeline.Stats.FilesDone.Store(3)
	m := NewMetrics(l)
	counter := func(name string, v float64) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "A series of the embedding program."})
		c.Add(v)
		return c
	}
	m.Registry().MustRegister(counter("app_jobs_total", 2))
	own := prometheus.NewRegistry()
	own.MustRegister(counter("app_requests_total", 5))

	tests := []struct {
		name    string
		handler http.Handler
		path    string
		want    []string // sample lines besides Sluice's
	}{
		{"Handler serves collectors added to Registry", m.Handler(), "/metrics", []string{"app_jobs_total 2"}},
		{"a program's endpoint gathers Registry", promhttp.HandlerFor(prometheus.Gatherers{own, m.Registry()}, promhttp.HandlerOpts{}), "/",
			[]string{"app_jobs_total 2", "app_requests_total 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			code, text := get(t, srv, tt.path)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d", tt.path, code)
			}
			if got := samples(t, text)["sluice_documents_processed_total"]; got != 3 {
				t.Errorf("sluice_documents_processed_total = %v, want 3", got)
			}
			for _, line := range tt.want {
				if !strings.Contains(text, "\n"+line+"\n") {
					t.Errorf("%q missing from:\n%s", line, text)
				}
			}
		})
	}
}
