package reader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

const testDebounce = 40 * time.Millisecond

// waitLimit is a generous bound for events to arrive; tests never wait for
// it unless something is wrong.
const waitLimit = 10 * time.Second

type watchRun struct {
	t      *testing.T
	root   string
	w      *Watcher
	out    chan Event
	cancel context.CancelFunc
	done   chan error
	marks  int
	sweeps bool // until keeps Sweep events; most tests leave them out
}

func startWatch(t *testing.T, cfg Config, setup func(*Watcher)) *watchRun {
	t.Helper()
	w, err := NewWatcher(cfg, WatchOptions{Debounce: testDebounce})
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &watchRun{t: t, root: cfg.Dir, w: w, out: make(chan Event), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- w.Run(ctx, r.out) }()
	t.Cleanup(r.stop)
	return r
}

// stop cancels Run and waits for it; Run must return nil and close out.
func (r *watchRun) stop() {
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(waitLimit):
		r.t.Fatal("Run did not return after cancel")
	}
	for range r.out { // drained and closed by Run
	}
}

func (r *watchRun) write(name, body string) {
	r.t.Helper()
	p := filepath.Join(r.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *watchRun) path(name string) string { return filepath.Join(r.root, filepath.FromSlash(name)) }

// until writes a marker document and returns the events received before the
// marker's own event. Every change made before the marker has an earlier
// deadline, so its event comes first.
//
// An event that repeats the previous one for its id is left out, and so
// are Sweep events unless r.sweeps is set. One change
// of several system calls (os.WriteFile: a create, then a write) gives one
// event only if the watcher's goroutine handles them within the quiet
// period of each other, which a loaded machine does not promise; a repeated
// event asks for the same thing again. TestDebounceBurst checks with
// explicit times that such changes give one event.
func (r *watchRun) until() []string {
	r.t.Helper()
	r.marks++
	mark := fmt.Sprintf("zz-mark-%d.md", r.marks)
	r.write(mark, "mark")
	var got []string
	last := map[string]EventOp{}
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-r.out:
			if !ok {
				r.t.Fatal("out closed early")
			}
			if ev.ID == mark && ev.Op == Changed {
				return got
			}
			if strings.HasPrefix(ev.ID, "zz-mark-") || (ev.ID != "" && last[ev.ID] == ev.Op) || (ev.Op == Sweep && !r.sweeps) {
				continue
			}
			last[ev.ID] = ev.Op
			got = append(got, ev.Op.String()+" "+ev.ID)
		case <-timeout:
			r.t.Fatalf("no event for %s within %v; got %q", mark, waitLimit, got)
		}
	}
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestWatchCreateModifyRemove(t *testing.T) {
	root := t.TempDir()
	r := startWatch(t, Config{Dir: root}, nil)
	r.sweeps = true

	r.write("a.md", "one")
	if got, want := r.until(), []string{"changed a.md"}; !equalStrings(got, want) {
		t.Errorf("create: %q, want %q", got, want)
	}
	for i := 0; i < 20; i++ {
		r.write("a.md", strings.Repeat("x", i))
	}
	if got, want := r.until(), []string{"changed a.md"}; !equalStrings(got, want) {
		t.Errorf("burst of writes: %q, want one %q", got, want)
	}
	if err := os.Remove(r.path("a.md")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"removed a.md"}; !equalStrings(got, want) {
		t.Errorf("remove: %q, want %q", got, want)
	}
	r.write("b.md", "short-lived")
	if err := os.Remove(r.path("b.md")); err != nil {
		t.Fatal(err)
	}
	// Its removal, and a sweep in case it was a folder if the watcher
	// found nothing there when it looked (see
	// TestCreatedAndGoneBeforeLooked); its removal alone if the watcher
	// looked before the file went (it saw a file, so there is nothing to
	// sweep), as it does when this goroutine is slow; a change and a
	// removal if this goroutine was held up between the two calls for
	// longer than the quiet period. TestDebounceBurst checks the quiet
	// period itself with explicit times.
	outcomes := [][]string{{"removed b.md", "sweep b.md"}, {"removed b.md"}, {"changed b.md", "removed b.md"}}
	if got := r.until(); !slices.ContainsFunc(outcomes, func(want []string) bool { return equalStrings(got, want) }) {
		t.Errorf("created and removed within the quiet period: %q, want one of %q", got, outcomes)
	}
}

