package watch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// Options configure a Loop.
type Options struct {
	// Pipeline holds the settings of every round. Its State and Store are
	// required; Source is replaced on each round; Stats, if nil, is
	// allocated, and accumulates over the rounds. Pipeline.Reader selects
	// the watched files. Pipeline.Verify applies to the rounds over the
	// whole folder (Initial and Rescan): each checks that the store holds
	// every node the manifest records, and writes again those it lost; the
	// Store must then be a pipeline.NodeChecker.
	Pipeline pipeline.Options
	// Config holds the watch settings; zero values take their defaults.
	Config Config
	// Logger receives a line per round and warnings about retried rounds
	// (default: discard).
	Logger *slog.Logger
	// OnRound, if set, is called by the Loop's goroutine after each round.
	// It must return quickly; it must not call the Loop's Run.
	OnRound func(Round)
}

// eventSource is where a Loop's file-system events come from: a
// *reader.Watcher.
type eventSource interface {
	Run(ctx context.Context, out chan<- reader.Event) error
	Close() error
	Waiting() int
	Unwatched() int
	CheckRoot() error
}

// Loop keeps a store in step with a folder: see the package documentation.
// Its methods other than Run are safe to call from any goroutine.
type Loop struct {
	opts    Options
	cfg     Config
	log     *slog.Logger
	w       eventSource
	parked  *parked // vectors of removed documents, lent to the rounds; nil if not worth it
	started atomic.Bool
	retryIn time.Duration // first wait before retrying a failed round

	abortOnce sync.Once
	abort     chan struct{}

	ready    atomic.Bool
	pending  atomic.Int64
	lastSync atomic.Int64 // unix nanoseconds of the last successful round
	rounds   atomic.Int64
	rescans  atomic.Int64
	removed  atomic.Int64
	settled  atomic.Int64          // Stats.FilesSeen - Stats.FilesDone left by finished rounds
	health   atomic.Pointer[error] // why the Loop stopped following the folder; nil while it does
}

// errStopped is Healthy's answer once Run has returned without error.
var errStopped = errors.New("watch: stopped")

// New validates opts and starts watching the folder, so that no change made
// from now on is missed. Call Run to reconcile and process events, or Close
// to give up.
func New(opts Options) (*Loop, error) {
	cfg := opts.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.Pipeline.State == nil:
		return nil, errors.New("watch: Options.Pipeline.State is required: watch mode is incremental; set state.path")
	case opts.Pipeline.Store == nil:
		return nil, errors.New("watch: Options.Pipeline.Store is required")
	case opts.Pipeline.DryRun:
		return nil, errors.New("watch: a dry run cannot watch; drop --dry-run")
	case opts.Pipeline.Verify && !pipeline.CanVerify(opts.Pipeline.Store):
		return nil, fmt.Errorf("watch: Options.Pipeline.Verify needs a store that can tell which nodes it holds (pipeline.NodeChecker); %T cannot", opts.Pipeline.Store)
	}
	if opts.Pipeline.Stats == nil {
		opts.Pipeline.Stats = new(pipeline.Stats)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := reader.NewWatcher(opts.Pipeline.Reader, cfg.watchOptions())
	if err != nil {
		return nil, err
	}
	l := &Loop{opts: opts, cfg: cfg, log: opts.Logger, w: w, retryIn: time.Second, abort: make(chan struct{})}
	if l.parked = newParked(opts.Pipeline); l.parked != nil {
		l.opts.Pipeline.Vectors = l.parked
	}
	return l, nil
}

// Close stops watching if Run was never called. It is safe to call more
// than once; a running Loop is stopped by cancelling Run's context.
func (l *Loop) Close() error {
	if l.started.CompareAndSwap(false, true) {
		return l.w.Close()
	}
	return nil
}

// Abort makes a running or future Run abandon its round in flight at once
// and return ErrAborted. It is safe to call more than once.
func (l *Loop) Abort() { l.abortOnce.Do(func() { close(l.abort) }) }

// Ready reports whether the initial reconciliation has completed.
func (l *Loop) Ready() bool { return l.ready.Load() }

// Debouncing returns the number of documents whose change the file
// watcher has seen but not yet passed on for a round: inside their quiet
// period (watch.debounce, up to watch.maxDelay). With Pending and the
// pipeline's in-flight documents at 0 as well, every change seen is in the
// index.
func (l *Loop) Debouncing() int { return l.w.Waiting() }

