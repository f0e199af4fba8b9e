package reader

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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

// ErrRootGone marks a watch that ended because its root folder was removed
// or renamed away; Run returns it wrapped in a *RootError.
var ErrRootGone = errors.New("reader: watched folder is gone")

// RootError is returned by Watcher.Run when the root folder itself was
// removed or renamed away, or when its path leads to another folder (see
// Watcher.CheckRoot). A Watcher cannot follow it: a folder created later at
// the same path is another folder, which nothing watches. The documents
// already reported stay as they are (an unmounted or moved folder must not
// empty an index); start a new watch once the folder is back, and its
// initial reconciliation catches up.
type RootError struct {
	// Dir is the root folder, as given in Config.Dir.
	Dir string
	// Renamed is true if the folder was renamed or moved away, false if it
	// was deleted or Replaced.
	Renamed bool
	// Replaced is true if Dir now leads to another folder than the one
	// watched, though that one was not seen to go: a symbolic link on the
	// path was switched (ln -sfn), or a folder above it was renamed and
	// another put in its place.
	Replaced bool
}

// Error names the folder and says what to do.
func (e *RootError) Error() string {
	switch {
	case e.Replaced:
		return "reader: watched folder " + e.Dir + " now leads to another folder (a symbolic link on the path was switched, or a folder above it was renamed and another put in its place); changes can no longer be followed: start the watch again to follow the folder now there"
	case e.Renamed:
		return "reader: watched folder " + e.Dir + " was renamed or moved away; changes can no longer be followed: restore it (source.dir) and start the watch again"
	}
	return "reader: watched folder " + e.Dir + " was deleted; changes can no longer be followed: restore it (source.dir) and start the watch again"
}

// Unwrap returns ErrRootGone.
func (e *RootError) Unwrap() error { return ErrRootGone }

// EventOp says what happened to a document.
type EventOp uint8

// Event operations.
const (
	// Changed means the document was created or modified and should be
	// (re)read.
	Changed EventOp = iota + 1
	// Removed means the document no longer exists. It is final: if a file
	// appears at the path again, a Changed event of its own follows once it
	// is quiet. It is also sent for a file created and removed within one
	// quiet period, which no Changed event named: a reader of the folder
	// that ran meanwhile (a Walk) may have seen it.
	Removed
	// Rescan means events may have been lost (the kernel's event queue
	// overflowed, or the watch limit kept a folder from being watched):
	// reconcile the whole folder with a Walk. Its Event has an empty ID.
	Rescan
	// Failed means the folder ID could not be watched, or a watched
	// folder can no longer be read (its permissions do not allow it, say),
	// so changes below it are not seen or cannot be read: report it as
	// Walk reports an unreadable folder. Err is a *FileError wrapping
	// ErrUnreadable. A Removed event for ID follows once the folder is
	// watched and readable after all (a change of its permissions, which
	// also reports every document below it Changed) or is gone.
	Failed
	// Sweep means that the folder ID was created (or moved in) since the
	// watcher started, whether or not it is still there: documents below it
	// whose file is gone should be removed. A reader of the folder that ran
	// meanwhile (a Walk) may have read files there that were gone before
	// the watcher could look into the folder, so that no event names them.
	// It is also sent for a folder that the watch limit kept from being
	// watched (see Watcher.Unwatched) once it is removed or moved away: a
	// Walk read its documents, which the watcher never listed. It is sent
	// once the folder is quiet.
	Sweep
)

// String returns "changed", "removed", "rescan", "failed" or "sweep".
func (op EventOp) String() string {
	switch op {
	case Changed:
		return "changed"
	case Removed:
		return "removed"
	case Rescan:
		return "rescan"
	case Failed:
		return "failed"
	case Sweep:
		return "sweep"
	}
	return "EventOp(" + strconv.Itoa(int(op)) + ")"
}

// Event reports a debounced change to one document.
type Event struct {
	// ID is the document id (root-relative path with '/' separators), or
	// for Failed and Sweep a folder's; it is empty for Rescan.
	ID string
	// Op is what happened.
	Op EventOp
	// Err says why a Rescan was needed or why a folder Failed; it is nil
	// for Changed, Removed and Sweep.
	Err error
}

// Key identifies what ev is about, for coalescing: the document ID, or for
// a Sweep the folder ID with a trailing '/', which no document id has, so
// that a Sweep of a folder and an event of a document of the same name
// (the file it replaced, say) do not replace each other. It is empty for a
// Rescan.
func (ev Event) Key() string {
	if ev.Op == Sweep {
		return ev.ID + "/"
	}
	return ev.ID
}

// WatchOptions tunes a Watcher.
type WatchOptions struct {
	// Debounce is how long a path must stay quiet before its event is sent;
	// a burst of changes to one path gives one event. Default 500ms (0
	// takes it). A negative value, such as NoDebounce, turns debouncing
	// off: each change is sent as soon as it is seen (changes that arrive
	// together still give one event per path), so a file being written
	// may be reported, and read, more than once; but a document found gone
	// is reported Removed only once it has stayed gone for 100ms, so that
	// an editor's save, which moves the file away before the new one takes
	// its place, is a change, not a removal and a new document.
	Debounce time.Duration `yaml:"debounce"`
	// MaxDelay bounds how long a path that keeps changing is held back.
	// Default 10s, or Debounce if that is longer; it must be at least
	// Debounce. Without debouncing it does not matter.
	MaxDelay time.Duration `yaml:"maxDelay"`
	// LimitRetry is how often, while the system's watch limit keeps
	// folders from being watched (see Watcher.Unwatched), they are tried
	// again; each try sends a Rescan, since their changes are not seen.
	// Default 1m.
	LimitRetry time.Duration `yaml:"limitRetry"`
	// RootCheck is how often Run checks, between events, that the root's
	// path still leads to the watched folder (see Watcher.CheckRoot): a
	// symbolic link on the path switched with ln -sfn, or a folder above it
	// renamed, gives no event in the watched folder, which may never change
	// again. Default 1s.
	RootCheck time.Duration `yaml:"rootCheck"`
}

