package reader

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestWatchRootGone removes or renames the watched folder itself: Run must
// end with a *RootError naming it instead of going deaf, even when a folder
// appears again at the same path.
func TestWatchRootGone(t *testing.T) {
	tests := []struct {
		name    string
		renamed bool
		change  func(root string) error
	}{
		{"deleted and created anew", false, func(root string) error {
			if err := os.RemoveAll(root); err != nil {
				return err
			}
			if err := os.Mkdir(root, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "b.md"), []byte("two"), 0o644)
		}},
		{"renamed away and back", true, func(root string) error {
			if err := os.Rename(root, root+".bak"); err != nil {
				return err
			}
			return os.Rename(root+".bak", root)
		}},
		{"renamed away", true, func(root string) error { return os.Rename(root, root+".gone") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "data")
			writeTree(t, root, map[string]string{"a.md": "one", "sub/c.md": "c"})
			w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: testDebounce})
			if err != nil {
				t.Fatal(err)
			}
			out := make(chan Event)
			done := make(chan error, 1)
			go func() { done <- w.Run(context.Background(), out) }()
			if err := tt.change(root); err != nil {
				t.Fatal(err)
			}
			timeout := time.After(waitLimit)
			for open := true; open; {
				select {
				case _, open = <-out: // events before the end may come; out must close
				case <-timeout:
					w.Close()
					t.Fatal("Run went on after its folder went away")
				}
			}
			err = <-done
			var rerr *RootError
			if !errors.As(err, &rerr) || !errors.Is(err, ErrRootGone) {
				t.Fatalf("Run = %v, want a *RootError wrapping ErrRootGone", err)
			}
			if rerr.Dir != root || rerr.Renamed != tt.renamed {
				t.Errorf("RootError = %+v, want Dir %q, Renamed %v", rerr, root, tt.renamed)
			}
			if !strings.Contains(err.Error(), root) {
				t.Errorf("message %q does not name the folder", err)
			}
		})
	}
}

// TestWatchFolderRenamedOverFolder renames a folder over an existing empty
// one (mv -T a b): the folder now at b is watched and its files reported.
func TestWatchFolderRenamedOverFolder(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/x.md": "x", "b/": ""})
	r := startWatch(t, Config{Dir: root}, nil)
	// os.Rename refuses to replace a folder; rename(2) replaces an empty one.
	if err := syscall.Rename(r.path("a"), r.path("b")); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"changed b/x.md", "removed a/x.md"}; !slices.Equal(got, want) {
		t.Errorf("renamed over: %q, want %q", got, want)
	}
	r.write("b/y.md", "y")
	r.write("b/x.md", "e")
	if got, want := sorted(r.until()), []string{"changed b/x.md", "changed b/y.md"}; !slices.Equal(got, want) {
		t.Errorf("changes in the folder renamed over: %q, want %q", got, want)
	}
}