// Pending returns the number of document ids waiting for a round, plus 1
// while a full reconciliation is due (requested, or waiting to retry a
// failed round; the changes seen meanwhile are left to it) or running. With
// Debouncing and the pipeline's in-flight documents, it is 0 only when
// every change seen is in the index.
func (l *Loop) Pending() int { return int(l.pending.Load()) }

// Unwatched returns the number of folders the file watcher could not watch
// because the system's watch limit (fs.inotify.max_user_watches on Linux)
// was reached. Their changes are not seen as they happen: while it is above
// 0, the folders are tried again and the whole folder reconciled every
// minute (or every Config.RescanInterval, if shorter).
func (l *Loop) Unwatched() int { return l.w.Unwatched() }

// LastSync returns when the last round completed without error, or the
// zero time if none has.
func (l *Loop) LastSync() time.Time {
	if ns := l.lastSync.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Totals counts a Loop's rounds since it was created.
type Totals struct {
	// Rounds counts the rounds completed, successful or not.
	Rounds int64
	// Rescans counts the full reconciliations among them, the first one
	// included.
	Rescans int64
	// Removed counts the documents removed from the index because their
	// file was gone.
	Removed int64
}

// Totals returns the Loop's counts; with Stats, they make the closing
// summary of a watch.
func (l *Loop) Totals() Totals {
	return Totals{Rounds: l.rounds.Load(), Rescans: l.rescans.Load(), Removed: l.removed.Load()}
}

// Stats returns the pipeline counters the Loop's rounds accumulate.
func (l *Loop) Stats() *pipeline.Stats { return l.opts.Pipeline.Stats }

// Healthy returns nil while the Loop can follow its folder: from New until
// Run returns, as long as its file watcher runs. Once the watcher has
// stopped (the folder was removed or renamed away, say), a round failed for
// good, or Run has returned, it returns why.
func (l *Loop) Healthy() error {
	if p := l.health.Load(); p != nil {
		return *p
	}
	return nil
}

// down records the first reason the Loop stopped following its folder.
func (l *Loop) down(err error) { l.health.CompareAndSwap(nil, &err) }

// inflight returns the documents taken by the round in flight and not yet
// finished, from a snapshot of Stats: documents a failed or abandoned
// round left unfinished do not count.
func (l *Loop) inflight(s pipeline.Snapshot) int64 {
	return max(s.FilesSeen-s.FilesDone-l.settled.Load(), 0)
}

// Run reconciles the folder with the store, then processes file-system
// events until ctx is done. It then stops taking events, waits up to
// Config.GracePeriod for the round in flight (not at all with
// NoGracePeriod), and returns nil. It returns
// ErrAborted after Abort, a permanent error of a round (a changed embedding
// model, rejected credentials, a source folder that cannot be listed:
// reader.ErrConfig), or an error of the file watcher, which wraps a
// *reader.RootError (reader.ErrRootGone) if the folder itself was removed
// or renamed away, or its path leads to another folder (checked before
// each round too). Rounds that fail otherwise are retried with backoff as
// full reconciliations.
//
// Healthy reports an error from the moment the watcher stops or a round
// fails for good, so /healthz fails while the round in flight winds down.
func (l *Loop) Run(ctx context.Context) (err error) {
	if !l.started.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer func() { l.down(cmp.Or(err, errStopped)) }()
	s := l.newRunState(ctx)
	defer s.close()
	return s.loop(ctx)
}

// runState is owned by the goroutine running Run.
type runState struct {
	l *Loop

	events    chan reader.Event
	watchDone chan error
	stopWatch context.CancelFunc

	work       context.Context
	cancelWork context.CancelFunc

	roundDone chan Round
	running   bool

	queue  []string                // keys of the pending events in arrival order (reader.Event.Key)
	latest map[string]reader.Event // latest event of each pending key
	rescan bool                    // a full reconciliation is due
	full   bool                    // the round running is a full reconciliation
	ready  bool                    // the initial reconciliation succeeded
	again  bool                    // the due or running full reconciliation follows one that saw paths vanish

	limitWarned bool // the watch limit was warned about, and folders are still unwatched

	retry   *backoff.ExponentialBackOff
	retryAt *time.Timer // set while waiting to retry a failed round
	grace   *time.Timer // set once stopping
	tick    *time.Ticker

	stopping bool
	aborted  bool
	fatal    error
}

func (l *Loop) newRunState(ctx context.Context) *runState {
	watchCtx, stopWatch := context.WithCancel(ctx)
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	s := &runState{
		l: l, events: make(chan reader.Event, 64), watchDone: make(chan error, 1), stopWatch: stopWatch,
		work: work, cancelWork: cancelWork, roundDone: make(chan Round, 1),
		latest: make(map[string]reader.Event), rescan: true,
		retry: backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(l.retryIn), backoff.WithMaxInterval(time.Minute), backoff.WithMaxElapsedTime(0)),
	}
	go func() { s.watchDone <- l.w.Run(watchCtx, s.events) }()
	if l.cfg.RescanInterval > 0 {
		s.tick = time.NewTicker(l.cfg.RescanInterval)
	}
	return s
}

