package watch

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
)

// TestVerifyOnWholeFolderRounds deletes nodes from the store behind the
// manifest's back while the loop is stopped: a loop with Pipeline.Verify
// writes them again in its first round, and its rounds over changed files
// check nothing.
func TestVerifyOnWholeFolderRounds(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.md", strings.Repeat("Alpha sentence about the sea. ", 40))
	e.writeFile("b.md", "Bravo.")
	e.open()
	ctx := context.Background()
	if _, err := pipeline.Run(ctx, e.options(e.store, e.state)); err != nil {
		t.Fatal(err)
	}
	var gone []string
	if err := e.store.NodeIDs(ctx, "a.md", func(ids []string) error { gone = append(gone, ids...); return nil }); err != nil || len(gone) < 2 {
		t.Fatalf("a.md's nodes: %v, %v", gone, err)
	}
	if err := e.store.DeleteNodes(ctx, gone[:2]); err != nil {
		t.Fatal(err)
	}
	e.closeStores()

	e.start(func(o *Options) { o.Pipeline.Verify = true })
	e.waitReady()
	first := e.log.since(0)[0]
	if v := first.Report.Verify; v == nil || v.NodesMissing != 2 || v.Documents != 1 || first.Report.ChunksWritten != 2 {
		t.Errorf("first round: %+v, verify %+v; want the 2 missing nodes of a.md written again", first.Report, v)
	}
	n := e.log.len()
	e.writeFile("c.md", "Charlie.")
	e.log.await(t, n, "the round ingesting c.md", func(r Round) bool {
		if r.Kind != Update || r.Report == nil || r.Report.FilesAdded != 1 {
			return false
		}
		if r.Report.Verify != nil {
			t.Errorf("a round over changed files verified: %+v", r.Report.Verify)
		}
		return true
	})
	e.checkClean()
}

// noChecker is a store that cannot tell which nodes it holds.
type noChecker struct{ pipeline.Writer }

func TestNewRejectsVerifyWithoutChecker(t *testing.T) {
	e := newEnv(t)
	e.open()
	o := Options{Pipeline: e.options(noChecker{e.store}, e.state)}
	o.Pipeline.Verify = true
	l, err := New(o)
	if err == nil {
		l.Close()
		t.Fatal("New succeeded")
	}
	if !strings.Contains(err.Error(), "NodeChecker") {
		t.Errorf("New = %v, want it to name NodeChecker", err)
	}
}
