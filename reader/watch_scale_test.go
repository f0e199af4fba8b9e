package reader

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestPathSet(t *testing.T) {
	s := newPathSet()
	for _, p := range []string{"", "a/b/x.md", "a/b/y.md", "a/c.md", "ab/d.md", "x.md", "x.md/inner.md", "a/b"} {
		s.add(p)
	}
	s.add("a/c.md") // twice: still one member
	tests := []struct {
		dir  string
		want []string
	}{
		{"", []string{"", "a/b", "a/b/x.md", "a/b/y.md", "a/c.md", "ab/d.md", "x.md", "x.md/inner.md"}},
		{"a", []string{"a/b", "a/b/x.md", "a/b/y.md", "a/c.md"}}, // not ab/d.md
		{"a/b", []string{"a/b", "a/b/x.md", "a/b/y.md"}},
		{"x.md", []string{"x.md", "x.md/inner.md"}}, // a stale file id with a folder's ids below it
		{"a/c.md", []string{"a/c.md"}},
		{"nowhere", nil},
	}
	for _, tt := range tests {
		if got := sorted(s.under(tt.dir)); !slices.Equal(got, tt.want) {
			t.Errorf("under(%q) = %q, want %q", tt.dir, got, tt.want)
		}
		if got, want := s.any(tt.dir), len(tt.want) > 0; got != want {
			t.Errorf("any(%q) = %v, want %v", tt.dir, got, want)
		}
	}
	if len(s.has) != 8 || !s.contains("a/b") || s.contains("a") {
		t.Errorf("len %d, contains(a/b) %v, contains(a) %v; want 8, true, false", len(s.has), s.contains("a/b"), s.contains("a"))
	}

	for _, p := range []string{"a/b/x.md", "a/b/y.md", "a/b", "nowhere", "x.md/inner.md"} {
		s.remove(p)
	}
	if got, want := sorted(s.under("")), []string{"", "a/c.md", "ab/d.md", "x.md"}; !slices.Equal(got, want) {
		t.Errorf("after removals: under(\"\") = %q, want %q", got, want)
	}
	if s.any("a/b") || s.any("x.md/inner.md") {
		t.Error("a removed member's folders still lead somewhere")
	}
	// Folders that lead to no member any more are pruned: nothing is left
	// once every member is removed.
	for _, p := range []string{"", "a/c.md", "ab/d.md", "x.md"} {
		s.remove(p)
	}
	if len(s.has) != 0 || len(s.kids) != 0 {
		t.Errorf("emptied set holds %d members and %d folders: %v", len(s.has), len(s.kids), s.kids)
	}
	s.add("q/r.md")
	s.clear()
	if s.any("") || s.any("q") {
		t.Error("clear left members")
	}
}

// TestWatchRemoveLargeTreeLinear removes, one folder at a time as rm -rf
// and a branch switch do, 5,000 folders of a watched tree of 100,000
// documents. Each removal must cost in proportion to what it removes: it
// cost a pass over every document of the tree, which took minutes for
// large trees while the kernel's event queue overflowed. The tree is
// recorded in the watcher without files on disk, so only the watcher's own
// work is timed; the bound is generous (the work takes well under a
// second, with -race too).
func TestWatchRemoveLargeTreeLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("large tree")
	}
	w, err := NewWatcher(Config{Dir: t.TempDir()}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const tops, subs, files = 50, 100, 20
	var folders []string // deepest first, as rm -rf removes them
	want := map[string]bool{}
	for a := range tops {
		top := fmt.Sprintf("a%02d", a)
		for b := range subs {
			sub := fmt.Sprintf("%s/b%03d", top, b)
			w.dirs.add(sub)
			folders = append(folders, sub)
			for f := range files {
				id := fmt.Sprintf("%s/f%02d.md", sub, f)
				w.known.add(id)
				if a < tops/2 {
					want[id] = true
				}
			}
		}
		w.dirs.add(top)
		folders = append(folders, top)
	}
	folders = folders[:len(folders)/2] // the first half of the tops, with their subfolders

	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		now := time.Unix(1000, 0)
		for _, f := range folders {
			w.handle(fsnotify.Event{Name: filepath.Join(w.root, filepath.FromSlash(f)), Op: fsnotify.Remove}, now)
		}
		w.flush(now.Add(time.Hour))
	}()
	const limit = 30 * time.Second
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("removing %d folders of %d documents took over %v", len(folders), len(want), limit)
	}
	t.Logf("removed %d folders, %d documents, in %v", len(folders), len(want), time.Since(start))

	got := map[string]bool{}
	for _, ev := range w.ready[w.head:] {
		if ev.Op != Removed || !want[ev.ID] || got[ev.ID] {
			t.Fatalf("unexpected event %v", ev)
		}
		got[ev.ID] = true
	}
	if len(got) != len(want) {
		t.Errorf("%d documents reported removed, want %d", len(got), len(want))
	}
	if n, wantLeft := len(w.known.has), tops/2*subs*files; n != wantLeft {
		t.Errorf("watcher still knows %d documents, want %d", n, wantLeft)
	}
	if w.dirs.any("a00") || !w.dirs.contains("a49/b099") {
		t.Error("watched folders not dropped as removed")
	}
}
