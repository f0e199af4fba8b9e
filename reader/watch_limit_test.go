package reader

import (
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

// next receives one event, failing the test if none comes.
func (r *watchRun) next() Event {
	r.t.Helper()
	select {
	case ev, ok := <-r.out:
		if !ok {
			r.t.Fatal("out closed early")
		}
		return ev
	case <-time.After(waitLimit):
		r.t.Fatalf("no event within %v", waitLimit)
	}
	return Event{}
}

// TestWatchLimitRetried makes the watch limit refuse a folder: the watcher
// counts it unwatched and, while it stays so (its changes are not seen),
// sends a Rescan every LimitRetry, each trying it again; once it can be
// watched, it is watched and the rescans stop. The limit is injected:
// lowering the real one needs privileges and would starve other tests.
func TestWatchLimitRetried(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big")
	var deny atomic.Bool
	deny.Store(true)
	var tries atomic.Int64
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) {
		w.opts.LimitRetry = 20 * time.Millisecond
		add := w.addWatch
		w.addWatch = func(name string) error {
			if name == big {
				tries.Add(1)
				if deny.Load() {
					return &fs.PathError{Op: "inotify_add_watch", Path: name, Err: syscall.ENOSPC}
				}
			}
			return add(name)
		}
	})
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("big/x.md", "not seen: big is not watched")
	// The refusal asks for a rescan at once, then again and again: each
	// tries the folder again, and the counts published before each event
	// is sent still show it unwatched.
	for i := range 3 {
		ev := r.next()
		if ev.Op != Rescan || !errors.Is(ev.Err, ErrWatchLimit) {
			t.Fatalf("event %d = %+v, want Rescan carrying ErrWatchLimit", i, ev)
		}
		if i == 0 && !errors.Is(ev.Err, syscall.ENOSPC) {
			t.Errorf("first rescan's cause %v does not carry the refusal", ev.Err)
		}
		var fe *FileError
		if !errors.As(ev.Err, &fe) || fe.Path != "big" || !strings.Contains(ev.Err.Error(), "fs.inotify.max_user_watches") {
			t.Errorf("event %d: cause %v, want a *FileError naming big and the setting to raise", i, ev.Err)
		}
		if n := r.w.Unwatched(); n != 1 {
			t.Fatalf("rescan %d: Unwatched() = %d, want 1", i, n)
		}
	}
	if n := tries.Load(); n < 3 {
		t.Errorf("the folder was tried %d times over 3 rescans", n)
	}

	// The limit is raised: the next retry watches the folder. Its Rescan
	// (the changes made meanwhile were missed) is the last one.
	deny.Store(false)
	for {
		if ev := r.next(); ev.Op != Rescan {
			t.Fatalf("event %+v while the folder was retried, want only Rescans", ev)
		}
		if r.w.Unwatched() == 0 {
			break
		}
	}
	r.write("big/y.md", "seen")
	got := r.until()
	// A Rescan queued before Unwatched fell to 0 may still come first.
	if got = slices.DeleteFunc(got, func(s string) bool { return s == "rescan " }); !slices.Equal(got, []string{"changed big/y.md"}) {
		t.Errorf("in the folder watched at last: %q, want %q", got, "changed big/y.md")
	}
	// No more rescans: one would also drop the marker until waits for.
	r.write("big/z.md", "seen")
	if got, want := r.until(), []string{"changed big/z.md"}; !slices.Equal(got, want) {
		t.Errorf("once every folder is watched: %q, want %q and no more rescans", got, want)
	}
}

// TestWatchLimitForgotten checks that a refused folder that is removed is
// no longer counted, and that no retries follow.
func TestWatchLimitForgotten(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big")
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) { refuseWatches(w, syscall.EMFILE, big) })
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if ev := r.next(); ev.Op != Rescan || !errors.Is(ev.Err, ErrWatchLimit) {
		t.Fatalf("event %+v, want Rescan carrying ErrWatchLimit", ev)
	}
	if n := r.w.Unwatched(); n != 1 {
		t.Fatalf("Unwatched() = %d, want 1", n)
	}
	if err := os.Remove(big); err != nil {
		t.Fatal(err)
	}
	if got := r.until(); len(got) != 0 {
		t.Errorf("refused folder removed: %q, want nothing", got)
	}
	if n := r.w.Unwatched(); n != 0 {
		t.Errorf("Unwatched() = %d after the folder was removed, want 0", n)
	}
}