// TestWatchTypeChanges replaces files by folders and the reverse, and
// creates a FIFO, which is reported for the pipeline to fail as Walk does.
func TestWatchTypeChanges(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"x.md": "v"})
	r := startWatch(t, Config{Dir: root}, nil)
	if err := os.Remove(r.path("x.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(r.path("x.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("x.md/y.md", "in")
	if got, want := sorted(r.until()), []string{"changed x.md/y.md", "removed x.md"}; !slices.Equal(got, want) {
		t.Errorf("file replaced by a folder: %q, want %q", got, want)
	}
	if err := os.RemoveAll(r.path("x.md")); err != nil {
		t.Fatal(err)
	}
	r.write("x.md", "f")
	if got, want := sorted(r.until()), []string{"changed x.md", "removed x.md/y.md"}; !slices.Equal(got, want) {
		t.Errorf("folder replaced by a file: %q, want %q", got, want)
	}
	makeFIFO(t, r.path("pipe.md"))
	if got, want := r.until(), []string{"changed pipe.md"}; !slices.Equal(got, want) {
		t.Errorf("FIFO created: %q, want %q (Stat then fails it as Walk does)", got, want)
	}
	if err := os.Remove(r.path("pipe.md")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"removed pipe.md"}; !slices.Equal(got, want) {
		t.Errorf("FIFO removed: %q, want %q", got, want)
	}
}

// TestWatchChmod checks that a change of permissions retries a document,
// and that a folder which cannot be watched is reported Failed, then
// watched and scanned once its permissions change. The failure is
// injected: the tests may run as root, whom permissions do not stop.
func TestWatchChmod(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"p.md": "v1"})
	var deny atomic.Bool
	deny.Store(true)
	nd := filepath.Join(root, "nd")
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) {
		add := w.addWatch
		w.addWatch = func(name string) error {
			if name == nd && deny.Load() {
				return &fs.PathError{Op: "inotify_add_watch", Path: name, Err: syscall.EACCES}
			}
			return add(name)
		}
	})

	if err := os.Chmod(r.path("p.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"changed p.md"}; !slices.Equal(got, want) {
		t.Errorf("chmod of a document: %q, want %q", got, want)
	}

	if err := os.Mkdir(nd, 0o755); err != nil {
		t.Fatal(err)
	}
	var failed Event
	select {
	case failed = <-r.out:
	case <-time.After(waitLimit):
		t.Fatal("no event for a folder that cannot be watched")
	}
	if failed.Op != Failed || failed.ID != "nd" || !errors.Is(failed.Err, ErrUnreadable) || !errors.Is(failed.Err, fs.ErrPermission) {
		t.Fatalf("event %+v, want Failed nd wrapping ErrUnreadable and the permission error", failed)
	}
	r.write("nd/x.md", "x") // not seen: nd is not watched
	if got := r.until(); len(got) != 0 {
		t.Errorf("in an unwatched folder: %q, want nothing", got)
	}

	deny.Store(false)
	if err := os.Chmod(nd, 0o750); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"changed nd/x.md", "removed nd"}; !slices.Equal(got, want) {
		t.Errorf("after chmod of the folder: %q, want %q (the failure is over, its files are scanned)", got, want)
	}
	r.write("nd/later.md", "later")
	if got, want := r.until(), []string{"changed nd/later.md"}; !slices.Equal(got, want) {
		t.Errorf("in the folder now watched: %q, want %q", got, want)
	}
}

// TestWatchUnreadableFolder is TestWatchChmod with real permissions; root
// ignores them, so as root it runs as user nobody.
func TestWatchUnreadableFolder(t *testing.T) {
	if !runAsNobody(t) {
		return
	}
	root := t.TempDir()
	r := startWatch(t, Config{Dir: root}, nil)
	if err := os.Mkdir(r.path("nd"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(r.path("nd"), 0o755) })
	if got, want := r.until(), []string{"failed nd"}; !slices.Equal(got, want) {
		t.Errorf("unreadable folder: %q, want %q", got, want)
	}
	if err := os.Chmod(r.path("nd"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("nd/x.md", "x")
	if got, want := sorted(r.until()), []string{"changed nd/x.md", "removed nd"}; !slices.Equal(got, want) {
		t.Errorf("after chmod: %q, want %q", got, want)
	}
}

// TestWatchTempNamedFolders checks that folders named like editor temp
// files are watched as Walk enters them; temp files are still ignored.
func TestWatchTempNamedFolders(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"cache.tmp/a.md": "a", "keep.md": "k"})
	r := startWatch(t, Config{Dir: root}, nil)
	if err := os.Mkdir(r.path("new.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("new.tmp/c.md", "c")
	r.write("new.tmp/c.md~", "editor backup")
	if got, want := r.until(), []string{"changed new.tmp/c.md"}; !slices.Equal(got, want) {
		t.Errorf("temp-named folder created: %q, want %q", got, want)
	}
	if err := os.Rename(r.path("cache.tmp"), filepath.Join(t.TempDir(), "cache.tmp")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"removed cache.tmp/a.md"}; !slices.Equal(got, want) {
		t.Errorf("temp-named folder moved out: %q, want %q", got, want)
	}
	if err := os.Rename(r.path("new.tmp"), r.path("old~")); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"changed old~/c.md", "removed new.tmp/c.md"}; !slices.Equal(got, want) {
		t.Errorf("temp-named folder renamed: %q, want %q", got, want)
	}
}

// TestWatchSymlinks checks that documents reached through symbolic links
// follow their targets: a change, a new file in a linked folder, a removal.
func TestWatchSymlinks(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"real/t.md": "t", "linkdir": "->real", "link.md": "->real/t.md", "real/self": "->.",
		"vault/v.md": "v", "pub.md": "->vault/v.md", // the target's folder is excluded
	})
	r := startWatch(t, Config{Dir: root, Exclude: []string{"vault"}}, nil)

	r.write("real/t.md", "edited")
	if got, want := sorted(r.until()), []string{"changed link.md", "changed linkdir/t.md", "changed real/t.md"}; !slices.Equal(got, want) {
		t.Errorf("target edited: %q, want %q", got, want)
	}
	r.write("real/n.md", "new")
	if got, want := sorted(r.until()), []string{"changed linkdir/n.md", "changed real/n.md"}; !slices.Equal(got, want) {
		t.Errorf("file added to a linked folder: %q, want %q", got, want)
	}
	r.write("vault/v.md", "v2")
	if got, want := r.until(), []string{"changed pub.md"}; !slices.Equal(got, want) {
		t.Errorf("target in an excluded folder edited: %q, want %q", got, want)
	}
	if err := os.Remove(r.path("real/t.md")); err != nil {
		t.Fatal(err)
	}
	// link.md is a broken link now: a document that fails, as Walk lists
	// it, not one that is gone.
	if got, want := sorted(r.until()), []string{"changed link.md", "removed linkdir/t.md", "removed real/t.md"}; !slices.Equal(got, want) {
		t.Errorf("target removed: %q, want %q", got, want)
	}
	if err := os.Symlink("real", r.path("later")); err != nil {
		t.Fatal(err)
	}
	// later/self, like real/self, is a link back that Walk fails.
	if got, want := sorted(r.until()), []string{"changed later/n.md", "changed later/self"}; !slices.Equal(got, want) {
		t.Errorf("link to a folder created: %q, want %q", got, want)
	}
	if err := os.Remove(r.path("linkdir")); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"removed linkdir/n.md", "removed linkdir/self"}; !slices.Equal(got, want) {
		t.Errorf("link to a folder removed: %q, want %q", got, want)
	}
	if err := os.RemoveAll(r.path("real")); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"removed later/n.md", "removed later/self", "removed real/n.md", "removed real/self"}; !slices.Equal(got, want) {
		t.Errorf("linked folder removed: %q, want %q", got, want)
	}
}

