package cloudsearch

import (
	"context"
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
		sent := 0
		for _, r := range srv.Requests()[before:] {
			if strings.Contains(r.Path, "/docs/search") {
				sent++
			}
		}
		if want := min(tt.wantSent, 2); sent != int(want) || (err == nil) != (tt.maxRetries != NoRetries) {
			t.Errorf("maxRetries %d: a query answered 503 once was sent %d times, err %v; want %d", tt.maxRetries, sent, err, want)
		}
	}
}
