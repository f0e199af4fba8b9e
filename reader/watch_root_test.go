package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchRootReplaced re-points the root's path at another folder while
// the watched folder stays where it was: no event says so, but CheckRoot
// does, and Run ends with a *RootError (Replaced) at the next change
// instead of reporting a change in the old folder, which the pipeline
// would read through the path from the new one.
func TestWatchRootReplaced(t *testing.T) {
	tests := []struct {
		name   string
		root   string // the path watched, below the test's folder
		old    string // the folder watched, where it is after the change
		change func(base string) error
	}{
		{"symbolic link switched", "docs", "v1", func(base string) error {
			// ln -sfn v2 docs, atomically.
			if err := os.Symlink("v2", filepath.Join(base, "docs.new")); err != nil {
				return err
			}
			return os.Rename(filepath.Join(base, "docs.new"), filepath.Join(base, "docs"))
		}},
		{"folder above renamed, another put in its place", "par/docs", "par.old/docs", func(base string) error {
			if err := os.Rename(filepath.Join(base, "par"), filepath.Join(base, "par.old")); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(base, "par", "docs"), 0o755)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			writeTree(t, base, map[string]string{"v1/a.md": "one", "v2/a.md": "other", "v2/c.md": "c", "docs": "->v1", "par/docs/a.md": "one"})
			root := filepath.Join(base, filepath.FromSlash(tt.root))
			w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: testDebounce})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.CheckRoot(); err != nil {
				t.Fatalf("CheckRoot() before the change = %v", err)
			}
			out := make(chan Event)
			done := make(chan error, 1)
			go func() { done <- w.Run(context.Background(), out) }()
			if err := tt.change(base); err != nil {
				t.Fatal(err)
			}
			var rerr *RootError
			if err := w.CheckRoot(); !errors.As(err, &rerr) || !rerr.Replaced || !errors.Is(err, ErrRootGone) {
				t.Errorf("CheckRoot() after the change = %v, want a *RootError (Replaced)", err)
			}
			// A change in the folder still watched, which the path no longer
			// leads to.
			old := filepath.Join(base, filepath.FromSlash(tt.old))
			if err := os.WriteFile(filepath.Join(old, "b.md"), []byte("two"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := eventsUntilClosed(t, out, "Run went on after its path was re-pointed"); len(got) != 0 {
				t.Errorf("events %q, want none: the path leads to another folder", got)
			}
			err = <-done
			if !errors.As(err, &rerr) || !errors.Is(err, ErrRootGone) {
				t.Fatalf("Run = %v, want a *RootError wrapping ErrRootGone", err)
			}
			if rerr.Dir != root || !rerr.Replaced || rerr.Renamed {
				t.Errorf("RootError = %+v, want Dir %q, Replaced", rerr, root)
			}
			if msg := err.Error(); !strings.Contains(msg, root) || !strings.Contains(msg, "now leads to another folder") {
				t.Errorf("message %q does not name the folder and what happened", msg)
			}
		})
	}
}

// TestWatchRootCheckKeepsFolder checks that CheckRoot accepts the watched
// folder however its path is spelled, and gives the removal of the path
// to Run's own events (TestWatchRootGone).
func TestWatchRootCheckKeepsFolder(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{"v1/a.md": "one", "docs": "->v1"})
	for _, dir := range []string{filepath.Join(base, "docs"), filepath.Join(base, "v1"), filepath.Join(base, "v1", ".")} {
		w, err := NewWatcher(Config{Dir: dir}, WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.CheckRoot(); err != nil {
			t.Errorf("CheckRoot() of %s = %v, want nil", dir, err)
		}
		w.Close()
	}
	w, err := NewWatcher(Config{Dir: filepath.Join(base, "docs")}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.Remove(filepath.Join(base, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckRoot(); err != nil {
		t.Errorf("CheckRoot() with nothing at the path = %v, want nil", err)
	}
}

// TestWatchRootReplacedQuiet re-points the root's path at another folder
// and changes nothing in the folder watched, as after `ln -sfn release-2
// current`, when the old release is never written again: Run must still
// end with a *RootError (Replaced), found by its periodic check, instead
// of watching the old folder while the path leads to the new one.
func TestWatchRootReplacedQuiet(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{"v1/a.md": "one", "v2/a.md": "other", "docs": "->v1"})
	root := filepath.Join(base, "docs")
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: testDebounce, RootCheck: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := make(chan Event)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background(), out) }()
	// ln -sfn v2 docs, atomically.
	if err := os.Symlink("v2", filepath.Join(base, "docs.new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(base, "docs.new"), root); err != nil {
		t.Fatal(err)
	}
	if got := eventsUntilClosed(t, out, "Run went on watching the old folder after its path was re-pointed"); len(got) != 0 {
		t.Errorf("events %q, want none", got)
	}
	var rerr *RootError
	if err := <-done; !errors.As(err, &rerr) || !rerr.Replaced || rerr.Dir != root {
		t.Fatalf("Run = %v, want a *RootError (Replaced) naming %s", err, root)
	}
}

// eventsUntilClosed returns the events received on out ("Op id") until Run
// closes it, and fails the test with stuck if that takes over waitLimit.
func eventsUntilClosed(t *testing.T, out <-chan Event, stuck string) []string {
	t.Helper()
	var got []string
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-out:
			if !ok {
				return got
			}
			got = append(got, ev.Op.String()+" "+ev.ID)
		case <-timeout:
			t.Fatal(stuck)
		}
	}
}
