package watch

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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

// TestRootReplaced re-points the watched folder's path (a symbolic link
// switched, as deployments switch current -> release-N) while the folder
// itself stays: the Loop must stop with an error naming the path and leave
// the index as it is, instead of reading the other folder through the path
// (storing its files for the watched folder's events, or deleting the
// watched folder's documents in a rescan). It notices at the next change,
// or at the next periodic rescan if nothing changes.
func TestRootReplaced(t *testing.T) {
	tests := []struct {
		name   string
		rescan time.Duration
		change func(t *testing.T, old string)
	}{
		{"a change in the watched folder", 0, func(t *testing.T, old string) {
			if err := os.WriteFile(filepath.Join(old, "b.md"), []byte("Bravo."), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"no change until the periodic rescan", time.Second, func(*testing.T, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			old := e.root
			e.root = filepath.Join(filepath.Dir(old), "current")
			if err := os.Symlink(filepath.Base(old), e.root); err != nil {
				t.Fatal(err)
			}
			e.cfg.RescanInterval = tt.rescan
			e.writeFile("a.md", "Alpha.")
			e.writeFile("@out/o.md", "Other.")
			e.start(nil)
			e.waitReady()
			srv := httptest.NewServer(NewMetrics(e.loop).Handler())
			defer srv.Close()
			// ln -sfn outside current
			next := e.root + ".new"
			if err := os.Symlink(filepath.Base(e.outside), next); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(next, e.root); err != nil {
				t.Fatal(err)
			}
			tt.change(t, old)
			var err error
			select {
			case err = <-e.done:
			case <-time.After(waitLimit):
				t.Fatal("Run went on after the folder's path was re-pointed")
			}
			e.done <- nil // for the cleanup's stop
			var rerr *reader.RootError
			if !errors.As(err, &rerr) || !rerr.Replaced || !errors.Is(err, reader.ErrRootGone) || !strings.Contains(err.Error(), e.root) {
				t.Errorf("Run = %v, want an error wrapping a *reader.RootError (Replaced) naming %s", err, e.root)
			}
			if code, body := get(t, srv, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "another folder") {
				t.Errorf("/healthz = %d %q, want 503 saying the path leads to another folder", code, body)
			}
			if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"a.md"}) {
				t.Errorf("store holds %q, want [a.md] as it was", got)
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
