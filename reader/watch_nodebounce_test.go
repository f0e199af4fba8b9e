package reader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDebounceOff drives a Watcher without debouncing (NoDebounce) with
// explicit times: a change is due as soon as it is seen, changes handled
// together still give one event per path, and nothing is left due after
// a flush, so Run's timer is not armed again until the next change (no
// busy loop).
func TestDebounceOff(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a", "b.md": "b"})
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: NoDebounce})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	steps := []struct {
		touch []string
		at    time.Duration
		want  []string
	}{
		{touch: []string{"a.md"}, at: 0, want: []string{"changed a.md"}},
		{touch: []string{"a.md", "b.md", "a.md"}, at: ms, want: []string{"changed b.md", "changed a.md"}},
		{at: 2 * ms, want: nil},
		{touch: []string{"b.md"}, at: 3 * ms, want: []string{"changed b.md"}},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		for _, id := range s.touch {
			w.touch(id, now)
			if !w.nextDue.Equal(now) {
				t.Fatalf("step %d: %s due at %v, want at once (%v)", i, id, w.nextDue, now)
			}
		}
		w.flush(now)
		var got []string
		for ; w.head < len(w.ready); w.pop() {
			got = append(got, w.ready[w.head].Op.String()+" "+w.ready[w.head].ID)
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d: %q, want %q", i, got, s.want)
		}
		if len(w.pending) != 0 || !w.nextDue.IsZero() {
			t.Errorf("step %d: %d ids still pending, next due %v; want none", i, len(w.pending), w.nextDue)
		}
	}
}

// TestWatchDebounceOff runs a Watcher without debouncing: each change is
// sent, and Waiting falls back to 0.
func TestWatchDebounceOff(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: NoDebounce})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Event)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, out) }()
	defer func() {
		cancel()
		for range out {
		}
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	}()
	for _, name := range []string{"a.md", "b.md"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(waitLimit)
	wait:
		for {
			select {
			case ev := <-out:
				if ev.ID == name && ev.Op == Changed {
					break wait
				}
			case <-timeout:
				t.Fatalf("no event for %s within %v", name, waitLimit)
			}
		}
	}
	deadline := time.Now().Add(waitLimit)
	for w.Waiting() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Waiting() = %d, want 0 once every change is sent", w.Waiting())
		}
		select {
		case <-out: // a repeated event (a create, then a write)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
