package cloudsearch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// failingTransport answers every request 503 and counts them.
type failingTransport struct{ sent atomic.Int32 }

func (f *failingTransport) Do(req *http.Request) (*http.Response, error) {
	f.sent.Add(1)
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{"error":{"code":"","message":"busy"}}`)), Request: req}, nil
}

// countRequests counts the requests to a path ending in suffix that the
// server received since from (an index into its request log).
func countRequests(srv *searchtest.Server, from int, suffix string) int {
	n := 0
	for _, r := range srv.Requests()[from:] {
		if strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// TestNoRetriesIndexCheckAndQuery: with maxRetries -1 the index check New
// makes and a query are sent once when answered 503, and with the default
// they are retried.
func TestNoRetriesIndexCheckAndQuery(t *testing.T) {
	for _, tt := range []struct {
		maxRetries int
		wantSent   int32
	}{{NoRetries, 1}, {0, DefaultMaxRetries + 1}, {2, 3}} {
		ft := &failingTransport{}
		cfg := testConfig("https://svc.search.windows.net")
		cfg.MaxRetries = tt.maxRetries
		_, err := New(context.Background(), cfg, WithTransport(ft), WithGetenv(envOf(map[string]string{EnvKey: testKey})), WithRetryDelay(time.Microsecond))
		if err == nil || ft.sent.Load() != tt.wantSent {
			t.Errorf("maxRetries %d: index check sent %d times (New: %v); want %d and an error", tt.maxRetries, ft.sent.Load(), err, tt.wantSent)
		}

		srv, url := searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrNone(t)})
		s, err := openStore(t, url, func(c *Config) { c.MaxRetries = tt.maxRetries })
		if err != nil {
			t.Fatal(err)
		}
		srv.FailNext(1, http.StatusServiceUnavailable, 0)
		before := len(srv.Requests())
		_, err = s.Query(context.Background(), sink.Query{Embedding: make([]float32, testDims), TopK: 1})
		sent := countRequests(srv, before, "/docs/search")
		if want := min(tt.wantSent, 2); sent != int(want) || (err == nil) != (tt.maxRetries != NoRetries) {
			t.Errorf("maxRetries %d: a query answered 503 once was sent %d times, err %v; want %d", tt.maxRetries, sent, err, want)
		}
	}
}

// TestMaxRetriesRange checks the values of maxRetries: 0 is the default,
// -1 turns retries off, and the error for the others says so.
func TestMaxRetriesRange(t *testing.T) {
	tests := []struct {
		in, want int
		bad      bool
	}{
		{0, DefaultMaxRetries, false},
		{-1, NoRetries, false},
		{1, 1, false},
		{20, 20, false},
		{21, 0, true},
		{-2, 0, true},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		c.IndexName = "docs"
		c.MaxRetries = tt.in
		err := c.Validate()
		if tt.bad {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != "sink.cloudsearch.maxRetries" || !strings.Contains(err.Error(), "0 = default (5), -1 = no retries, at most 20") {
				t.Errorf("maxRetries %d: Validate() = %v, want an error naming the setting and its range", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("maxRetries %d: Validate() = %v", tt.in, err)
		}
		if got := (Config{MaxRetries: tt.in}).WithDefaults().MaxRetries; got != tt.want {
			t.Errorf("maxRetries %d: WithDefaults gives %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestNoRetries checks that maxRetries -1 sends each request and each
// document once, for a failed request (500), a throttled one (429) and a
// document with a retryable status (409), while 0 still means the default.
func TestNoRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		fault      func(srv *searchtest.Server, nodes []sink.Node)
		wantSent   int  // docs/index requests
		wantOK     bool // Add succeeds
	}{
		{"500, no retries", NoRetries, func(srv *searchtest.Server, _ []sink.Node) {
			srv.FailNext(1, http.StatusInternalServerError, 0)
		}, 1, false},
		{"429, no retries", NoRetries, func(srv *searchtest.Server, _ []sink.Node) {
			srv.FailNext(1, http.StatusTooManyRequests, 0)
		}, 1, false},
		{"409 document, no retries", NoRetries, func(srv *searchtest.Server, n []sink.Node) {
			srv.FailKeys(http.StatusConflict, 1, n[0].ID)
		}, 1, false},
		{"500, default retries", 0, func(srv *searchtest.Server, _ []sink.Node) {
			srv.FailNext(DefaultMaxRetries, http.StatusInternalServerError, 0)
		}, DefaultMaxRetries + 1, true},
		{"409 document, default retries", 0, func(srv *searchtest.Server, n []sink.Node) {
			srv.FailKeys(http.StatusConflict, DefaultMaxRetries, n[0].ID)
		}, DefaultMaxRetries + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.MaxRetries = tt.maxRetries })
			nodes := makeNodes("a.md", 2)
			before := len(srv.Requests())
			tt.fault(srv, nodes)
			_, err := s.Add(context.Background(), nodes)
			sent := countRequests(srv, before, "/docs/index")
			if sent != tt.wantSent {
				t.Errorf("%d docs/index requests, want %d", sent, tt.wantSent)
			}
			if tt.wantOK {
				if err != nil {
					t.Fatalf("Add: %v, want success after the retries", err)
				}
				return
			}
			if !errors.Is(err, sink.ErrWrite) {
				t.Fatalf("Add: %v, want sink.ErrWrite", err)
			}
			var we *sink.WriteError
			if !errors.As(err, &we) {
				return
			}
			for id, e := range we.Failed {
				if de := (*DocumentError)(nil); errors.As(e, &de) && de.Attempts != 1 {
					t.Errorf("document %s failed after %d attempts, want 1", id, de.Attempts)
				}
			}
		})
	}
}