// close stops the watcher and the round in flight and waits for both.
func (s *runState) close() {
	s.stopWatch()
	s.cancelWork()
	if s.running {
		s.finish(<-s.roundDone)
	}
	if s.events != nil {
		for range s.events { // closed by the watcher's Run
		}
	}
	if s.watchDone != nil {
		<-s.watchDone
	}
	for _, t := range []*time.Timer{s.retryAt, s.grace} {
		if t != nil {
			t.Stop()
		}
	}
	if s.tick != nil {
		s.tick.Stop()
	}
	s.l.pending.Store(0)
}

func (s *runState) loop(ctx context.Context) error {
	done := ctx.Done()
	for {
		s.startRound()
		if (s.stopping || s.fatal != nil) && !s.running {
			return s.result()
		}
		var events <-chan reader.Event
		if !s.stopping {
			events = s.events
		}
		select {
		case ev, ok := <-events:
			if !ok {
				s.events = nil
				err := <-s.watchDone
				s.watchDone = nil
				// The watcher also closes its events when ctx is done:
				// that is a graceful stop, whichever case select picks.
				if ctx.Err() == nil {
					s.watchFailed(err)
				}
				s.stop()
				continue
			}
			s.add(ev)
			s.drain()
		case r := <-s.roundDone:
			s.finish(r)
		case <-done:
			done = nil
			s.stop()
		case <-timerC(s.grace):
			s.l.log.Warn("watch: grace period over; abandoning the documents in flight, the next start resumes them", "gracePeriod", s.l.cfg.GracePeriod)
			s.cancelWork()
		case <-s.abortC():
			s.aborted = true
			s.stop()
			s.cancelWork()
		case <-tickerC(s.tick):
			if n := s.l.w.Unwatched(); n > 0 {
				// The watcher retries the unwatched folders at least this
				// often, each time with a Rescan: a second reconciliation
				// now would only repeat that one.
				s.l.log.Debug("watch: periodic safety rescan left to the watch limit's retries", "unwatched", n)
				continue
			}
			s.l.log.Debug("watch: periodic safety rescan is due") // the round logs its line
			s.requestRescan()
		case <-timerC(s.retryAt):
			s.retryAt = nil
		}
	}
}

func (s *runState) abortC() <-chan struct{} {
	if s.aborted {
		return nil
	}
	return s.l.abort
}

func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