// idleWatcher returns a Watcher of root that is never Run: tests play
// events to its handle and flush with explicit times. It is closed when the
// test ends.
func idleWatcher(t *testing.T, root string, debounce time.Duration) *Watcher {
	t.Helper()
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: debounce})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// flushed runs w's flush at the time at, outside Run, and returns the
// events it made ready, as "op id", taking them from w.
func flushed(w *Watcher, at time.Time) []string {
	w.flush(at)
	var got []string
	for ; w.head < len(w.ready); w.pop() {
		got = append(got, w.ready[w.head].Op.String()+" "+w.ready[w.head].ID)
	}
	return got
}

// TestDebounceBurst plays the file-system events of a burst of writes and
// of a file created and removed at once, with explicit times: the burst
// gives one event one quiet period after its last write, and the
// short-lived file its removal only. The live tests cannot promise this:
// the watcher's goroutine may be held up between two events of one change.
func TestDebounceBurst(t *testing.T) {
	root := t.TempDir()
	const debounce = 500 * time.Millisecond
	w := idleWatcher(t, root, debounce)
	t0 := time.Unix(1000, 0)
	sent := func(at time.Time) []string { return flushed(w, at) }
	a := filepath.Join(root, "a.md")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: a, Op: fsnotify.Create}, t0)
	last := t0
	for i := range 20 {
		last = t0.Add(time.Duration(i+1) * 10 * time.Millisecond)
		w.handle(fsnotify.Event{Name: a, Op: fsnotify.Write}, last)
		if got := sent(last); len(got) != 0 {
			t.Fatalf("write %d: %q sent inside the burst", i, got)
		}
	}
	if got := sent(last.Add(debounce - time.Millisecond)); len(got) != 0 {
		t.Errorf("before the quiet period is over: %q, want nothing", got)
	}
	if got, want := sent(last.Add(debounce)), []string{"changed a.md"}; !equalStrings(got, want) {
		t.Errorf("burst of writes: %q, want one %q", got, want)
	}

	b := filepath.Join(root, "b.md")
	if err := os.WriteFile(b, []byte("short-lived"), 0o644); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	w.handle(fsnotify.Event{Name: b, Op: fsnotify.Create}, t1)
	w.handle(fsnotify.Event{Name: b, Op: fsnotify.Write}, t1)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	w.handle(fsnotify.Event{Name: b, Op: fsnotify.Remove}, t1.Add(time.Millisecond))
	// Reported removed although never reported changed: a Walk running
	// meanwhile (a watch's reconciliation) may have read it, and its reader
	// must not keep it.
	if got, want := sent(t1.Add(time.Millisecond+debounce)), []string{"removed b.md"}; !equalStrings(got, want) {
		t.Errorf("created and removed within the quiet period: %q, want %q", got, want)
	}
}

func TestWatchAtomicSaveAndEditorFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"doc.md": "v1"})
	r := startWatch(t, Config{Dir: root, Include: []string{"*"}}, nil)

	r.write(".doc.md.swp", "swap")
	r.write("doc.md~", "backup")
	r.write(".#doc.md", "lock")
	r.write("doc.md.tmp", "v2")
	if err := os.Rename(r.path("doc.md.tmp"), r.path("doc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.path(".doc.md.swp")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"changed doc.md"}; !equalStrings(got, want) {
		t.Errorf("atomic save: %q, want one %q", got, want)
	}
}

