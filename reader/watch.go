package reader

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrWatcherClosed is returned by Run on a Watcher that was closed or is
// already running.
var ErrWatcherClosed = errors.New("reader: watcher closed or already running; create a new Watcher")

// ErrWatchLimit marks a folder that could not be watched because the
// system's limit on watches or open files was reached. It is carried by a
// Rescan event.
var ErrWatchLimit = errors.New("reader: watch limit reached")

// EventOp says what happened to a document.
type EventOp uint8

// Event operations.
const (
	// Changed means the document was created or modified and should be
	// (re)read.
	Changed EventOp = iota + 1
	// Removed means the document no longer exists.
	Removed
	// Rescan means events may have been lost (the kernel's event queue
	// overflowed, or a folder could not be watched): reconcile the whole
	// folder with a Walk. Its Event has an empty ID.
	Rescan
)

// String returns "changed", "removed" or "rescan".
func (op EventOp) String() string {
	switch op {
	case Changed:
		return "changed"
	case Removed:
		return "removed"
	case Rescan:
		return "rescan"
	}
	return "EventOp(" + strconv.Itoa(int(op)) + ")"
}

// Event reports a debounced change to one document.
type Event struct {
	// ID is the document id (root-relative path with '/' separators); it is
	// empty for Rescan.
	ID string
	// Op is what happened.
	Op EventOp
	// Err says why a Rescan was needed; it is nil for other ops.
	Err error
}

// WatchOptions tunes a Watcher.
type WatchOptions struct {
	// Debounce is how long a path must stay quiet before its event is sent;
	// a burst of changes to one path gives one event. Default 500ms.
	Debounce time.Duration `yaml:"debounce"`
	// MaxDelay bounds how long a path that keeps changing is held back.
	// Default 10s; it must be at least Debounce.
	MaxDelay time.Duration `yaml:"maxDelay"`
}

// Default watch settings.
const (
	DefaultDebounce = 500 * time.Millisecond
	DefaultMaxDelay = 10 * time.Second
)

// WithDefaults returns o with zero settings replaced by their defaults.
func (o WatchOptions) WithDefaults() WatchOptions {
	if o.Debounce == 0 {
		o.Debounce = DefaultDebounce
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = max(DefaultMaxDelay, o.Debounce)
	}
	return o
}

// Validate reports the first invalid setting as a *ConfigError naming it
// ("watch.debounce" or "watch.maxDelay").
func (o WatchOptions) Validate() error {
	if o.Debounce < 0 {
		return &ConfigError{Setting: "watch.debounce", Reason: "must not be negative; use a duration such as 500ms"}
	}
	if o.MaxDelay < o.Debounce {
		return &ConfigError{Setting: "watch.maxDelay", Reason: "must be at least watch.debounce (" + o.Debounce.String() + ")"}
	}
	return nil
}

// Watcher reports changes to the documents of a folder as debounced events
// per document id. It watches every selected folder under the root,
// including folders created or moved in later (whose existing files are
// reported at once), and ignores editor temporary files (*~, .*.swp, .*.swx,
// *.tmp, .#*) and paths that Config does not select. Symbolic links to
// folders are not followed.
//
// Create a Watcher before the initial Walk so no change falls in between.
type Watcher struct {
	root    string
	m       *matcher
	opts    WatchOptions
	fsw     *fsnotify.Watcher
	events  <-chan fsnotify.Event
	errs    <-chan error
	started atomic.Bool
	closed  atomic.Bool
	close   sync.Once

	// Owned by the goroutine that calls Run.
	dirs     map[string]bool     // watched folders by root-relative path ("" is the root)
	known    map[string]bool     // ids of documents believed to exist
	pending  map[string]*pending // ids waiting for their quiet period
	seq      uint64
	nextDue  time.Time // no pending id is due before this; zero if none pending
	armed    time.Time // when the timer is set to fire; zero if not set
	ready    []Event   // ready[head:] are debounced events not yet sent
	head     int
	readyIdx map[string]int // index in ready of the queued event for an id
	limitErr error          // a watch could not be added
}

// pending is one id inside its quiet period.
type pending struct {
	first, due time.Time
	seq        uint64
}

