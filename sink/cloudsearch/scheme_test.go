package cloudsearch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// TestSchemeMismatch points the store at a server with the wrong scheme:
// an https:// endpoint whose server speaks plain HTTP (a devserver given as
// https://) fails at once, not retried, saying to write http://; an
// http:// endpoint whose server speaks HTTPS, which answers 400, is a
// configuration error of the endpoint (exit 2) that says to write
// https://, not a bare "400 Bad Request". Both name where the endpoint
// came from, and stop a write (sink.ErrUnavailable).
func TestSchemeMismatch(t *testing.T) {
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "not reached", http.StatusTeapot)
	})
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	tests := []struct {
		name     string
		endpoint string
		is       error
		words    []string
	}{
		{"https to plain HTTP", "https://" + strings.TrimPrefix(plain.URL, "http://"), ErrConnection,
			[]string{"plain HTTP", "not retried", "with http://", "sink.cloudsearch.endpoint"}},
		{"http to HTTPS", tlsSrv.URL[:len("http")] + tlsSrv.URL[len("https"):], ErrConfig,
			[]string{"sink.cloudsearch.endpoint: http://", "speaks HTTPS", "write the endpoint with https://, as https://" + strings.TrimPrefix(tlsSrv.URL, "https://")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(tt.endpoint)
			cfg.IndexManagement = NoValidation
			s, log := loggedStore(t, cfg, testHTTP(t))
			for i, call := range []func() error{
				func() error { _, err := s.GetIndex(context.Background()); return err },
				func() error { _, err := s.Add(context.Background(), makeNodes("a.md", 2)); return err },
			} {
				err := call()
				if i == 1 && tt.is == ErrConfig && errors.Is(err, ErrConnection) && strings.Contains(err.Error(), "connection reset by peer") {
					// The HTTPS server answered 400 and closed the
					// connection before it read the upload's body, so
					// every attempt saw a reset instead of the 400 (as a
					// loaded machine makes likely): the store cannot tell
					// this from another reset, and says it is unreachable.
					continue
				}
				if !errors.Is(err, tt.is) || !errors.Is(err, sink.ErrUnavailable) {
					t.Fatalf("error %v, want %v and sink.ErrUnavailable", err, tt.is)
				}
				for _, w := range tt.words {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				var ce *ConnectionError
				if errors.As(err, &ce) && ce.Attempts > 1 {
					t.Errorf("error after %d attempts, want 1 (not retried)", ce.Attempts)
				}
			}
			// An HTTPS server closes the connection after its 400, and may
			// do so while an upload's body is still being written: the
			// client then sees a reset instead of the answer, which is
			// retried, as any reset is, until the 400 is read.
			for _, w := range warnLines(log.String()) {
				if tt.is == ErrConnection || !strings.Contains(w, "connection reset by peer") {
					t.Errorf("warning %q, want none (nothing retried)", w)
				}
			}
			if hits.Load() != 0 {
				t.Errorf("the handler was reached %d times", hits.Load())
			}
		})
	}
}