func tickerC(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// stop stops taking events and starts the grace period of the round in
// flight; without one (NoGracePeriod), it abandons the round at once.
func (s *runState) stop() {
	if s.stopping {
		return
	}
	s.stopping = true
	s.stopWatch()
	switch {
	case !s.running:
	case s.l.cfg.GracePeriod < 0:
		s.l.log.Warn("watch: no grace period; abandoning the documents in flight, the next start resumes them", "gracePeriod", time.Duration(0))
		s.cancelWork()
	default:
		s.grace = time.NewTimer(s.l.cfg.GracePeriod)
	}
}

func (s *runState) result() error {
	switch {
	case s.fatal != nil:
		return s.fatal
	case s.aborted:
		return ErrAborted
	}
	return nil
}

// watchFailed stops the Loop for good: the folder can no longer be
// followed (err comes from the watcher).
func (s *runState) watchFailed(err error) {
	s.fatal = s.watcherErr(err)
	s.l.down(s.fatal)
	s.l.log.Error("watch: file watching stopped; stopping", "err", err)
}

func (s *runState) watcherErr(err error) error {
	switch {
	case err == nil:
		err = errors.New("the watcher closed")
	case errors.Is(err, reader.ErrRootGone):
		return fmt.Errorf("watch: file watching stopped: %w", err) // it says what to do
	}
	return fmt.Errorf("watch: file watching stopped: %w (restart `sluice watch`)", err)
}

// add records one event.
func (s *runState) add(ev reader.Event) {
	if ev.Op == reader.Rescan {
		s.lost(ev.Err)
		s.requestRescan()
		return
	}
	if s.rescan {
		return // the coming full reconciliation covers it
	}
	key := ev.Key() // a folder's Sweep apart from a document's event
	if _, ok := s.latest[key]; !ok {
		if len(s.queue) >= s.l.cfg.MaxPending {
			s.l.log.Info("watch: more changes pending than watch.maxPending; rescanning the folder instead", "maxPending", s.l.cfg.MaxPending)
			s.requestRescan()
			return
		}
		s.queue = append(s.queue, key)
	}
	s.latest[key] = ev
	s.setPending()
}

// lost logs why the watcher asks for a rescan. The watch limit is warned
// about once while folders stay unwatched, not at each of the periodic
// retries that follow. A notice that comes while a full reconciliation is
// due already (not yet started) adds nothing to it and is logged at Debug
// level: a burst that overflows the kernel's queue gives a notice every
// few milliseconds while the previous reconciliation runs.
func (s *runState) lost(cause error) {
	log, limit := s.l.log, errors.Is(cause, reader.ErrWatchLimit)
	warn, info := slog.LevelWarn, slog.LevelInfo
	if s.rescan {
		warn, info = slog.LevelDebug, slog.LevelDebug
	}
	n := 0
	if limit || s.limitWarned {
		n = s.l.w.Unwatched()
	}
	recovered := s.limitWarned && n == 0
	if recovered {
		s.limitWarned = false
		log.Info("watch: every folder is watched again; rescanning the folder for the changes missed meanwhile")
	}
	switch {
	case limit && recovered: // the retry that found every folder watched: said above
	case !limit || n == 0:
		log.Log(context.Background(), warn, "watch: events may have been lost; rescanning the folder", "cause", cause)
	case !s.limitWarned:
		s.limitWarned = true
		log.Warn("watch: the system's watch limit is reached: some folders are not watched, so their changes are not seen as they happen; "+
			"until they can be watched, they are tried again and the folder is rescanned periodically; raise fs.inotify.max_user_watches (sysctl)",
			"unwatched", n, "rescanEvery", s.l.cfg.watchOptions().WithDefaults().LimitRetry, "cause", cause)
	default:
		log.Log(context.Background(), info, "watch: folders still not watched (the system's watch limit); rescanning the folder", "unwatched", n)
	}
}

// drain takes the events already waiting, up to Config.MaxPending, so
// that a burst is coalesced into the next round instead of starting it
// with the first event alone.
func (s *runState) drain() {
	for range s.l.cfg.MaxPending {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return // the main select sees the close again
			}
			s.add(ev)
		default:
			return
		}
	}
}

// requestRescan drops the pending ids for a full reconciliation.
func (s *runState) requestRescan() {
	s.rescan = true
	s.queue = nil // release the backing array: a burst must not pin it
	clear(s.latest)
	s.setPending()
}

// setPending publishes Pending: the ids waiting for a round, and 1 for a
// full reconciliation that is due or running, which stands for the changes
// it was asked to find.
func (s *runState) setPending() {
	n := int64(len(s.queue))
	if s.rescan || s.full {
		n++
	}
	s.l.pending.Store(n)
}

// startRound starts the next round if one is due and none is running. It
// first checks that the folder's path still leads to the watched folder
// (reader.Watcher.CheckRoot): rounds read it through its path, and a full
// reconciliation of another folder would delete the watched one's
// documents. If not, the Loop stops.
func (s *runState) startRound() {
	if s.running || s.stopping || s.fatal != nil || s.retryAt != nil || (!s.rescan && len(s.queue) == 0) {
		return
	}
	if err := s.l.w.CheckRoot(); err != nil {
		s.watchFailed(err)
		s.stop()
		return
	}
	p, ok := s.next()
	if !ok {
		return
	}
	s.running, s.full = true, p.kind != Update
	s.setPending()
	go func() { s.roundDone <- s.l.round(s.work, p) }()
}