func TestWatchNewFolders(t *testing.T) {
	root := t.TempDir()
	r := startWatch(t, Config{Dir: root}, nil)
	r.sweeps = true

	// A tree moved in: its files existed before any watch could see them.
	staging := t.TempDir()
	writeTree(t, staging, map[string]string{"sub/x.md": "x", "sub/deep/y.md": "y", "sub/deep/notes.txt": "not in the default include", "sub/img.png": "png", "sub/.git/z.md": "hidden"})
	if err := os.Rename(filepath.Join(staging, "sub"), r.path("sub")); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"changed sub/deep/y.md", "changed sub/x.md", "sweep sub"}; !equalStrings(got, want) {
		t.Errorf("folder moved in: %q, want %q", got, want)
	}
	// The new folders are watched.
	r.write("sub/deep/later.md", "later")
	if got, want := r.until(), []string{"changed sub/deep/later.md"}; !equalStrings(got, want) {
		t.Errorf("file in new folder: %q, want %q", got, want)
	}
	// A folder created and filled at once.
	if err := os.MkdirAll(r.path("n1/n2/n3"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("n1/n2/n3/a.md", "a")
	r.write("n1/b.md", "b")
	// n1 is swept (the folders below it with it), and n2 or n3 too if they
	// were created after n1 was watched.
	got := slices.DeleteFunc(sorted(r.until()), func(e string) bool { return e == "sweep n1/n2" || e == "sweep n1/n2/n3" })
	if want := []string{"changed n1/b.md", "changed n1/n2/n3/a.md", "sweep n1"}; !equalStrings(got, want) {
		t.Errorf("folders created and filled: %q, want %q", got, want)
	}
}

func TestWatchFoldersRemovedAndMoved(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"docs/a.md": "a", "docs/b/c.md": "c", "docs/b/skip.go": "go",
		"other/d.md": "d", "keep.md": "k", "old.md": "o",
	})
	r := startWatch(t, Config{Dir: root}, nil)

	away := filepath.Join(t.TempDir(), "away")
	if err := os.Rename(r.path("docs"), away); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(r.until()), []string{"removed docs/a.md", "removed docs/b/c.md"}; !equalStrings(got, want) {
		t.Errorf("folder moved out: %q, want %q", got, want)
	}
	// The moved-out folder is no longer watched.
	if err := os.WriteFile(filepath.Join(away, "a.md"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(r.path("other")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"removed other/d.md"}; !equalStrings(got, want) {
		t.Errorf("folder removed: %q, want %q", got, want)
	}
	if err := os.Rename(r.path("old.md"), r.path("new.md")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.until(), []string{"removed old.md", "changed new.md"}; !equalStrings(got, want) {
		t.Errorf("rename: %q, want %q", got, want)
	}
}

func TestWatchIgnoresUnselectedPaths(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{".git/x": "", "drafts/": ""})
	r := startWatch(t, Config{Dir: root, Exclude: []string{"drafts", "*.skip.md"}}, nil)
	r.sweeps = true
	r.write("main.go", "package main")
	r.write(".git/HEAD.md", "hidden")
	r.write("drafts/a.md", "excluded folder")
	r.write("a.skip.md", "excluded file")
	r.write("newdrafts/drafts/b.md", "excluded nested")
	r.write("ok.md", "selected")
	// newdrafts is a new folder, swept, though its drafts are excluded.
	if got, want := sorted(r.until()), []string{"changed ok.md", "sweep newdrafts"}; !equalStrings(got, want) {
		t.Errorf("got %q, want only %q", got, want)
	}
}

func TestWatchOverflowSendsRescan(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a"})
	errs := make(chan error)
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) { w.errs = errs })
	select {
	case errs <- fsnotify.ErrEventOverflow:
	case <-time.After(waitLimit):
		t.Fatal("Run did not read the error channel")
	}
	select {
	case ev := <-r.out:
		if ev.Op != Rescan || ev.ID != "" || !errors.Is(ev.Err, fsnotify.ErrEventOverflow) {
			t.Errorf("event = %+v, want Rescan carrying ErrEventOverflow", ev)
		}
	case <-time.After(waitLimit):
		t.Fatal("no Rescan event")
	}
	// Watching goes on after the rescan.
	r.write("b.md", "b")
	if got, want := r.until(), []string{"changed b.md"}; !equalStrings(got, want) {
		t.Errorf("after rescan: %q, want %q", got, want)
	}
}