// NewWatcher starts watching cfg.Dir (with cfg's defaults applied) and every
// selected folder below it. It returns a *ConfigError for an invalid setting
// or a missing root. Call Run to receive events, or Close to give up.
func NewWatcher(cfg Config, opts WatchOptions) (*Watcher, error) {
	cfg = cfg.WithDefaults()
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if _, err := resolveRoot(cfg.Dir); err != nil {
		return nil, err
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, watchErr(cfg.Dir, err)
	}
	w := &Watcher{
		root: cfg.Dir, m: compile(cfg), opts: opts, fsw: fsw, events: fsw.Events, errs: fsw.Errors,
		dirs: map[string]bool{}, known: map[string]bool{}, pending: map[string]*pending{}, readyIdx: map[string]int{},
	}
	if err := fsw.Add(cfg.Dir); err != nil {
		fsw.Close()
		return nil, watchErr(cfg.Dir, err)
	}
	w.dirs[""] = true
	w.scan("", false, time.Time{})
	return w, nil
}

func watchErr(dir string, err error) error {
	if isLimit(err) {
		return &ConfigError{Setting: "source.dir", Reason: "cannot watch " + dir + ": the system's watch limit is reached; raise fs.inotify.max_user_watches or the open-file limit", Cause: err}
	}
	return &ConfigError{Setting: "source.dir", Reason: "cannot watch " + dir, Cause: err}
}

func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// Close stops watching. It is safe to call more than once and from any
// goroutine; a running Run returns.
func (w *Watcher) Close() error {
	var err error
	w.close.Do(func() {
		w.closed.Store(true)
		err = w.fsw.Close()
	})
	return err
}

// Run sends debounced events on out until ctx is done, then closes the
// watcher and out and returns nil. If the Watcher was closed or Run was
// called before, it returns ErrWatcherClosed at once and leaves out open
// (out may be the channel of the Run that owns it). It returns an error,
// after closing out, if the underlying watcher fails. Run starts no goroutines of its own; the watch
// itself (fsnotify's reader) is stopped before Run returns.
func (w *Watcher) Run(ctx context.Context, out chan<- Event) error {
	if w.closed.Load() || !w.started.CompareAndSwap(false, true) {
		return ErrWatcherClosed
	}
	defer close(out)
	defer w.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	if w.limitErr != nil {
		w.rescan(w.limitErr)
	}
	for {
		var send chan<- Event
		var next Event
		if w.head < len(w.ready) {
			send, next = out, w.ready[w.head]
		}
		select {
		case <-ctx.Done():
			return nil
		case send <- next:
			w.pop()
		case ev, ok := <-w.events:
			if !ok {
				return w.stopped()
			}
			w.handle(ev, time.Now())
		case err, ok := <-w.errs:
			if !ok {
				return w.stopped()
			}
			w.rescan(err)
		case <-timer.C:
			w.armed = time.Time{}
			w.flush(time.Now())
		}
		if w.limitErr != nil {
			w.rescan(w.limitErr)
		}
		w.arm(timer)
	}
}

// stopped is Run's result when fsnotify's channels close.
func (w *Watcher) stopped() error {
	if w.closed.Load() {
		return nil
	}
	return errors.New("reader: file watcher stopped unexpectedly; restart the watch")
}

// handle records one file-system event.
func (w *Watcher) handle(ev fsnotify.Event, now time.Time) {
	rel, ok := w.rel(ev.Name)
	if !ok {
		return
	}
	if rel == "" { // the root itself went away
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.dropDir("", now)
		}
		return
	}
	if isEditorTemp(path.Base(rel)) {
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.dropDir(rel, now)
		w.touchFile(rel, now)
	}
	if ev.Has(fsnotify.Create) {
		fi, err := os.Lstat(ev.Name)
		if err == nil && fi.IsDir() {
			if !w.dirs[rel] && w.m.descend(rel) {
				w.addDir(rel)
				w.scan(rel, true, now)
			}
			return
		}
		w.touchFile(rel, now)
	}
	if ev.Has(fsnotify.Write) {
		w.touchFile(rel, now)
	}
}

func (w *Watcher) rel(name string) (string, bool) {
	r, err := filepath.Rel(w.root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		return "", true
	}
	return filepath.ToSlash(r), true
}