// next takes the work of the next round: a full reconciliation if one is
// due, else up to Config.MaxBatch pending ids in arrival order.
func (s *runState) next() (plan, bool) {
	var p plan
	switch {
	case s.rescan:
		p.kind = Rescan
		if !s.ready {
			p.kind = Initial
		}
		s.rescan = false
		s.queue = nil
		clear(s.latest)
	case len(s.queue) > 0:
		p.kind = Update
		n := min(len(s.queue), s.l.cfg.MaxBatch)
		for _, key := range s.queue[:n] {
			switch ev := s.latest[key]; ev.Op {
			case reader.Removed:
				p.removed = append(p.removed, ev.ID)
			case reader.Failed:
				p.failed = append(p.failed, ev)
			case reader.Sweep:
				p.swept = append(p.swept, ev.ID)
			default:
				p.changed = append(p.changed, ev.ID)
			}
			delete(s.latest, key)
		}
		s.queue = s.queue[n:]
		if len(s.queue) == 0 {
			s.queue = nil
		}
	default:
		return p, false
	}
	s.setPending()
	return p, true
}

// finish accounts for a completed round.
func (s *runState) finish(r Round) {
	s.running, s.full = false, false
	if s.grace != nil {
		s.grace.Stop()
	}
	l := s.l
	if st := l.Stats(); st != nil {
		snap := st.Snapshot() // the round's documents are all finished or abandoned now
		l.settled.Store(snap.FilesSeen - snap.FilesDone)
	}
	l.rounds.Add(1)
	if r.Kind != Update {
		l.rescans.Add(1)
	}
	l.removed.Add(int64(len(r.Removed)))
	if r.Report != nil {
		l.removed.Add(int64(r.Report.FilesDeleted))
	}
	again := s.again && r.Kind != Update
	if r.Kind != Update {
		s.again = false
	}
	switch {
	case r.Err == nil:
		s.retry.Reset()
		l.lastSync.Store(r.End.UnixNano())
		if r.Kind != Update {
			s.ready = true
			l.ready.Store(true)
		}
		l.log.Log(context.Background(), roundLevel(r), "watch: round done", roundAttrs(r)...)
		logFailures(l.log, r.Report)
		if r.Kind != Update && !again {
			s.reconcileVanished(r.Report)
		}
	case s.work.Err() != nil:
		l.log.Info("watch: round abandoned; the next start resumes it", "round", r.Kind.String())
	case permanent(r.Err):
		s.fatal = fmt.Errorf("watch: %s round: %w", r.Kind, r.Err)
		l.down(s.fatal)
		l.log.Error("watch: round failed for good; stopping", "round", r.Kind.String(), "err", r.Err)
	default:
		wait := s.retry.NextBackOff()
		l.log.Warn("watch: round failed; retrying with a full rescan", "round", r.Kind.String(), "err", r.Err, "retryIn", wait)
		s.requestRescan()
		s.retryAt = time.NewTimer(wait)
	}
	s.setPending()
	if l.opts.OnRound != nil {
		l.opts.OnRound(r)
	}
}

// reconcileVanished requests one more full reconciliation if rep, the
// report of a whole-folder round, failed paths that are gone now. The walk
// listed them and failed them as paths it could not read (a link out of
// the folder, an unreadable folder), and then they vanished (an rm -rf or a
// branch switch running meanwhile): the round kept the documents below
// them, as it keeps those of any path it cannot read, and their removal
// events may have been dropped for that very round while it was due. The
// next walk does not list them, so it deletes their documents and clears
// their failures. (A file that vanishes before it is read is deleted by the
// round itself: pipeline.Options.KeepVanished.) Only one such round
// follows: events are queued while it runs.
func (s *runState) reconcileVanished(rep *pipeline.Report) {
	if rep == nil {
		return
	}
	dir := s.l.opts.Pipeline.Reader.WithDefaults().Dir
	var gone []string
	for _, f := range rep.Failures {
		if reader.Gone(dir, f.Path) {
			gone = append(gone, f.Path)
		}
	}
	if len(gone) == 0 {
		return
	}
	s.l.log.Info("watch: paths vanished while the folder was reconciled; reconciling it again to remove their documents",
		"vanished", len(gone), "first", gone[0])
	s.again = true
	s.requestRescan()
}

