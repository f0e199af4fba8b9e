package watch

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/reader"
)

// fakeEvents stands in for the file watcher: it hands the loop's event
// channel to the test, so tests can play events the kernel rarely produces.
type fakeEvents struct{ outs chan chan<- reader.Event }

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

// startFake runs a Loop whose event channel is returned: the test sends
// on it as the watcher would.
func (e *env) startFake(mod func(*Options)) chan<- reader.Event {
	e.t.Helper()
	fake := &fakeEvents{outs: make(chan chan<- reader.Event, 1)}
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
