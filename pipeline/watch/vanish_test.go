package watch

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/reader"
)

// embedGate is an embedder that stops at the first input holding word: it says
// so on reached and waits until open is closed.
type embedGate struct {
	embedder.Embedder
	word    string
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newEmbedGate(word string) *embedGate {
	return &embedGate{word: word, reached: make(chan struct{}), open: make(chan struct{})}
}

func (g *embedGate) Embed(ctx context.Context, inputs []embedder.Input) ([][]float32, error) {
	for _, in := range inputs {
		if strings.Contains(in.Text, g.word) {
			g.once.Do(func() { close(g.reached) })
			select {
			case <-g.open:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			break
		}
	}
	return g.Embedder.Embed(ctx, inputs)
}

// TestReconcileAgainAfterVanishedPaths plays an rm -rf that races a full
// reconciliation: the walk lists a path, which vanishes before the round
// ends, after the walk failed it. The round keeps the documents below a
// path it failed, as it keeps those of a folder it cannot read, and the
// removal events were dropped while that round was due (the fake watcher
// sends none), so nothing else would delete them: the loop reconciles the
// folder once more, which deletes them and clears the failure. Before, the
// deleted documents stayed in the index until the next restart.
func TestReconcileAgainAfterVanishedPaths(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", "Alpha.")
	e.writeFile("z/doc.md", "Zed.")
	g := newEmbedGate("Hold")
	out := e.startFake(func(o *Options) {
		g.Embedder = o.Pipeline.Embedder
		o.Pipeline.Embedder = g
	})
	e.waitReady()

	// Behind the loop's back: z becomes something the walk fails (a link
	// out of the folder), and zz.md, walked after it, holds the round.
	if err := os.RemoveAll(e.path("z")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, e.path("z")); err != nil {
		t.Skipf("cannot create a symbolic link: %v", err)
	}
	e.writeFile("zz.md", "Hold the round here.")
	from := e.log.len()
	out <- reader.Event{Op: reader.Rescan, Err: fsnotify.ErrEventOverflow}
	select {
	case <-g.reached:
	case <-time.After(waitLimit):
		t.Fatal("the rescan did not reach zz.md")
	}
	// The walk has failed z; now it vanishes.
	if err := os.Remove(e.path("z")); err != nil {
		t.Fatal(err)
	}
	close(g.open)

	first := e.log.await(t, from, "rescanning", func(r Round) bool { return r.Kind == Rescan })
	if r := e.log.since(first)[0]; r.Err != nil || r.Report == nil || r.Report.FilesFailed != 1 {
		t.Fatalf("rescan: err %v, report %+v; want z failed", r.Err, r.Report)
	}
	again := e.log.await(t, first+1, "reconciling again", func(r Round) bool { return r.Kind == Rescan })
	if r := e.log.since(again)[0]; r.Err != nil || r.Report.FilesDeleted != 1 || r.Report.FilesFailed != 0 {
		t.Errorf("second rescan: err %v, deleted %d, failed %d; want z/doc.md deleted and nothing failed", r.Err, r.Report.FilesDeleted, r.Report.FilesFailed)
	}
	e.checkClean()
	fails, err := e.state.Failures(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != 0 {
		t.Errorf("failures recorded: %+v, want none: z is gone", fails)
	}
	// One round follows, not a chain of them: once stopped, the loop has
	// logged every round it started.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if n := e.log.len(); n != again+1 {
		t.Errorf("%d rounds after the second rescan, want none", n-again-1)
	}
}