// maxLoggedFailures bounds the failures logged one by one per round; the
// dead-letter table (`sluice failed list`) has them all.
const maxLoggedFailures = 20

func logFailures(log *slog.Logger, rep *pipeline.Report) {
	if rep == nil {
		return
	}
	for i, f := range rep.Failures {
		if i == maxLoggedFailures {
			log.Warn("watch: more documents failed; see `sluice failed list`", "more", len(rep.Failures)-i)
			return
		}
		log.Warn("watch: document failed", "doc", f.Path, "err", f.Error)
	}
}

// roundLevel is the level of the log line of a completed round: Debug for
// an update that did nothing (the removal of a short-lived file never
// stored, a sweep that found nothing gone, files gone before they were
// read: see reader.Removed and reader.Sweep), Info otherwise.
func roundLevel(r Round) slog.Level {
	if r.Kind != Update || len(r.Removed)+len(r.Cleared) > 0 {
		return slog.LevelInfo
	}
	if rep := r.Report; rep != nil && rep.FilesAdded+rep.FilesUpdated+rep.FilesUnchanged+rep.FilesDeleted+rep.FilesFailed+rep.ChunksWritten > 0 {
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func roundAttrs(r Round) []any {
	attrs := []any{"round", r.Kind.String(), "took", r.End.Sub(r.Start).Round(time.Millisecond)}
	if rep := r.Report; rep != nil {
		attrs = append(attrs, "added", rep.FilesAdded, "updated", rep.FilesUpdated, "unchanged", rep.FilesUnchanged,
			"deleted", rep.FilesDeleted+len(r.Removed), "failed", rep.FilesFailed, "chunks", rep.ChunksWritten)
		if v := rep.Verify; v != nil {
			attrs = append(attrs, "verified", v.NodesChecked, "missing", v.NodesMissing)
			if v.NodesUnlisted > 0 {
				attrs = append(attrs, "unlisted", v.NodesUnlisted)
			}
		}
	} else if len(r.Removed) > 0 {
		attrs = append(attrs, "deleted", len(r.Removed))
	}
	if len(r.Cleared) > 0 { // failures over, of folders or of files now gone: see Round.Cleared
		attrs = append(attrs, "cleared", len(r.Cleared))
	}
	return attrs
}

// round does the work of p. It runs on its own goroutine, owned by Run.
func (l *Loop) round(ctx context.Context, p plan) Round {
	r := Round{Kind: p.kind, Start: time.Now()}
	opts := l.opts.Pipeline
	if p.kind != Update {
		opts.Source = nil // a full walk: documents whose files are gone are deleted
		r.Report, r.Err = pipeline.Run(ctx, opts)
		r.End = time.Now()
		return r
	}
	opts.Verify = false // a run over named files: the whole-folder rounds verify
	// A removal is final, even if a file stands at the path again by now:
	// the watcher saw it gone, and reports its return as a change of its
	// own once it is quiet. Read here, a file that came back for a moment
	// would stay in the index if it went again before the watcher looked
	// (a branch switched back and forth): the watcher, which never saw it
	// back, would report nothing more.
	removed := p.removed
	l.park(ctx, opts, removed) // before the changed documents: a folder renamed brings them back at once
	if len(p.changed)+len(p.failed) > 0 {
		var gone []string
		opts.Source = changedFiles(opts.Reader, p.failed, p.changed, &gone)
		r.Report, r.Err = pipeline.Run(ctx, opts)
		for _, ev := range p.failed {
			r.Changed = append(r.Changed, ev.ID)
		}
		r.Changed = append(r.Changed, slices.DeleteFunc(p.changed, func(id string) bool { return slices.Contains(gone, id) })...)
		removed = append(removed, gone...)
	}
	if r.Err == nil && len(p.swept) > 0 {
		var below []string
		below, r.Err = goneBelow(ctx, opts, p.swept, removed)
		removed = append(removed, below...)
	}
	if r.Err == nil && len(removed) > 0 {
		l.park(ctx, opts, removed[len(p.removed):]) // those found gone by the round
		r.Removed, r.Cleared, r.Err = removeGone(ctx, opts, removed)
	}
	r.End = time.Now()
	return r
}