// Default watch settings.
const (
	DefaultDebounce   = 500 * time.Millisecond
	DefaultMaxDelay   = 10 * time.Second
	DefaultLimitRetry = time.Minute
	DefaultRootCheck  = time.Second
)

// NoDebounce turns debouncing off when set as WatchOptions.Debounce: each
// change is sent as soon as it is seen. (A zero Debounce takes
// DefaultDebounce.)
const NoDebounce time.Duration = -1

// quiet returns how long a path must stay quiet: Debounce, or 0 if
// debouncing is off.
func (o WatchOptions) quiet() time.Duration { return max(o.Debounce, 0) }

// WithDefaults returns o with zero settings replaced by their defaults.
func (o WatchOptions) WithDefaults() WatchOptions {
	if o.Debounce == 0 {
		o.Debounce = DefaultDebounce
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = max(DefaultMaxDelay, o.Debounce)
	}
	if o.LimitRetry == 0 {
		o.LimitRetry = DefaultLimitRetry
	}
	if o.RootCheck == 0 {
		o.RootCheck = DefaultRootCheck
	}
	return o
}

// Validate reports the first invalid setting as a *ConfigError naming it
// ("watch.maxDelay", "watch.limitRetry" or "watch.rootCheck"). Call WithDefaults first to
// accept zero settings.
func (o WatchOptions) Validate() error {
	if o.MaxDelay < 0 {
		return &ConfigError{Setting: "watch.maxDelay", Reason: "must not be negative; use a duration such as 10s, at least watch.debounce"}
	}
	if o.MaxDelay < o.Debounce {
		return &ConfigError{Setting: "watch.maxDelay", Reason: "must be at least watch.debounce (" + o.Debounce.String() + ")"}
	}
	if o.LimitRetry < 0 {
		return &ConfigError{Setting: "watch.limitRetry", Reason: "must not be negative; use a duration such as 1m"}
	}
	if o.RootCheck < 0 {
		return &ConfigError{Setting: "watch.rootCheck", Reason: "must not be negative; use a duration such as 1s"}
	}
	return nil
}

// Watcher reports changes to the documents of a folder as debounced events
// per document id. It watches every selected folder under the root,
// including folders created or moved in later (whose existing files are
// reported at once), and ignores editor temporary files (*~, .*.swp, .*.swx,
// *.tmp, .#*, *___jb_tmp___, *___jb_old___) and paths that Config does not
// select. Folders are watched
// whatever their name, like Walk enters them.
//
// Symbolic links are followed as Walk follows them: a link to a file or
// folder inside the root is a document (or folder of documents) of its own,
// reported whenever its target changes; the target's folders are watched
// even if Config does not select them. Links to targets outside the root,
// broken links and links that loop are not followed: Walk reports them as
// failed documents, and so they are reported Changed, for the reader of
// the event to fail them alike (Stat reports why), not Removed; that
// includes a link whose target is removed, and a link to a folder (outside
// the root, or the root or a folder above the link), which Walk reports
// whatever the include patterns and which is reported Removed once it is
// gone or leads to a folder Walk enters. A broken link whose missing
// target lies inside the root is reported Changed again when the target
// appears. A link is resolved when it is seen: if its target is later
// replaced by a link elsewhere, only the next Rescan notices.
//
// A folder that cannot be watched (its permissions, say), or a watched
// folder that can no longer be read, is reported with a Failed event and
// retried when its permissions change. A change of permissions (or other
// attributes) of a watched folder reports every document below it Changed
// once it is quiet, so that documents whose read failed while it was closed
// are read again. If the root itself is removed or renamed away, or its
// path comes to lead to another folder, Run ends with a *RootError.
//
// A folder that the system's watch limit keeps from being watched is not
// reported Failed: Unwatched counts it, each Rescan tries it again, and
// while any remain a Rescan is sent every WatchOptions.LimitRetry, so that
// their changes are reconciled rather than lost.
//
// Create a Watcher before the initial Walk so no change falls in between.
type Watcher struct {
	root     string
	realRoot string      // root with symbolic links resolved
	rootInfo fs.FileInfo // of root when watching started: see CheckRoot
	m        *matcher
	opts     WatchOptions
	fsw      *fsnotify.Watcher
	events   <-chan fsnotify.Event
	errs     <-chan error
	addWatch func(string) error // fsw.Add; tests inject failures
	started  atomic.Bool
	closed   atomic.Bool
	close    sync.Once

	// Owned by the goroutine that calls Run.
	dirs     *pathSet            // watched folders by root-relative path ("" is the root)
	failed   map[string]bool     // folders reported Failed, not since watched and readable, or gone
	limited  map[string]int      // folders the watch limit kept from being watched, tried again by rescan: the number of folders there and below
	nLimited int                 // the sum of limited's values
	known    *pathSet            // ids of documents believed to exist
	links    map[string]link     // followed symbolic links by id
	targets  map[string]*target  // their resolved targets by root-relative path
	fresh    []string            // links registered since the last settle
	pending  map[string]*pending // ids waiting for their quiet period
	seq      uint64
	nextDue  time.Time // no pending id is due before this; zero if none pending
	armed    time.Time // when the timer is set to fire; zero if not set
	ready    []Event   // ready[head:] are debounced events not yet sent
	head     int
	readyIdx map[string]int // index in ready of the queued event for an id
	limitErr error          // a watch could not be added
	rootErr  error          // the root went away: Run returns it

	waiting   atomic.Int64 // len(pending) + len(ready[head:]) after Run's last step, for Waiting
	unwatched atomic.Int64 // len(limited) after Run's last step, for Unwatched
}

