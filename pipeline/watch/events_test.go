package watch

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/reader"
)

// fakeEvents stands in for the file watcher: it hands the loop's event
// channel to the test, so tests can play events the kernel rarely produces.
type fakeEvents struct {
	outs      chan chan<- reader.Event
	unwatched atomic.Int64 // what Unwatched reports
}

func (f *fakeEvents) Run(ctx context.Context, out chan<- reader.Event) error {
	defer close(out)
	select {
	case f.outs <- out:
	case <-ctx.Done():
		return nil
	}
	<-ctx.Done()
	return nil
}

func (f *fakeEvents) Close() error { return nil }

func (f *fakeEvents) Waiting() int { return 0 }

func (f *fakeEvents) Unwatched() int { return int(f.unwatched.Load()) }

func (f *fakeEvents) CheckRoot() error { return nil }

// startFake runs a Loop whose event channel is returned: the test sends
// on it as the watcher would.
func (e *env) startFake(mod func(*Options)) chan<- reader.Event {
	e.t.Helper()
	fake := &fakeEvents{outs: make(chan chan<- reader.Event, 1)}
	e.fake = fake
	e.tweak = func(l *Loop) {
		l.w.Close()
		l.w = fake
	}
	e.start(mod)
	select {
	case out := <-fake.outs:
		return out
	case <-time.After(waitLimit):
		e.t.Fatal("the loop did not start its event source")
		return nil
	}
}

// TestLostEvents checks that the events a watcher reports lost, and a
// pending set that outgrows Config.MaxPending, lead to a full
// reconciliation that finds changes no event named.
func TestLostEvents(t *testing.T) {
	tests := []struct {
		name   string
		events []reader.Event
	}{
		{"kernel queue overflow", []reader.Event{{Op: reader.Rescan, Err: fsnotify.ErrEventOverflow}}},
		{"watch limit", []reader.Event{{Op: reader.Rescan, Err: &reader.FileError{Path: "deep", Err: reader.ErrWatchLimit}}}},
		{"more pending than maxPending", func() []reader.Event {
			var evs []reader.Event
			for i := range 10 {
				evs = append(evs, reader.Event{ID: fmt.Sprintf("unrelated%02d.md", i), Op: reader.Changed})
			}
			return evs
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.writeFile("old.md", "Old.")
			reconciled, hold := make(chan struct{}), make(chan struct{})
			out := e.startFake(func(o *Options) {
				o.Config.MaxBatch, o.Config.MaxPending = 2, 4
				next := o.OnRound
				o.OnRound = func(r Round) {
					next(r)
					if r.Kind == Initial {
						close(reconciled)
						<-hold // the loop waits while the folder changes behind its back
					}
				}
			})
			select {
			case <-reconciled:
			case <-time.After(waitLimit):
				t.Fatal("no initial reconciliation")
			}
			// Changes that no event reports.
			e.writeFile("new.md", "New.")
			e.writeFile("sub/deep.md", "Deep.")
			if err := os.Remove(e.path("old.md")); err != nil {
				t.Fatal(err)
			}
			from := e.log.len()
			for _, ev := range tt.events {
				out <- ev // buffered: the loop takes them as one burst once released
			}
			close(hold)
			i := e.log.await(t, from, "rescanning", func(r Round) bool { return r.Kind != Update })
			e.log.mu.Lock()
			r := e.log.rounds[i]
			updates := i - from
			e.log.mu.Unlock()
			if r.Kind != Rescan || r.Err != nil {
				t.Fatalf("round %s: %v, want a rescan without error", r.Kind, r.Err)
			}
			if updates != 0 {
				t.Errorf("%d update rounds before the rescan, want none: the burst should become one rescan", updates)
			}
			e.checkClean()
			if got := docsOf(nodesOf(t, e.store)); len(got) != 2 {
				t.Errorf("store holds %q, want new.md and sub/deep.md", got)
			}
		})
	}
}