// TestWatchLimitGoneSwept removes, and moves out of the root, folders the
// watch limit kept from being watched, whose documents a rescan read: no
// event names those documents, since the watcher never listed them, and
// once the last unwatched folder is gone no more retries follow. Each gone
// folder is swept instead, so that its documents are removed rather than
// kept until the next start.
func TestWatchLimitGoneSwept(t *testing.T) {
	root, stage := t.TempDir(), t.TempDir()
	for _, name := range []string{"big/x.md", "big/sub/y.md", "other/z.md"} {
		p := filepath.Join(stage, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("read by a rescan"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) {
		refuseWatches(w, syscall.ENOSPC, filepath.Join(root, "big"), filepath.Join(root, "other"))
	})
	r.sweeps = true
	for _, name := range []string{"big", "other"} {
		if err := os.Rename(filepath.Join(stage, name), r.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	for r.w.Unwatched() < 2 {
		if ev := r.next(); ev.Op != Rescan || !errors.Is(ev.Err, ErrWatchLimit) {
			t.Fatalf("event %+v, want Rescan carrying ErrWatchLimit", ev)
		}
	}
	if got := slices.DeleteFunc(r.until(), func(s string) bool { return s == "rescan " }); len(got) != 0 {
		t.Fatalf("folders moved in and refused: %q, want only rescans", got)
	}
	if err := os.RemoveAll(r.path("big")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.path("other"), filepath.Join(stage, "other")); err != nil {
		t.Fatal(err)
	}
	got := r.until()
	slices.Sort(got)
	if want := []string{"sweep big", "sweep other"}; !slices.Equal(got, want) {
		t.Errorf("unwatched folders removed and moved out: %q, want %q", got, want)
	}
	if n := r.w.Unwatched(); n != 0 {
		t.Errorf("Unwatched() = %d once the folders are gone, want 0", n)
	}
}

// TestWatchLimitCountsBelow checks that Unwatched counts the folders below
// a refused folder too: the watcher does not try them, but they are not
// watched either, and the count tells how many more watches are needed.
// Folders Walk does not enter (hidden ones) are not counted.
func TestWatchLimitCountsBelow(t *testing.T) {
	root, stage := t.TempDir(), t.TempDir()
	for _, d := range []string{"big/a/b", "big/c", "big/.git/objects"} {
		if err := os.MkdirAll(filepath.Join(stage, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	big := filepath.Join(root, "big")
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) { refuseWatches(w, syscall.ENOSPC, big) })
	if err := os.Rename(filepath.Join(stage, "big"), big); err != nil {
		t.Fatal(err)
	}
	if ev := r.next(); ev.Op != Rescan || !errors.Is(ev.Err, ErrWatchLimit) {
		t.Fatalf("event %+v, want Rescan carrying ErrWatchLimit", ev)
	}
	if n := r.w.Unwatched(); n != 4 {
		t.Errorf("Unwatched() = %d, want 4: big, big/a, big/a/b and big/c", n)
	}
	if err := os.RemoveAll(big); err != nil {
		t.Fatal(err)
	}
	r.until()
	if n := r.w.Unwatched(); n != 0 {
		t.Errorf("Unwatched() = %d once the folder is gone, want 0", n)
	}
}

// refuseWatches makes w's watches of the folders refused fail with errno,
// as the watch limit (ENOSPC) or the open-file limit (EMFILE) makes them,
// and retries them only hourly: only the refusals' own rescans come.
func refuseWatches(w *Watcher, errno syscall.Errno, refused ...string) {
	w.opts.LimitRetry = time.Hour
	add := w.addWatch
	w.addWatch = func(name string) error {
		if slices.Contains(refused, name) {
			return &fs.PathError{Op: "inotify_add_watch", Path: name, Err: errno}
		}
		return add(name)
	}
}