// pending is one id inside its quiet period.
type pending struct {
	first, due time.Time
	seq        uint64
	recheck    bool // id is a watched folder whose permissions changed: see recheck
	sweep      bool // id is a folder created since the watcher started: see created
	held       bool // without debouncing, id was found gone and waits vanishGrace: see hold
}

// vanishGrace is how long, without debouncing (NoDebounce), a document
// found gone must stay gone before it is reported Removed. Editors save by
// moving the file away (to a backup, or out of the way of the new one)
// before they write or move in the new file: reported at once, that moment
// would remove the document, and the new file, its text mostly the same,
// would be embedded anew, every chunk of it, on every save. With
// debouncing, the quiet period that a removal starts covers it.
const vanishGrace = 100 * time.Millisecond

// link is a symbolic link that Walk follows.
type link struct {
	target string // root-relative path of the resolved target
	dir    bool   // the target is a folder
}

// target is the resolved target of one or more links.
type target struct {
	dir   bool
	links []string // ids of the links to it
}

// maxAliases bounds the ids one path is reachable under through links.
const maxAliases = 256

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
	real, err := resolveRoot(cfg.Dir)
	if err != nil {
		return nil, err
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, watchErr(cfg.Dir, err)
	}
	// Taken before the watch is added: if the path is switched in between,
	// the first check finds the watched folder is not the one recorded.
	rootInfo, err := os.Stat(cfg.Dir)
	if err != nil {
		fsw.Close()
		return nil, watchErr(cfg.Dir, err)
	}
	w := &Watcher{
		root: cfg.Dir, realRoot: real, rootInfo: rootInfo, m: compile(cfg), opts: opts, fsw: fsw, events: fsw.Events, errs: fsw.Errors, addWatch: fsw.Add,
		dirs: newPathSet(), failed: map[string]bool{}, limited: map[string]int{}, known: newPathSet(), links: map[string]link{}, targets: map[string]*target{},
		pending: map[string]*pending{}, readyIdx: map[string]int{},
	}
	if err := fsw.Add(cfg.Dir); err != nil {
		fsw.Close()
		return nil, watchErr(cfg.Dir, err)
	}
	w.dirs.add("")
	w.scan("", false, time.Time{})
	w.settle(false, time.Time{})
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

// Waiting returns the number of documents whose change the running
// Watcher has seen but not sent yet: inside their quiet period
// (WatchOptions.Debounce, up to MaxDelay) or debounced and waiting for the
// receiver. It may be called from any goroutine; it is 0 before Run.
func (w *Watcher) Waiting() int { return int(w.waiting.Load()) }

// Unwatched returns the number of folders the running Watcher could not
// watch because the system's limit on watches (fs.inotify.max_user_watches
// on Linux) or open files was reached, counting the folders below them
// (those Walk enters), which are not watched either: about how many more
// watches it needs. Their changes are not seen: while it is above 0, the
// Watcher tries them again and sends a Rescan every WatchOptions.LimitRetry.
// It may be called from any goroutine; it is 0 before Run.
func (w *Watcher) Unwatched() int { return int(w.unwatched.Load()) }

// CheckRoot returns a *RootError (Replaced) if Config.Dir no longer leads
// to the folder the Watcher watches: a symbolic link on the path was
// switched to another folder, or a folder above it was renamed and another
// put in its place. No event says so (watches follow the folder, not its
// path), while documents are read through the path, so they would be read
// from the other folder. Run checks before it reports events, before each
// Rescan and every WatchOptions.RootCheck in between; a caller about to read the folder through its path (a full
// reconciliation) may check too. It returns nil if nothing is at the path
// or it cannot be looked up: the root's own removal is reported by Run,
// and reading the path then fails. It may be called from any goroutine.
func (w *Watcher) CheckRoot() error {
	fi, err := os.Stat(w.root)
	if err != nil || os.SameFile(fi, w.rootInfo) {
		return nil
	}
	return &RootError{Dir: w.root, Replaced: true}
}