// TestFailedFolder plays a folder that cannot be watched: it is recorded
// as a failed document, as a full reconciliation records an unreadable
// folder, and counted; once the watcher reports it over (Removed), the
// failure is cleared and the folder's files are indexed.
func TestFailedFolder(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(e.path("nd"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := e.startFake(nil)
	e.waitReady()
	from := e.log.len()
	out <- reader.Event{ID: "nd", Op: reader.Failed, Err: &reader.FileError{
		Path: "nd", Err: reader.ErrUnreadable, Detail: "folder cannot be watched", Cause: &fs.PathError{Op: "inotify_add_watch", Path: e.path("nd"), Err: syscall.EACCES}}}
	e.log.await(t, from, "recording the folder", func(r Round) bool { return r.Err == nil && slices.Contains(r.Changed, "nd") })
	fails, err := e.state.Failures(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != 1 || fails[0].ID != "nd" || !strings.Contains(fails[0].Reason, "permission denied") {
		t.Fatalf("dead-letter table %+v, want nd failing with permission denied", fails)
	}
	if got := e.loop.Stats().FilesFailed.Load(); got != 1 {
		t.Errorf("FilesFailed = %d, want 1", got)
	}

	e.writeFile("nd/x.md", "Inside.")
	from = e.log.len()
	out <- reader.Event{ID: "nd", Op: reader.Removed}
	out <- reader.Event{ID: "nd/x.md", Op: reader.Changed}
	e.log.await(t, from, "clearing the folder", func(r Round) bool { return r.Err == nil && slices.Contains(r.Cleared, "nd") })
	e.log.await(t, from, "indexing its file", func(r Round) bool { return r.Err == nil && slices.Contains(r.Changed, "nd/x.md") })
	if fails, err := e.state.Failures(context.Background()); err != nil || len(fails) != 0 {
		t.Errorf("dead-letter table %+v (%v), want it empty", fails, err)
	}
	// The folder never held anything in the index: clearing its failure
	// removes no document, as a full reconciliation would not count one.
	for _, r := range e.log.since(from) {
		if len(r.Removed) > 0 {
			t.Errorf("%s round removed %q, want nothing removed", r.Kind, r.Removed)
		}
	}
	if got := e.loop.Totals().Removed; got != 0 {
		t.Errorf("Totals().Removed = %d, want 0", got)
	}
	e.checkClean()
}

// TestUnreadable changes real permissions, as in the QA report: a document
// that failed to be read and a folder that could not be watched are picked
// up once their permissions allow it. Root ignores permissions, so the
// test runs only for other users (TestFailedFolder and the chmod scenario
// cover the same paths as root).
func TestUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root is not stopped by permissions")
	}
	t.Run("file", func(t *testing.T) {
		e := newEnv(t)
		e.writeFile("p.md", "Version one.")
		e.start(nil)
		e.waitReady()
		// Replace p.md by an unreadable version two in one step.
		if err := os.WriteFile(e.path("p.new"), []byte("Version two."), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(e.path("p.new"), e.path("p.md")); err != nil {
			t.Fatal(err)
		}
		e.wait()
		e.step("unreadable", []string{"expect-failed", "p.md"}, "")
		if err := os.Chmod(e.path("p.md"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.wait()
		e.step("readable again", []string{"expect-failed"}, "")
		e.step("readable again", []string{"expect-text", "p.md", "Version", "two."}, "expect-text p.md Version two.")
	})
	t.Run("folder", func(t *testing.T) {
		e := newEnv(t)
		e.start(nil)
		e.waitReady()
		if err := os.Mkdir(e.path("nd"), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(e.path("nd"), 0o755) })
		e.wait()
		e.step("unreadable", []string{"expect-failed", "nd"}, "")
		if err := os.Chmod(e.path("nd"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.writeFile("nd/x.md", "Inside.")
		e.wait()
		e.step("readable again", []string{"expect-failed"}, "")
		e.step("readable again", []string{"expect-docs", "nd/x.md"}, "")
	})
}

// TestRemovalIsFinal plays what a branch switched back and forth under a
// lagging watcher produced: the watcher found a.md gone and reported it
// Removed, but by the time the round ran, a.md was back on disk for a
// moment. The round must remove a.md all the same. Had it read a.md
// again, the index would keep it once it went again: the watcher, which
// never saw it back, reports nothing more. A file that does come back is
// reported Changed by the watcher, which sees it created, and is ingested
// then.
func TestRemovalIsFinal(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.writeFile("b.md", "Bravo.")
	out := e.startFake(nil)
	e.waitReady()
	if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"a.md", "b.md"}) {
		t.Fatalf("after reconciling, the store holds %q", got)
	}

	from := e.log.len()
	out <- reader.Event{ID: "a.md", Op: reader.Removed} // a.md is on disk again
	i := e.log.await(t, from, "removing a.md", func(r Round) bool { return r.Kind == Update })
	if r := e.log.since(i)[0]; r.Err != nil || !slices.Equal(r.Removed, []string{"a.md"}) || len(r.Changed) != 0 {
		t.Errorf("round Removed %q, Changed %q, Err %v; want a.md removed, nothing read", r.Removed, r.Changed, r.Err)
	}
	if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"b.md"}) {
		t.Errorf("after the removal, the store holds %q, want [b.md]", got)
	}
	if ids, err := e.state.DocIDs(context.Background()); err != nil || !slices.Equal(ids, []string{"b.md"}) {
		t.Errorf("after the removal, the manifest holds %q (%v), want [b.md]", ids, err)
	}

	from = e.log.len()
	out <- reader.Event{ID: "a.md", Op: reader.Changed} // the watcher saw it come back
	e.log.await(t, from, "ingesting a.md", func(r Round) bool { return slices.Contains(r.Changed, "a.md") })
	e.checkClean()
}

// TestSweep plays folders created since the watcher started: the watcher
// sweeps each, and the round removes the documents the manifest records
// below it whose file is gone (a whole-folder round may have read them
// before they went, unseen by the watcher), and only those. A Sweep of a
// folder and the removal of a file of the same name, which it replaced, are
// both done: neither replaces the other in the queue.
func TestSweep(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"docs/x.md", "docs/api/y.md", "docs/still.md", "docs.md", "keep/z.md", "n.md"} {
		e.writeFile(name, "Text of "+name+".")
	}
	out := e.startFake(nil)
	e.waitReady()
	for _, name := range []string{"docs/x.md", "docs/api/y.md", "n.md"} {
		if err := os.Remove(e.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	e.writeFile("n.md/inner.md", "A folder where a file was.")
	from := e.log.len()
	for _, ev := range []reader.Event{
		{ID: "docs", Op: reader.Sweep},
		{ID: "n.md", Op: reader.Removed},
		{ID: "n.md/inner.md", Op: reader.Changed},
		{ID: "n.md", Op: reader.Sweep},
	} {
		out <- ev // buffered: one burst
	}
	removed, read := map[string]bool{}, false
	e.log.await(t, from, "sweeping docs and reading n.md/inner.md", func(r Round) bool {
		for _, id := range r.Removed {
			removed[id] = true
		}
		read = read || slices.Contains(r.Changed, "n.md/inner.md")
		return read && removed["docs/x.md"] && removed["n.md"]
	})
	if want := map[string]bool{"docs/x.md": true, "docs/api/y.md": true, "n.md": true}; !maps.Equal(removed, want) {
		t.Errorf("rounds removed %v, want %v", removed, want)
	}
	e.checkClean()
}