// TestWatchAliasesMatchWalk checks, without events, that the watcher knows
// exactly the documents Walk lists through links (loops included), and
// that a change to a file touches exactly the ids Walk reaches it under.
func TestWatchAliasesMatchWalk(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"real/t.md": "t", "real/sub/u.md": "u", "linkdir": "->real", "link.md": "->real/t.md",
		"chain.md": "->link.md", "real/self": "->.", "up": "->.", "real/sub/back": "->../..",
		"a/x.md": "x", "a/l": "->../b", "b/y.md": "y", "b/m": "->../a",
		"broken.md": "->nowhere.md",
	})
	cfg := Config{Dir: root}
	byTarget := map[string][]string{} // resolved file → ids Walk lists for it
	var ids []string
	failures := map[string]bool{}
	err := Walk(context.Background(), cfg, func(f File, err error) error {
		if err != nil {
			failures[f.ID] = true
			return nil
		}
		real, err := filepath.EvalSymlinks(f.Path)
		if err != nil {
			return err
		}
		byTarget[real] = append(byTarget[real], f.ID)
		ids = append(ids, f.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(cfg, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var known []string
	for id := range w.known.has {
		if !failures[id] { // a failure for Walk; known so its removal is seen
			known = append(known, id)
		}
	}
	// Walk's failures here: the broken link and the links to folders
	// that loop, which the watcher knows too.
	var failed, knownFailed []string
	for id := range failures {
		failed = append(failed, id)
		if w.known.contains(id) {
			knownFailed = append(knownFailed, id)
		}
	}
	if got, want := sorted(knownFailed), sorted(failed); !slices.Equal(got, want) {
		t.Errorf("known failures %q,\nWalk fails %q", got, want)
	}
	if got, want := sorted(known), sorted(ids); !slices.Equal(got, want) {
		t.Errorf("known %q,\nWalk lists %q", got, want)
	}
	now := time.Unix(1000, 0)
	for _, real := range []string{"real/t.md", "real/sub/u.md", "a/x.md", "b/y.md"} {
		clear(w.pending)
		w.mark(real, now)
		var got []string
		for id := range w.pending {
			got = append(got, id)
		}
		abs, err := filepath.EvalSymlinks(filepath.Join(root, real))
		if err != nil {
			t.Fatal(err)
		}
		if want := sorted(byTarget[abs]); !slices.Equal(sorted(got), want) {
			t.Errorf("change to %s touches %q, want %q", real, sorted(got), want)
		}
	}
}