// Run sends debounced events on out until ctx is done, then closes the
// watcher and out and returns nil. If the Watcher was closed or Run was
// called before, it returns ErrWatcherClosed at once and leaves out open
// (out may be the channel of the Run that owns it). It returns an error,
// after closing out, if the underlying watcher fails, or a *RootError
// (wrapping ErrRootGone) if the root folder is removed or renamed away or
// its path leads to another folder (see CheckRoot); events not yet sent are
// dropped then. Run starts no goroutines of its own; the watch itself
// (fsnotify's reader) is stopped before Run returns.
func (w *Watcher) Run(ctx context.Context, out chan<- Event) error {
	if w.closed.Load() || !w.started.CompareAndSwap(false, true) {
		return ErrWatcherClosed
	}
	defer close(out)
	defer w.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	retry := time.NewTimer(time.Hour) // runs while folders are unwatched
	retry.Stop()
	defer retry.Stop()
	retrying := false
	// No event says that the root's path leads to another folder now.
	rootCheck := time.NewTicker(w.opts.RootCheck)
	defer rootCheck.Stop()
	for {
		if w.limitErr != nil && w.rootErr == nil {
			w.rescan(w.limitErr)
		}
		if w.rootErr != nil {
			return w.rootErr
		}
		w.arm(timer)
		if len(w.limited) > 0 != retrying {
			retrying = !retrying
			if retrying {
				retry.Reset(w.opts.LimitRetry)
			} else {
				retry.Stop()
			}
		}
		w.waiting.Store(int64(len(w.pending) + len(w.ready) - w.head))
		w.unwatched.Store(int64(w.nLimited))
		var send chan<- Event
		var next Event
		if w.head < len(w.ready) {
			send, next = out, w.ready[w.head]
		}
		var retryC <-chan time.Time
		if retrying {
			retryC = retry.C
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
		case <-retryC:
			retrying = false
			w.rescan(limitFault(w.firstLimited(), nil))
		case <-rootCheck.C:
			if err := w.CheckRoot(); err != nil {
				w.rootErr = err
			}
		}
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
	if rel == "" { // the root itself
		switch {
		case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
			w.rootErr = &RootError{Dir: w.root, Renamed: !ev.Has(fsnotify.Remove)}
		case ev.Has(fsnotify.Chmod):
			w.recheckLater("", now)
		}
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.gone(rel, now)
		// Something may stand at the path again already: a folder renamed
		// over this one (the replaced folder reports its removal late) or a
		// file created anew.
		w.appeared(rel, now)
	}
	if ev.Has(fsnotify.Create) {
		w.created(rel, now)
	}
	if ev.Has(fsnotify.Write) {
		w.mark(rel, now)
	}
	if ev.Has(fsnotify.Chmod) {
		w.chmod(rel, now)
	}
	w.settle(true, now)
}

// gone forgets what stood at rel: a watched folder and everything below it,
// a link, a folder that could not be watched; the documents there are
// touched, so that flush reports those that are gone.
func (w *Watcher) gone(rel string, now time.Time) {
	w.forget(rel, now)
	w.mark(rel, now)
}

// forget drops what the watcher tracks at rel, if anything: a watched
// folder, a folder that could not be watched, or a link (see dropDir).
func (w *Watcher) forget(rel string, now time.Time) {
	if _, linked := w.links[rel]; w.dirs.contains(rel) || w.failed[rel] || w.limited[rel] > 0 || linked {
		w.dropDir(rel, now)
	}
}

// created handles a Create event at rel, as appeared, and has a folder
// created or moved in there swept once quiet (see Sweep): a Walk may have
// read files in it that were gone before the watcher looked, a folder of a
// branch checked out and switched away at once, say. If nothing stands at
// rel any more, it may have been such a folder: short-lived files (sed
// -i's, say) cannot be told from folders once gone, and are swept too,
// but for an editor's temporary files, the common case (an atomic save).
func (w *Watcher) created(rel string, now time.Time) {
	if err := w.appeared(rel, now); err == nil {
		if !w.dirs.contains(rel) {
			return
		}
	} else if !removed(err) || !w.m.descend(rel) || isEditorTemp(path.Base(rel)) {
		return // a path the watcher cannot look at is another matter: see flush
	}
	w.touch(rel, now)
	w.pending[rel].sweep = true
}

// appeared handles whatever stands at rel now (after a Create, or after a
// Remove in case it came back), or returns why nothing can be seen there
// (from os.Lstat): a folder is watched afresh and its files are reported,
// even if a folder of that name was watched before (it may be another
// folder renamed over it); a link is followed; a file is touched.
func (w *Watcher) appeared(rel string, now time.Time) error {
	fi, err := os.Lstat(w.abs(rel))
	if err != nil {
		w.mark(rel, now) // gone again: flush decides
		return err
	}
	w.forget(rel, now)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		w.link(rel, true, now)
	case fi.IsDir():
		w.enter(rel, now)
	default:
		w.mark(rel, now)
	}
	return nil
}

// enter watches the folder rel, unless it is watched already or not to be
// watched, and touches the documents below it.
func (w *Watcher) enter(rel string, now time.Time) {
	if !w.dirs.contains(rel) && w.wanted(rel) && w.addDir(rel) {
		w.scan(rel, true, now)
	}
}

// chmod handles a change of permissions or other attributes: a folder that
// could not be watched is tried again, a watched folder is checked again
// once quiet (see recheck), and a document is touched so a failed read is
// retried (the pipeline's size and modification time check keeps
// unchanged documents cheap).
func (w *Watcher) chmod(rel string, now time.Time) {
	fi, err := os.Lstat(w.abs(rel))
	switch {
	case err != nil || !fi.IsDir():
		w.mark(rel, now)
	case w.dirs.contains(rel):
		w.recheckLater(rel, now)
	default:
		w.enter(rel, now)
	}
}

// recheckLater starts or extends the quiet period of the watched folder
// rel, after which flush rechecks it, unless a recheck of a folder above it
// is due already (which covers it). Deferring the recheck makes a chmod -R
// cost one scan of the tree, not one per folder.
func (w *Watcher) recheckLater(rel string, now time.Time) {
	if coveredBy(rel, func(p string) bool { q := w.pending[p]; return q != nil && q.recheck }) {
		return
	}
	w.touch(rel, now)
	w.pending[rel].recheck = true
}

// recheck looks at the watched folder rel again after a change of its
// permissions (or other attributes) has settled. A folder that cannot be
// listed is reported Failed (once), as Walk reports it. Otherwise the
// failures of rel and of the watched folders below it that can be listed
// now are over (Removed), and every document below rel, known or found, is
// touched: its read is retried if it failed while the folder was closed,
// one removed meanwhile is reported Removed, and the pipeline's size and
// modification time check keeps unchanged ones cheap.
func (w *Watcher) recheck(rel string, now time.Time) {
	if !w.dirs.contains(rel) { // gone or no longer watched meanwhile
		return
	}
	if _, err := os.ReadDir(w.abs(rel)); err != nil {
		if !errors.Is(err, fs.ErrPermission) {
			return // gone meanwhile: its removal is reported
		}
		if _, serr := os.Stat(w.abs(rel)); serr == nil {
			w.fail(rel, unreadable, err)
		} else if dir, ok := w.closedAbove(rel); ok {
			w.fail(dir, unreadable, err)
		}
		return
	}
	for id := range w.failed {
		if !inside(id, rel) || !w.dirs.contains(id) {
			continue // a folder still not watched is retried by scan
		}
		if _, err := os.ReadDir(w.abs(id)); err == nil {
			w.recovered(id)
		}
	}
	for _, id := range w.known.under(rel) {
		w.mark(id, now)
	}
	w.scan(rel, true, now)
	w.settle(true, now)
}

