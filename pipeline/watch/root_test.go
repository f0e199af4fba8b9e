package watch

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/reader"
)

// TestRootGone removes or replaces the watched folder itself: the Loop must
// stop with an error naming it, and /healthz must fail, instead of going
// deaf while it reports healthy.
func TestRootGone(t *testing.T) {
	tests := []struct {
		name   string
		change func(root string) error
	}{
		{"deleted and created anew", func(root string) error {
			if err := os.RemoveAll(root); err != nil {
				return err
			}
			if err := os.Mkdir(root, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "b.md"), []byte("Two."), 0o644)
		}},
		{"renamed away and back", func(root string) error {
			if err := os.Rename(root, root+".bak"); err != nil {
				return err
			}
			return os.Rename(root+".bak", root)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.writeFile("a.md", "Alpha.")
			e.start(nil)
			e.waitReady()
			srv := httptest.NewServer(NewMetrics(e.loop).Handler())
			defer srv.Close()
			if code, body := get(t, srv, "/healthz"); code != http.StatusOK {
				t.Fatalf("/healthz while watching = %d %q, want 200", code, body)
			}
			if err := tt.change(e.root); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-e.done:
			case <-time.After(waitLimit):
				t.Fatal("Run went on after its folder went away")
			}
			e.done <- nil // for the cleanup's stop
			var rerr *reader.RootError
			if !errors.Is(err, reader.ErrRootGone) || !errors.As(err, &rerr) || !strings.Contains(err.Error(), e.root) {
				t.Errorf("Run = %v, want an error wrapping a *reader.RootError naming %s", err, e.root)
			}
			code, body := get(t, srv, "/healthz")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, e.root) {
				t.Errorf("/healthz after the folder went away = %d %q, want 503 naming the folder", code, body)
			}
			if !errors.Is(e.loop.Healthy(), reader.ErrRootGone) {
				t.Errorf("Healthy() = %v, want the watcher's error", e.loop.Healthy())
			}
		})
	}
}

// TestHealthyAfterStop checks that Healthy reports a Loop that has stopped.
func TestHealthyAfterStop(t *testing.T) {
	e := newEnv(t)
	e.start(nil)
	e.waitReady()
	l := e.loop
	if err := l.Healthy(); err != nil {
		t.Fatalf("Healthy() while running = %v", err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if err := l.Healthy(); err == nil {
		t.Error("Healthy() = nil after Run returned")
	}
}
