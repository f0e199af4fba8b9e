package reader

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestNoDebounceSaveByRename plays, with explicit times, the events of an
// editor that saves a.md by moving it away to a backup (vim's default,
// emacs's first save, JetBrains' safe write) and then writing the new
// file, with debouncing off: a.md is Changed, not Removed and then
// Changed, which would make the reader of the events delete the document
// and embed every chunk of the new file anew. A file that stays gone is
// Removed once vanishGrace has passed.
func TestNoDebounceSaveByRename(t *testing.T) {
	root := t.TempDir()
	w := idleWatcher(t, root, NoDebounce)
	t0 := time.Unix(1000, 0)
	a, backup := filepath.Join(root, "a.md"), filepath.Join(root, "a.md~")
	if err := os.WriteFile(a, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Create}, t0)
	if got, want := flushed(w, t0), []string{"changed a.md"}; !equalStrings(got, want) {
		t.Fatalf("created: %q, want %q", got, want)
	}

	t1 := t0.Add(time.Second)
	if err := os.Rename(a, backup); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Rename}, t1)
	w.handle(fsnotify.Event{Name: backup, Op: fsnotify.Create}, t1)
	if got := flushed(w, t1); len(got) != 0 {
		t.Errorf("moved away to save: %q, want nothing yet", got)
	}
	if len(w.pending) != 1 {
		t.Errorf("%d ids pending, want a.md still waiting", len(w.pending))
	}
	saved := t1.Add(time.Millisecond)
	if err := os.WriteFile(a, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Create}, saved)
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Write}, saved)
	if got, want := flushed(w, saved), []string{"changed a.md"}; !equalStrings(got, want) {
		t.Errorf("saved: %q, want %q", got, want)
	}
	if got := flushed(w, saved.Add(vanishGrace)); len(got) != 0 {
		t.Errorf("after the grace: %q, want nothing more", got)
	}

	t2 := t1.Add(time.Minute)
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Remove}, t2)
	if got := flushed(w, t2); len(got) != 0 {
		t.Errorf("removed: %q at once, want nothing within the grace", got)
	}
	if got := flushed(w, t2.Add(vanishGrace-time.Millisecond)); len(got) != 0 {
		t.Errorf("removed: %q before the grace is over, want nothing", got)
	}
	if got, want := flushed(w, t2.Add(vanishGrace)), []string{"removed a.md"}; !equalStrings(got, want) {
		t.Errorf("still gone after the grace: %q, want %q", got, want)
	}
	if len(w.pending) != 0 {
		t.Errorf("%d ids still pending", len(w.pending))
	}
}

// TestWatchJetBrainsSafeWrite saves doc.md as JetBrains IDEs do: the new
// text goes to doc.md___jb_tmp___, doc.md is moved to doc.md___jb_old___,
// the new file is moved in and the old one removed. Only doc.md changed;
// were the IDE's files documents (the include selects every name), each
// save would embed the whole text under their names, then remove it.
func TestWatchJetBrainsSafeWrite(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"doc.md": "v1"})
	r := startWatch(t, Config{Dir: root, Include: []string{"*"}}, nil)
	r.write("doc.md___jb_tmp___", "v2")
	if err := os.Rename(r.path("doc.md"), r.path("doc.md___jb_old___")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.path("doc.md___jb_tmp___"), r.path("doc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.path("doc.md___jb_old___")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"changed doc.md"}; !equalStrings(got, want) {
		t.Errorf("safe write: %q, want one %q", got, want)
	}
}