// isEditorTemp reports whether name is an editor's temporary or backup file.
func isEditorTemp(name string) bool {
	return strings.HasSuffix(name, "~") || strings.HasSuffix(name, ".tmp") || strings.HasPrefix(name, ".#") ||
		(strings.HasPrefix(name, ".") && (strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx")))
}

func (w *Watcher) addDir(rel string) {
	if err := w.fsw.Add(filepath.Join(w.root, filepath.FromSlash(rel))); err != nil {
		if isLimit(err) && w.limitErr == nil {
			w.limitErr = &FileError{Path: rel, Err: ErrWatchLimit, Detail: "folder not watched; raise fs.inotify.max_user_watches", Cause: err}
		}
		return // a folder removed meanwhile needs no watch
	}
	w.dirs[rel] = true
}

// scan watches the folders below rel and records their selected files: as
// known (touch false) or as changed (touch true).
func (w *Watcher) scan(rel string, touch bool, now time.Time) {
	entries, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		return
	}
	for _, e := range entries {
		id := joinRel(rel, e.Name())
		switch {
		case e.IsDir():
			if !w.dirs[id] && w.m.descend(id) {
				w.addDir(id)
			}
			if w.dirs[id] {
				w.scan(id, touch, now)
			}
		case isEditorTemp(e.Name()) || !w.m.match(id):
		case touch:
			w.touch(id, now)
		default:
			w.known[id] = true
		}
	}
}

// dropDir forgets the watched folder rel and everything below it, and
// touches the known documents under it so they are reported removed.
func (w *Watcher) dropDir(rel string, now time.Time) {
	prefix := rel + "/"
	if rel == "" {
		prefix = ""
	}
	for d := range w.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			_ = w.fsw.Remove(filepath.Join(w.root, filepath.FromSlash(d))) // fsnotify may have dropped it already
		}
	}
	for id := range w.known {
		if strings.HasPrefix(id, prefix) {
			w.touch(id, now)
		}
	}
}

func (w *Watcher) touchFile(rel string, now time.Time) {
	if w.m.match(rel) || w.known[rel] {
		w.touch(rel, now)
	}
}

// touch starts or extends id's quiet period.
func (w *Watcher) touch(id string, now time.Time) {
	p := w.pending[id]
	if p == nil {
		p = &pending{first: now}
		w.pending[id] = p
	}
	w.seq++
	p.seq = w.seq
	p.due = now.Add(w.opts.Debounce)
	if limit := p.first.Add(w.opts.MaxDelay); limit.Before(p.due) {
		p.due = limit
	}
	if w.nextDue.IsZero() || p.due.Before(w.nextDue) {
		w.nextDue = p.due
	}
}

// arm sets the timer to the earliest due time, if it is not set earlier.
func (w *Watcher) arm(t *time.Timer) {
	next := w.nextDue
	if next.IsZero() || (!w.armed.IsZero() && !next.Before(w.armed)) {
		return
	}
	w.armed = next
	t.Reset(time.Until(next))
}

// flush turns the ids whose quiet period is over into events, in the order
// of their last change, deciding each from the file's current state.
func (w *Watcher) flush(now time.Time) {
	type due struct {
		id string
		p  *pending
	}
	var list []due
	w.nextDue = time.Time{}
	for id, p := range w.pending {
		switch {
		case !p.due.After(now):
			list = append(list, due{id, p})
		case w.nextDue.IsZero() || p.due.Before(w.nextDue):
			w.nextDue = p.due
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].p.seq < list[j].p.seq })
	for _, d := range list {
		delete(w.pending, d.id)
		fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(d.id)))
		switch {
		case err == nil && fi.Mode().IsRegular() && w.m.match(d.id):
			w.known[d.id] = true
			w.enqueue(Event{ID: d.id, Op: Changed})
		case w.known[d.id]:
			delete(w.known, d.id)
			w.enqueue(Event{ID: d.id, Op: Removed})
		}
	}
}

// enqueue adds ev to the ready queue, replacing a queued event for the same id.
func (w *Watcher) enqueue(ev Event) {
	if ev.ID != "" {
		if i, ok := w.readyIdx[ev.ID]; ok {
			w.ready[i] = ev
			return
		}
		w.readyIdx[ev.ID] = len(w.ready)
	}
	w.ready = append(w.ready, ev)
}

// pop removes the event just sent.
func (w *Watcher) pop() {
	delete(w.readyIdx, w.ready[w.head].ID)
	w.head++
	if w.head == len(w.ready) {
		w.ready, w.head = w.ready[:0], 0
	}
}

// rescan recovers from lost events (cause is fsnotify.ErrEventOverflow, a
// watch-limit *FileError or another watcher error): it drops what is queued,
// watches any folder not yet watched, re-reads the set of documents and
// queues one Rescan event carrying cause.
func (w *Watcher) rescan(cause error) {
	clear(w.pending)
	w.nextDue = time.Time{}
	clear(w.readyIdx)
	w.ready, w.head = w.ready[:0], 0
	clear(w.known)
	w.scan("", false, time.Time{})
	w.limitErr = nil // reported by this Rescan
	w.enqueue(Event{Op: Rescan, Err: cause})
}
