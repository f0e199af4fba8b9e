package watch

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/reader"
)

// syncBuffer is a bytes.Buffer safe for the Loop's and the test's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the lines logged so far that contain every one of parts.
func (s *syncBuffer) lines(parts ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for line := range strings.Lines(s.b.String()) {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// TestWatchLimitWarnsOnce plays the watcher's Rescans while the watch limit
// keeps folders unwatched: the first one is warned about, naming how many
// folders and the setting to raise, and the periodic retries that follow
// are not; each reconciles the folder, so a change in an unwatched folder
// reaches the index. The count is served as a metric. Once every folder
// is watched, a new refusal is warned about again.
func TestWatchLimitWarnsOnce(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	logs := &syncBuffer{}
	out := e.startFake(func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	e.waitReady()
	srv := httptest.NewServer(NewMetrics(e.loop).Handler())
	defer srv.Close()
	metric := func() float64 {
		t.Helper()
		_, text := get(t, srv, "/metrics")
		return samples(t, text)["sluice_watch_unwatched_folders"]
	}
	limit := reader.Event{Op: reader.Rescan, Err: &reader.FileError{Path: "big", Err: reader.ErrWatchLimit, Detail: "folder not watched"}}
	send := func(ev reader.Event, what string) {
		t.Helper()
		from := e.log.len()
		out <- ev
		e.log.await(t, from, what, func(r Round) bool { return r.Kind == Rescan && r.Err == nil })
	}
	rescan := func(what string) {
		t.Helper()
		send(limit, what)
	}
	const warning = "fs.inotify.max_user_watches"

	e.fake.unwatched.Store(2)
	rescan("after the watch limit was reached")
	if got := metric(); got != 2 {
		t.Errorf("sluice_watch_unwatched_folders = %v, want 2", got)
	}
	e.writeFile("big/new.md", "In a folder not watched: only a rescan finds it.")
	rescan("retrying the unwatched folders")
	rescan("retrying the unwatched folders again")
	if got := docsOf(nodesOf(t, e.store)); !strings.Contains(strings.Join(got, " "), "big/new.md") {
		t.Errorf("store holds %q, want big/new.md found by the rescans", got)
	}
	warned := logs.lines("level=WARN", warning)
	if len(warned) != 1 || !strings.Contains(warned[0], "unwatched=2") || !strings.Contains(warned[0], "rescanEvery=1m0s") {
		t.Errorf("warnings naming %s: %q, want one saying unwatched=2 rescanEvery=1m0s", warning, warned)
	}
	if got := logs.lines("level=INFO", "still not watched", "unwatched=2"); len(got) != 2 {
		t.Errorf("retries logged %q, want two at level INFO", got)
	}
	if got := logs.lines("events may have been lost"); len(got) != 0 {
		t.Errorf("logged %q, want the watch limit named instead", got)
	}
	// Another cause while folders stay unwatched is warned about as such.
	send(reader.Event{Op: reader.Rescan, Err: fsnotify.ErrEventOverflow}, "after a queue overflow")
	if got := logs.lines("level=WARN", "events may have been lost", "overflow"); len(got) != 1 {
		t.Errorf("logged %q, want the overflow warned about", got)
	}
	if got := logs.lines("every folder is watched again"); len(got) != 0 {
		t.Errorf("logged %q while folders are still unwatched", got)
	}

	e.fake.unwatched.Store(0)
	rescan("once every folder is watched")
	if got := metric(); got != 0 {
		t.Errorf("sluice_watch_unwatched_folders = %v once every folder is watched, want 0", got)
	}
	if got := logs.lines("level=INFO", "every folder is watched again"); len(got) != 1 {
		t.Errorf("logged %q, want one line saying every folder is watched again", got)
	}
	e.fake.unwatched.Store(1)
	rescan("after the watch limit was reached again")
	if got := logs.lines("level=WARN", warning); len(got) != 2 || !strings.Contains(got[1], "unwatched=1") {
		t.Errorf("warnings naming %s: %q, want a second one saying unwatched=1", warning, got)
	}
	e.checkClean()
}

// TestLimitRetryFollowsRescanInterval checks how often the watcher retries
// the folders the watch limit refused: every minute, or every
// watch.rescanInterval if that is shorter.
func TestLimitRetryFollowsRescanInterval(t *testing.T) {
	for _, tt := range []struct{ rescan, want time.Duration }{
		{0, time.Minute},
		{10 * time.Second, 10 * time.Second},
		{time.Hour, time.Minute},
	} {
		if got := (Config{RescanInterval: tt.rescan}).WithDefaults().watchOptions().WithDefaults().LimitRetry; got != tt.want {
			t.Errorf("rescanInterval %v: the watcher retries every %v, want %v", tt.rescan, got, tt.want)
		}
	}
}

// TestLostWhileRescanDue plays a burst that overflows the kernel's event
// queue again and again before the full reconciliation it asked for has
// started: the first notice is warned about, the others, which add nothing
// to the reconciliation already due, are logged at Debug level only. So
// are the watch limit's retries then; its first warning is not.
func TestLostWhileRescanDue(t *testing.T) {
	logs := &syncBuffer{}
	fake := &fakeEvents{}
	l := &Loop{cfg: Config{}.WithDefaults(), log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), w: fake}
	s := &runState{l: l, latest: map[string]reader.Event{}}
	for range 5 {
		s.add(reader.Event{Op: reader.Rescan, Err: fsnotify.ErrEventOverflow})
	}
	if got := logs.lines("level=WARN", "events may have been lost"); len(got) != 1 {
		t.Errorf("warned %q, want one warning for the burst", got)
	}
	if got := logs.lines("level=DEBUG", "events may have been lost"); len(got) != 4 {
		t.Errorf("logged %q at Debug level, want the 4 later notices", got)
	}
	if !s.rescan || l.Pending() != 1 {
		t.Errorf("rescan due %v, Pending() = %d; want one full reconciliation due", s.rescan, l.Pending())
	}

	fake.unwatched.Store(3)
	limit := reader.Event{Op: reader.Rescan, Err: &reader.FileError{Path: "big", Err: reader.ErrWatchLimit, Detail: "folder not watched"}}
	for range 3 {
		s.add(limit)
	}
	if got := logs.lines("level=WARN", "fs.inotify.max_user_watches"); len(got) != 1 {
		t.Errorf("warned %q, want the watch limit warned about once", got)
	}
	if got := logs.lines("level=DEBUG", "still not watched"); len(got) != 2 {
		t.Errorf("logged %q at Debug level, want the 2 later notices", got)
	}
	if got := logs.lines("level=INFO"); len(got) != 0 {
		t.Errorf("logged %q at Info level while a rescan was due", got)
	}
}

// TestPeriodicRescanLeftToLimitRetries checks that watch.rescanInterval
// does not add reconciliations while folders are unwatched: the watcher
// then retries them every rescanInterval (or minute, if shorter), each
// time with a Rescan, so the periodic one would repeat it.
func TestPeriodicRescanLeftToLimitRetries(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.startFake(func(o *Options) { o.Config.RescanInterval = time.Second })
	e.waitReady()
	e.fake.unwatched.Store(2)
	// watch.rescanInterval is at least 1s: two ticks at most.
	from := e.log.len()
	time.Sleep(2200 * time.Millisecond)
	for _, r := range e.log.since(from) {
		if r.Kind == Rescan {
			t.Errorf("a periodic rescan ran while folders were unwatched (%v)", r.Start)
		}
	}
	e.fake.unwatched.Store(0)
	e.log.await(t, from, "once every folder is watched", func(r Round) bool { return r.Kind == Rescan && r.Err == nil })
}