// What a Failed folder misses, as its FileError's Detail.
const (
	unreadable = "folder cannot be read; its documents are read again once its permissions allow it"
	unwatched  = "folder cannot be watched; changes in it are missed until its permissions allow it"
)

// fail reports the folder rel Failed (detail says what is missed, cause
// why), once until it recovers or is gone. Only folders Walk lists are
// reported, not the root nor folders watched for a link's sake.
func (w *Watcher) fail(rel, detail string, cause error) {
	if rel == "" || w.failed[rel] || !w.m.descend(rel) {
		return
	}
	w.failed[rel] = true
	w.enqueue(Event{ID: rel, Op: Failed, Err: &FileError{Path: rel, Err: ErrUnreadable, Detail: detail, Cause: cause}})
}

// recovered ends the failure of the folder rel, if it had one, with a
// Removed event.
func (w *Watcher) recovered(rel string) {
	if w.failed[rel] {
		delete(w.failed, rel)
		w.enqueue(Event{ID: rel, Op: Removed})
	}
}

// closedAbove returns the watched folder that keeps the document id from
// being reached after a permission error: the deepest folder above id that
// can still be looked up. It returns false if that is not a watched folder
// Walk lists (the root, a folder reached through a link) or none is found.
func (w *Watcher) closedAbove(id string) (string, bool) {
	for p := parentRel(id); p != ""; p = parentRel(p) {
		fi, err := os.Stat(w.abs(p))
		switch {
		case err == nil:
			return p, fi.IsDir() && w.dirs.contains(p) && w.m.descend(p)
		case !errors.Is(err, fs.ErrPermission):
			return "", false
		}
	}
	return "", false
}

// rel returns the root-relative path of the event path name, and false if
// it lies outside the root.
func (w *Watcher) rel(name string) (string, bool) { return relTo(w.root, name) }