func TestWatchLimitSendsRescan(t *testing.T) {
	root := t.TempDir()
	limit := &FileError{Path: "big", Err: ErrWatchLimit}
	r := startWatch(t, Config{Dir: root}, func(w *Watcher) { w.limitErr = limit })
	select {
	case ev := <-r.out:
		if ev.Op != Rescan || !errors.Is(ev.Err, ErrWatchLimit) {
			t.Errorf("event = %+v, want Rescan carrying ErrWatchLimit", ev)
		}
	case <-time.After(waitLimit):
		t.Fatal("no Rescan event")
	}
}

// TestDebounceTiming drives the debouncer with explicit times.
func TestDebounceTiming(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a", "b.md": "b"})
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: 500 * time.Millisecond, MaxDelay: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	steps := []struct {
		touch []string
		flush time.Duration
		want  []string
	}{
		{touch: []string{"a.md"}, flush: 0, want: nil},
		{touch: []string{"a.md"}, flush: 400 * ms, want: nil},                       // a due at 900ms
		{touch: []string{"b.md"}, flush: 899 * ms, want: nil},                       // b due at 1399ms
		{flush: 900 * ms, want: []string{"changed a.md"}},                           // quiet for 500ms
		{flush: 1399 * ms, want: []string{"changed b.md"}},                          //
		{touch: []string{"a.md"}, flush: 1400 * ms, want: nil},                      // a again, first at 1400
		{touch: []string{"a.md"}, flush: 1800 * ms, want: nil},                      // keeps changing
		{touch: []string{"a.md"}, flush: 2200 * ms, want: nil},                      //
		{touch: []string{"a.md"}, flush: 3000 * ms, want: nil},                      //
		{touch: []string{"a.md"}, flush: 3400 * ms, want: []string{"changed a.md"}}, // MaxDelay from 1400ms
	}
	var now time.Duration
	for i, s := range steps {
		now = s.flush
		for _, id := range s.touch {
			w.touch(id, at(now))
		}
		w.flush(at(now))
		var got []string
		for ; w.head < len(w.ready); w.pop() {
			got = append(got, w.ready[w.head].Op.String()+" "+w.ready[w.head].ID)
		}
		if !equalStrings(got, s.want) {
			t.Errorf("step %d at %v: %q, want %q", i, now, got, s.want)
		}
	}
}

func TestWatcherLifecycle(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher(Config{Dir: root}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := make(chan Event)
	if err := w.Run(ctx, out); err != nil {
		t.Fatalf("Run with cancelled ctx = %v", err)
	}
	if _, ok := <-out; ok {
		t.Error("out not closed")
	}
	if err := w.Run(context.Background(), make(chan Event)); !errors.Is(err, ErrWatcherClosed) {
		t.Errorf("second Run = %v, want ErrWatcherClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after Run = %v", err)
	}

	w2, err := NewWatcher(Config{Dir: root}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w2.Run(context.Background(), make(chan Event)) }()
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, ErrWatcherClosed) {
			t.Errorf("Run after Close = %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after Close")
	}
}

func TestNewWatcherErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		opts    WatchOptions
		setting string
	}{
		{"missing root", Config{Dir: filepath.Join(t.TempDir(), "nope")}, WatchOptions{}, "source.dir"},
		{"bad glob", Config{Dir: t.TempDir(), Exclude: []string{"[x"}}, WatchOptions{}, "source.exclude[0]"},
		{"negative max delay", Config{Dir: t.TempDir()}, WatchOptions{MaxDelay: -1}, "watch.maxDelay"},
		{"negative max delay without debouncing", Config{Dir: t.TempDir()}, WatchOptions{Debounce: NoDebounce, MaxDelay: -time.Second}, "watch.maxDelay"},
		{"max below debounce", Config{Dir: t.TempDir()}, WatchOptions{Debounce: time.Second, MaxDelay: time.Millisecond}, "watch.maxDelay"},
		{"negative limit retry", Config{Dir: t.TempDir()}, WatchOptions{LimitRetry: -time.Second}, "watch.limitRetry"},
		{"negative root check", Config{Dir: t.TempDir()}, WatchOptions{RootCheck: -time.Second}, "watch.rootCheck"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewWatcher(tt.cfg, tt.opts)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != tt.setting {
				if w != nil {
					w.Close()
				}
				t.Fatalf("NewWatcher = %v, want *ConfigError for %s", err, tt.setting)
			}
		})
	}
}

func TestWatchOptionsDefaults(t *testing.T) {
	o := WatchOptions{}.WithDefaults()
	if o.Debounce != DefaultDebounce || o.MaxDelay != DefaultMaxDelay {
		t.Errorf("defaults = %+v", o)
	}
	if o := (WatchOptions{Debounce: time.Minute}).WithDefaults(); o.MaxDelay != time.Minute {
		t.Errorf("MaxDelay default below a long Debounce: %v", o.MaxDelay)
	}
	if o := (WatchOptions{Debounce: NoDebounce}).WithDefaults(); o.Debounce != NoDebounce || o.MaxDelay != DefaultMaxDelay || o.Validate() != nil {
		t.Errorf("NoDebounce with defaults = %+v (%v), want debouncing kept off", o, o.Validate())
	}
}

func TestEditorTempNames(t *testing.T) {
	for name, want := range map[string]bool{
		"a.md~": true, ".a.md.swp": true, ".a.md.swx": true, "a.tmp": true, ".#a.md": true,
		"a.md___jb_tmp___": true, "a.md___jb_old___": true,
		"a.md": false, "jb_tmp.md": false, "swp.md": false, "a.swp.md": false, "tmp.md": false,
	} {
		if got := isEditorTemp(name); got != want {
			t.Errorf("isEditorTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEventOpString(t *testing.T) {
	for op, want := range map[EventOp]string{Changed: "changed", Removed: "removed", Rescan: "rescan", Failed: "failed", 9: "EventOp(9)"} {
		if got := op.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", op, got, want)
		}
	}
}

// TestWatchWaitingCountsUnsentChanges: Waiting counts the documents whose
// change the Watcher has seen but not sent, in their quiet period or
// waiting for the receiver, and drops as events are received.
func TestWatchWaitingCountsUnsentChanges(t *testing.T) {
	r := startWatch(t, Config{Dir: t.TempDir()}, nil)
	waitFor := func(want int) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for r.w.Waiting() != want {
			if time.Now().After(deadline) {
				t.Fatalf("Waiting = %d, want %d", r.w.Waiting(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Each file appears by a rename, one event: the two of a write could
	// be sent as two if the watcher's goroutine was held up between them.
	for _, name := range []string{"a.md", "b.md"} {
		r.write(name+".tmp", name) // an editor's temp file: ignored
		if err := os.Rename(r.path(name+".tmp"), r.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(2) // nobody receives yet
	var got []string
	for want := 1; want >= 0; want-- {
		select {
		case ev := <-r.out:
			got = append(got, ev.ID)
		case <-time.After(waitLimit):
			t.Fatal("no event")
		}
		waitFor(want)
	}
	if !equalStrings(sorted(got), []string{"a.md", "b.md"}) {
		t.Errorf("events for %q, want a.md and b.md", got)
	}
}

// TestCreatedAndGoneBeforeLooked plays a folder created and removed
// before the watcher handled its creation (a branch checked out and
// switched away at once, on a busy machine): no event names the files it
// held, which a Walk may have read meanwhile, so the folder is swept. So is
// a folder created and still there, after its files are reported; one the
// Walk would not enter (hidden, here) is not.
func TestCreatedAndGoneBeforeLooked(t *testing.T) {
	root := t.TempDir()
	const debounce = 500 * time.Millisecond
	w := idleWatcher(t, root, debounce)
	writeTree(t, root, map[string]string{"kept/a.md": "a"})
	t0 := time.Unix(1000, 0)
	for _, name := range []string{"gone", ".hidden", "kept"} {
		w.handle(fsnotify.Event{Name: filepath.Join(root, name), Op: fsnotify.Create}, t0)
	}
	got := flushed(w, t0.Add(debounce))
	sort.Strings(got)
	if want := []string{"changed kept/a.md", "sweep gone", "sweep kept"}; !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