// abs returns the path on disk of the root-relative path rel.
func (w *Watcher) abs(rel string) string {
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// isEditorTemp reports whether name is an editor's temporary or backup file:
// vim's and emacs's (*~, .*.swp, .*.swx, .#*), the *.tmp of atomic saves, and
// the JetBrains IDEs' safe write (*___jb_tmp___, *___jb_old___).
func isEditorTemp(name string) bool {
	return strings.HasSuffix(name, "~") || strings.HasSuffix(name, ".tmp") || strings.HasPrefix(name, ".#") ||
		(strings.HasPrefix(name, ".") && (strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx"))) ||
		strings.HasSuffix(name, "___jb_tmp___") || strings.HasSuffix(name, "___jb_old___")
}

// wanted reports whether the folder rel is to be watched: Walk enters it,
// or it holds (or leads to) the target of a followed link.
func (w *Watcher) wanted(rel string) bool {
	if w.m.descend(rel) {
		return true
	}
	for t, tg := range w.targets {
		if inside(targetFolder(t, tg.dir), rel) || (tg.dir && inside(rel, t)) {
			return true
		}
	}
	return false
}

// addDir watches the folder rel and reports whether it is watched. A
// folder that cannot be watched for a reason other than the watch limit or
// its removal is reported with a Failed event, once. One the watch limit
// keeps from being watched is recorded in limited, which rescan tries
// again, and makes Run rescan.
func (w *Watcher) addDir(rel string) bool {
	err := w.addWatch(w.abs(rel))
	if err == nil || !isLimit(err) {
		w.unlimit(rel)
	}
	switch {
	case err == nil:
		w.dirs.add(rel)
		w.recovered(rel)
		return true
	case isLimit(err):
		w.unlimit(rel)
		n := 1 + w.foldersBelow(rel)
		w.limited[rel] = n
		w.nLimited += n
		if w.limitErr == nil {
			w.limitErr = limitFault(rel, err)
		}
	case removed(err):
		// removed meanwhile: nothing to watch
	default:
		w.fail(rel, unwatched, err)
	}
	return false
}

// unlimit forgets that the watch limit kept the folder rel from being
// watched.
func (w *Watcher) unlimit(rel string) {
	w.nLimited -= w.limited[rel]
	delete(w.limited, rel)
}

// foldersBelow counts the folders below rel that Walk enters: the watch
// limit keeps them from being watched too, as rel is not.
func (w *Watcher) foldersBelow(rel string) int {
	entries, err := os.ReadDir(w.abs(rel))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if id := joinRel(rel, e.Name()); e.IsDir() && w.m.descend(id) {
			n += 1 + w.foldersBelow(id)
		}
	}
	return n
}

// limitFault is the cause of a Rescan for the folder rel, which the watch
// limit keeps from being watched.
func limitFault(rel string, cause error) error {
	return &FileError{Path: rel, Err: ErrWatchLimit, Detail: "folder not watched; raise fs.inotify.max_user_watches", Cause: cause}
}

// firstLimited returns the first by path of the folders the watch limit
// keeps from being watched.
func (w *Watcher) firstLimited() string {
	if len(w.limited) == 0 {
		return ""
	}
	return slices.Min(slices.Collect(maps.Keys(w.limited)))
}

// scan watches the folders below rel, follows the links there, and records
// their selected files: as known (touch false) or as changed (touch true).
func (w *Watcher) scan(rel string, touch bool, now time.Time) {
	entries, err := os.ReadDir(w.abs(rel))
	if err != nil {
		return
	}
	for _, e := range entries {
		id := joinRel(rel, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			w.link(id, touch, now)
		case e.IsDir():
			if !w.dirs.contains(id) && w.wanted(id) {
				w.addDir(id)
			}
			if w.dirs.contains(id) {
				w.scan(id, touch, now)
			}
		default:
			w.record(id, touch, now)
		}
	}
}

// record notes the file id if Config selects it and it is not an editor's
// temporary file: as known (touch false) or as changed (touch true).
func (w *Watcher) record(id string, touch bool, now time.Time) {
	switch {
	case isEditorTemp(path.Base(id)) || !w.m.match(id):
	case touch:
		w.mark(id, now)
	default:
		w.known.add(id)
	}
}

// link records the symbolic link id. A link Walk follows is registered for
// settle; a link to a file is a document like a file. So is a broken link,
// which Walk reports as a failed document: it is registered with the path
// its target would have (see missing), so that the target's creation
// makes it a document that can be read.
func (w *Watcher) link(id string, touch bool, now time.Time) {
	w.unlink(id)
	fi, err := os.Stat(w.abs(id))
	if err != nil { // a broken or looping link, which Walk reports as failed
		if errors.Is(err, fs.ErrNotExist) {
			if t, ok := w.missing(id); ok {
				w.register(id, link{target: t})
			}
		}
		w.record(id, touch, now)
		return
	}
	t, inRoot := w.resolve(id)
	switch {
	case fi.IsDir():
		// Followed as Walk follows it: inside the root, into a folder
		// Walk enters, and not into a loop.
		// One leaving the root or looping Walk reports as a failed
		// document, whatever the include patterns: so is it reported
		// here, Changed (see flush), and Removed once gone.
		if w.failedDirLink(id) {
			w.failedLink(id, touch, now)
			return
		}
		if inRoot && w.m.descend(id) && !inside(id, t) {
			w.register(id, link{target: t, dir: true})
			if touch && w.known.contains(id) {
				w.touch(id, now) // it failed before: flush ends that
			}
		}
		return
	case inRoot && w.m.isOwn(t):
		return // a link to the manifest or the store: no document, as in Walk
	case inRoot:
		w.register(id, link{target: t})
	}
	// A file, or a link outside the root, which Walk reports as failed.
	w.record(id, touch, now)
}

// ownThroughLink reports whether the path id leads through a followed
// symbolic link to one of Config.Own or a file kept beside it (see
// matcher.ownReal), which Walk does not list.
func (w *Watcher) ownThroughLink(id string) bool {
	if len(w.links) == 0 || len(w.m.own) == 0 {
		return false // without a followed link, match checks the path itself
	}
	real, err := realPath(w.abs(id))
	return err == nil && w.m.ownReal(w.realRoot, real)
}

// failedDirLink reports whether id is a symbolic link to a folder that
// Walk reports as a failed document instead of entering it: in a folder
// Walk enters, its target lies outside the root, or is the root or a folder
// above the link (a loop).
func (w *Watcher) failedDirLink(id string) bool {
	if !isSymlink(w.abs(id)) || !w.m.descend(id) {
		return false
	}
	fi, err := os.Stat(w.abs(id))
	if err != nil || !fi.IsDir() {
		return false
	}
	real, err := realPath(w.abs(id))
	if err != nil {
		return false
	}
	if !within(w.realRoot, real) {
		return true
	}
	active, ok := w.chain(id)
	return ok && active[real]
}

// failedLink records the link id, which Walk reports as a failed document
// (see failedDirLink), as known (touch false) or as changed (touch true).
func (w *Watcher) failedLink(id string, touch bool, now time.Time) {
	if touch {
		w.touch(id, now)
	} else {
		w.known.add(id)
	}
}

// resolve returns the root-relative path of the target of the link id, and
// whether the target lies inside the root.
func (w *Watcher) resolve(id string) (string, bool) {
	real, err := realPath(w.abs(id))
	if err != nil {
		return "", false
	}
	return relTo(w.realRoot, real)
}

// missing returns the root-relative path of the missing target of the
// broken link id (the path the link names, whose folders may be missing
// too), and whether it lies inside the root.
func (w *Watcher) missing(id string) (string, bool) {
	p := w.abs(id)
	dest, err := os.Readlink(p)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(filepath.Dir(p), dest)
	}
	real, err := realPathMissing(dest)
	if err != nil {
		return "", false
	}
	t, ok := relTo(w.realRoot, real)
	return t, ok && t != "" && t != id
}

// realPathMissing is realPath for a path that may not exist: the deepest
// existing folder above it is resolved and the rest appended.
func realPathMissing(p string) (string, error) {
	p = filepath.Clean(p)
	rest := ""
	for {
		real, err := realPath(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func (w *Watcher) register(id string, l link) {
	w.links[id] = l
	tg := w.targets[l.target]
	if tg == nil {
		tg = &target{dir: l.dir}
		w.targets[l.target] = tg
	}
	tg.links = append(tg.links, id)
	w.fresh = append(w.fresh, id)
}

func (w *Watcher) unlink(id string) {
	l, ok := w.links[id]
	if !ok {
		return
	}
	delete(w.links, id)
	if tg := w.targets[l.target]; tg != nil {
		tg.links = slices.DeleteFunc(tg.links, func(s string) bool { return s == id })
		if len(tg.links) == 0 {
			delete(w.targets, l.target)
		}
	}
}

// settle finishes the links registered since the last call: it watches
// their targets' folders (scanning a folder target newly watched, which may
// register more links), then records or touches the documents reached
// through links to folders.
func (w *Watcher) settle(touch bool, now time.Time) {
	var dirLinks []string
	for len(w.fresh) > 0 {
		id := w.fresh[0]
		w.fresh = w.fresh[1:]
		l, ok := w.links[id]
		if !ok {
			continue
		}
		w.watchTarget(l, touch, now)
		if l.dir {
			dirLinks = append(dirLinks, id)
		}
	}
	w.fresh = nil
	for _, id := range dirLinks {
		if _, ok := w.links[id]; ok {
			w.scanThrough(id, touch, now)
		}
	}
}

// watchTarget watches the folders from the root down to l's target folder
// (or the folder holding its target file), so that changes to the target,
// its removal and its return are seen even where Config selects nothing.
func (w *Watcher) watchTarget(l link, touch bool, now time.Time) {
	dir := targetFolder(l.target, l.dir)
	for i := 0; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		p := dir[:i]
		if p == "" || w.dirs.contains(p) {
			continue
		}
		if !w.addDir(p) {
			return
		}
		if p == dir && l.dir {
			w.scan(p, touch, now)
		}
	}
}

// scanThrough records (or touches) the selected files that Walk reaches
// through the link to a folder id, entering each resolved folder at most
// once on any path from the root, as Walk does.
func (w *Watcher) scanThrough(id string, touch bool, now time.Time) {
	if active, ok := w.chain(id); ok {
		w.through(id, active, touch, now)
	}
}

func (w *Watcher) through(dir string, active map[string]bool, touch bool, now time.Time) {
	real, err := realPath(w.abs(dir))
	if err != nil || active[real] || !within(w.realRoot, real) {
		return
	}
	entries, err := os.ReadDir(w.abs(dir))
	if err != nil {
		return
	}
	active[real] = true
	defer delete(active, real)
	for _, e := range entries {
		id := joinRel(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := os.Stat(w.abs(id))
			isDir = err == nil && fi.IsDir()
		}
		switch {
		case isDir && e.Type()&fs.ModeSymlink != 0 && w.failedDirLink(id):
			w.failedLink(id, touch, now)
		case isDir:
			if w.m.descend(id) {
				w.through(id, active, touch, now)
			}
		case isEditorTemp(e.Name()) || !w.m.match(id):
		case touch:
			w.touch(id, now)
		default:
			w.known.add(id)
		}
	}
}

// chain returns the resolved folders from the root down to the parent of
// id, and false if one repeats (Walk stops at such a loop) or cannot be
// resolved.
func (w *Watcher) chain(id string) (map[string]bool, bool) {
	active := map[string]bool{w.realRoot: true}
	for i := 0; i < len(id); i++ {
		if id[i] != '/' {
			continue
		}
		real, err := realPath(w.abs(id[:i]))
		if err != nil || active[real] || !within(w.realRoot, real) {
			return nil, false
		}
		active[real] = true
	}
	return active, true
}

// aliases returns the other ids under which Walk may reach the path id:
// through each followed link to id or to a folder above it, and through
// links to those, recursively. An alias is kept, and looked through, only
// if keep accepts it.
func (w *Watcher) aliases(id string, keep func(string) bool) []string {
	if len(w.targets) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{id: true}
	for queue := []string{id}; len(queue) > 0 && len(out) < maxAliases; queue = queue[1:] {
		x := queue[0]
		for t := x; t != ""; t = parentRel(t) {
			tg := w.targets[t]
			if tg == nil {
				continue
			}
			for _, l := range tg.links {
				a := l + x[len(t):]
				if !seen[a] && keep(a) {
					seen[a] = true
					out = append(out, a)
					queue = append(queue, a)
				}
			}
		}
	}
	return out
}

// selected reports whether id is a document to report: known, or selected
// by Config and not an editor's temporary file.
func (w *Watcher) selected(id string) bool {
	return w.known.contains(id) || (w.m.match(id) && !isEditorTemp(path.Base(id)))
}

// mark touches id, and the ids Walk reaches it under through links, that
// are documents to report.
func (w *Watcher) mark(id string, now time.Time) {
	if w.selected(id) {
		w.touch(id, now)
	}
	reachable := func(a string) bool {
		if w.known.contains(a) {
			return true
		}
		_, ok := w.chain(a)
		return ok
	}
	for _, a := range w.aliases(id, reachable) {
		if w.selected(a) {
			w.touch(a, now)
		}
	}
}

// dropDir forgets the watched folder rel and everything below it (watches,
// links, folders that could not be watched) and touches the known
// documents under it, or under the ids it is reached by through links, so
// they are reported removed. The folders below it that the watch limit
// kept from being watched are swept once quiet (see Sweep).
func (w *Watcher) dropDir(rel string, now time.Time) {
	prefixes := append([]string{rel}, w.aliases(rel, w.known.any)...)
	for _, d := range w.dirs.under(rel) {
		w.dirs.remove(d)
		_ = w.fsw.Remove(w.abs(d)) // fsnotify may have dropped it already
	}
	for id := range w.links {
		if inside(id, rel) {
			w.unlink(id)
		}
	}
	for id := range w.failed {
		if inside(id, rel) {
			delete(w.failed, id)
			w.enqueue(Event{ID: id, Op: Removed}) // the failure is over
		}
	}
	for d := range w.limited {
		if inside(d, rel) {
			w.unlimit(d)
			// Its documents, read by a Walk, were never listed here, so no
			// event names them; and with the last unwatched folder gone, no
			// retry rescans either. A sweep removes those that are gone.
			w.touch(d, now)
			w.pending[d].sweep = true
		}
	}
	for _, p := range prefixes {
		for _, id := range w.known.under(p) {
			w.touch(id, now)
		}
	}
}

// inside reports whether the root-relative path id is dir or below it.
func inside(id, dir string) bool {
	return dir == "" || id == dir || (strings.HasPrefix(id, dir) && id[len(dir)] == '/')
}

// targetFolder returns the folder to watch for the link target t: t itself
// if it is a folder, else the folder holding it.
func targetFolder(t string, dir bool) string {
	if dir {
		return t
	}
	return parentRel(t)
}

// parentRel returns the root-relative folder holding id ("" for the root).
func parentRel(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[:i]
	}
	return ""
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
	p.held = false // a gone path seen changing again waits afresh
	p.due = now.Add(w.opts.quiet())
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
// of their last change, deciding each from the file's current state: a
// selected path that is not a folder is Changed (a regular file is read;
// anything else, a FIFO or a link that cannot be followed say, fails as in
// Walk), a known id with a folder at its path is Removed, and so is a
// selected id with nothing at its path, even one never reported Changed
// (created and removed within its quiet period): a Walk running meanwhile
// may have read it; without debouncing, one with nothing at its path waits
// vanishGrace first (see hold). A folder created since the watcher started is then
// swept (see created), after the events of its files. A selected path that a folder's permissions keep
// from being looked up may be a document: the folder is reported Failed
// (see closedAbove; without one, the id is Changed and its read fails),
// and the change of permissions that opens it again reports the
// documents below it. Watched folders whose
// permissions changed are rechecked first (see recheck). If the root's
// path leads to another folder now, flush reports nothing and sets rootErr
// (see CheckRoot).
func (w *Watcher) flush(now time.Time) {
	if err := w.CheckRoot(); err != nil {
		w.rootErr = err
		return
	}
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
	rechecks := map[string]bool{}
	for _, d := range list {
		if d.p.recheck {
			rechecks[d.id] = true
		}
	}
	for _, d := range list {
		if d.p.recheck && !coveredBy(d.id, func(p string) bool { return rechecks[p] }) {
			w.recheck(d.id, now)
		}
	}
	for _, d := range list {
		delete(w.pending, d.id)
		fi, err := os.Stat(w.abs(d.id))
		switch {
		case err == nil && !fi.IsDir() && w.ownThroughLink(d.id):
			// A link to the manifest or the store, which change with
			// each round: no document, as in Walk, and no change, or
			// every round would start another.
			w.known.remove(d.id)
		case err == nil && !fi.IsDir() && w.m.match(d.id):
			w.known.add(d.id)
			w.enqueue(Event{ID: d.id, Op: Changed})
		case err == nil && w.failedDirLink(d.id):
			// A link to a folder outside the root or above the link,
			// which Walk reports as a failed document: the pipeline
			// reads it and records why (see Stat).
			w.known.add(d.id)
			w.enqueue(Event{ID: d.id, Op: Changed})
		case err != nil && isSymlink(w.abs(d.id)) && w.m.match(d.id) && !isEditorTemp(path.Base(d.id)):
			// A link that cannot be followed (broken, looping, or its
			// target's folder closed) is a document that fails, as in
			// Walk: the pipeline reads it and records why.
			w.known.add(d.id)
			w.enqueue(Event{ID: d.id, Op: Changed})
		case errors.Is(err, fs.ErrPermission) && w.m.match(d.id) && !isEditorTemp(path.Base(d.id)):
			if dir, ok := w.closedAbove(d.id); ok {
				w.fail(dir, unreadable, err)
			} else {
				w.known.add(d.id)
				w.enqueue(Event{ID: d.id, Op: Changed})
			}
		case w.known.contains(d.id) || (err != nil && w.selected(d.id)):
			if err != nil && w.hold(d.id, d.p, now) {
				continue // its Sweep too, if any, waits
			}
			w.known.remove(d.id)
			w.enqueue(Event{ID: d.id, Op: Removed})
		}
		if d.p.sweep {
			w.enqueue(Event{ID: d.id, Op: Sweep})
		}
	}
}

// hold keeps the document id, found gone at the end of its quiet period
// p, pending for vanishGrace more when debouncing is off, unless it waited
// so already, and reports whether it did: a file that an editor moved
// away to save it is back by then, and reported Changed, not Removed (see
// vanishGrace).
func (w *Watcher) hold(id string, p *pending, now time.Time) bool {
	if w.opts.quiet() > 0 || p.held {
		return false
	}
	p.held, p.recheck = true, false
	p.due = now.Add(vanishGrace)
	w.pending[id] = p
	if w.nextDue.IsZero() || p.due.Before(w.nextDue) {
		w.nextDue = p.due
	}
	return true
}

// coveredBy reports whether due holds for a folder above rel, the root
// included.
func coveredBy(rel string, due func(string) bool) bool {
	for p := rel; p != ""; {
		p = parentRel(p)
		if due(p) {
			return true
		}
	}
	return false
}

// enqueue adds ev to the ready queue, replacing a queued event for the same
// id (a Sweep replaces only a Sweep: see Event.Key).
func (w *Watcher) enqueue(ev Event) {
	if k := ev.Key(); k != "" {
		if i, ok := w.readyIdx[k]; ok {
			w.ready[i] = ev
			return
		}
		w.readyIdx[k] = len(w.ready)
	}
	w.ready = append(w.ready, ev)
}

// pop removes the event just sent.
func (w *Watcher) pop() {
	delete(w.readyIdx, w.ready[w.head].Key())
	w.head++
	if w.head == len(w.ready) {
		w.ready, w.head = w.ready[:0], 0
	}
}

// rescan recovers from lost events (cause is fsnotify.ErrEventOverflow, a
// watch-limit *FileError or another watcher error): it drops what is queued,
// watches any folder not yet watched (those the watch limit refused
// included), re-reads the set of documents and of links and queues one
// Rescan event carrying cause. If the root's path leads to another folder
// now, it only sets rootErr (see CheckRoot).
func (w *Watcher) rescan(cause error) {
	if err := w.CheckRoot(); err != nil {
		w.rootErr = err
		return
	}
	clear(w.limited) // those still refused are recorded again
	w.nLimited = 0
	clear(w.pending)
	w.nextDue = time.Time{}
	clear(w.readyIdx)
	w.ready, w.head = w.ready[:0], 0
	w.known.clear()
	clear(w.links)
	clear(w.targets)
	w.fresh = nil
	w.scan("", false, time.Time{})
	w.settle(false, time.Time{})
	w.limitErr = nil // reported by this Rescan
	w.enqueue(Event{Op: Rescan, Err: cause})
}
