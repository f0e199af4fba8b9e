package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// countingScanner is a checkingStore that counts its lookups of a
// document's nodes (NodeIDs).
type countingScanner struct {
	checkingStore
	lookups *atomic.Int64
}

func (s countingScanner) NodeIDs(ctx context.Context, refDocID string, fn func([]string) error) error {
	s.lookups.Add(1)
	return s.checkingStore.NodeIDs(ctx, refDocID, fn)
}

// countingLister is a nodeListingStore, which cannot scan, that counts its
// lookups of a document's nodes.
type countingLister struct {
	nodeListingStore
	lookups *atomic.Int64
}

func (s countingLister) NodeIDs(ctx context.Context, refDocID string, fn func([]string) error) error {
	s.lookups.Add(1)
	return s.nodeListingStore.NodeIDs(ctx, refDocID, fn)
}

// intrude adds to in's store, behind the manifest's back, a node of doc
// that no run wrote.
func (in *incr) intrude(id, doc string) {
	in.t.Helper()
	n := sink.Node{ID: id, RefDocID: doc, Text: "Written by another tool.", Embedding: make([]float32, 8)}
	if _, err := in.store.Add(context.Background(), []sink.Node{n}); err != nil {
		in.t.Fatal(err)
	}
}

// TestFullListsTheStoreOnce: a Full run over a store that can list all its
// nodes (NodeScanner) looks up no document's nodes, where a store that can
// only list a document's makes a lookup per document; both delete the
// nodes no manifest lists, of documents in the folder and of documents
// whose files are gone.
func TestFullListsTheStoreOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		wrap    func(*incr, *atomic.Int64) Writer
		lookups int64
	}{
		{"scanner", func(in *incr, n *atomic.Int64) Writer {
			return countingScanner{checkingStore{scanningStore{nodeListingStore{in.store}}, new(int), 0}, n}
		}, 0},
		{"lister", func(in *incr, n *atomic.Int64) Writer { return countingLister{nodeListingStore{in.store}, n} }, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(6))
			var lookups atomic.Int64
			wrap := func(o *Options) { o.Store = tt.wrap(in, &lookups) }
			in.run(wrap)
			in.intrude("orphan", "d00/f00.md")
			in.intrude("gone", "gone.md")
			lookups.Store(0)
			rep := in.run(func(o *Options) { wrap(o); o.Full = true })
			if got := lookups.Load(); got != tt.lookups {
				t.Errorf("%d lookups of a document's nodes, want %d", got, tt.lookups)
			}
			_, scanner := tt.wrap(in, &lookups).(NodeScanner)
			wantDeleted := 1 // the orphan
			if scanner {
				wantDeleted++ // and gone.md's node, counted from the listing
			}
			if rep.FilesUpdated != 6 || rep.FilesFailed != 0 || rep.ChunksDeleted != wantDeleted {
				t.Errorf("--full run: %+v; want 6 updated and %d chunks deleted", rep, wantDeleted)
			}
			if _, ok := in.store.nodes["orphan"]; ok {
				t.Error("the orphan node of d00/f00.md is still stored")
			}
			if scanner == (len(in.texts("gone.md")) > 0) {
				t.Errorf("gone.md has %d nodes; want them deleted only by a run that can list the store", len(in.texts("gone.md")))
			}
			if err := in.store.Delete(context.Background(), "gone.md"); err != nil {
				t.Fatal(err)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestVerifyDeletesNodesTheManifestDoesNotList: a node of a recorded
// document that its record does not list (written into the index by
// another tool, or left by an older copy of the state file) stays through
// plain runs; a run with Verify counts it, reads its document again
// without embedding anything, and deletes it; a dry run only counts it.
// Nodes of documents the run does not select stay.
func TestVerifyDeletesNodesTheManifestDoesNotList(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": paragraphText("a", 20), "b.md": paragraphText("b", 20), "c.txt": paragraphText("c", 20)})
	in.run(in.verifying(false))
	in.intrude("intruder", "a.md")
	in.intrude("intruder2", "a.md")
	in.intrude("other", "c.txt")
	selectMD := func(o *Options) { o.Reader.Include = []string{"**/*.md"} }
	if rep := in.run(func(o *Options) { in.verifying(false)(o); selectMD(o) }); rep.FilesUnchanged != 2 || rep.Verify != nil {
		t.Fatalf("run without Verify: %+v, want 2 unchanged", rep)
	}

	before := len(in.store.nodes)
	dry := in.run(func(o *Options) { in.verifying(true)(o); selectMD(o); o.DryRun = true; o.Embedder = nil })
	if v := dry.Verify; v == nil || v.NodesUnlisted != 2 || v.DocumentsUnlisted != 1 || dry.FilesUpdated != 1 || dry.FilesUnchanged != 1 || dry.ChunksDeleted != 2 {
		t.Errorf("dry run: %+v, verify %+v; want 2 unlisted nodes in 1 document, planned as updated, 2 chunks to delete", dry, dry.Verify)
	}
	if len(in.store.nodes) != before {
		t.Errorf("the dry run changed the store: %d nodes, want %d", len(in.store.nodes), before)
	}

	in.emb.requests = 0
	rep := in.run(func(o *Options) { in.verifying(true)(o); selectMD(o) })
	if v := rep.Verify; v == nil || v.NodesUnlisted != 2 || v.DocumentsUnlisted != 1 || v.NodesMissing != 0 {
		t.Fatalf("verify report %+v, want 2 unlisted nodes in 1 document", rep.Verify)
	}
	if rep.FilesUpdated != 1 || rep.FilesUnchanged != 1 || rep.ChunksDeleted != 2 || rep.ChunksWritten != 0 || in.emb.requests != 0 {
		t.Errorf("run with Verify: %+v, %d embedding requests; want a.md read again, its 2 intruders deleted, nothing embedded", rep, in.emb.requests)
	}
	for id, kept := range map[string]bool{"intruder": false, "intruder2": false, "other": true} {
		if _, ok := in.store.nodes[id]; ok != kept {
			t.Errorf("node %s stored: %v, want %v", id, ok, kept)
		}
	}
	if err := in.store.DeleteNodes(context.Background(), []string{"other"}); err != nil {
		t.Fatal(err)
	}
	in.assertEqualsCleanRun()
	if again := in.run(in.verifying(true)); again.Verify == nil || again.Verify.NodesUnlisted != 0 || again.FilesUnchanged != 3 {
		t.Errorf("the run after: %+v, verify %+v; want nothing unlisted and 3 unchanged", again, again.Verify)
	}
}

// failingScan is a checkingStore whose listing of its nodes fails after
// passing them all, as on a transient error or a kill at the end of the
// listing.
type failingScan struct{ checkingStore }

func (s failingScan) ScanNodes(ctx context.Context, fn func([]sink.NodeRef) error) error {
	if err := s.checkingStore.ScanNodes(ctx, fn); err != nil {
		return err
	}
	return sink.ErrUnavailable
}

// TestUnlistedNodesOutliveAStoppedRun: the unlisted nodes a Verify run
// recorded are deleted by the next run of any kind, even if the run that
// found them stopped before reading their documents again.
func TestUnlistedNodesOutliveAStoppedRun(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(in.verifying(false))
	in.intrude("intruder", "d01/f01.md")
	_, err := Run(context.Background(), func() Options {
		o := in.options()
		in.verifying(true)(&o)
		o.Store = failingScan{o.Store.(checkingStore)}
		return o
	}())
	if !errors.Is(err, sink.ErrUnavailable) || !strings.Contains(err.Error(), "listing the nodes of the store") {
		t.Fatalf("Run = %v, want the listing's error", err)
	}
	rep := in.run(nil)
	if rep.FilesUpdated != 1 || rep.ChunksDeleted != 1 {
		t.Errorf("the next run: %+v; want d01/f01.md read again and its intruder deleted", rep)
	}
	in.assertEqualsCleanRun()
}

// ghostStore is a settlingCheckingStore whose listing still shows a node
// it deleted just before (reads that lag deletes), as Cloud AI Search can
// for about a second.
type ghostStore struct {
	settlingCheckingStore
	ghost sink.NodeRef
}

func (s ghostStore) ScanNodes(ctx context.Context, fn func([]sink.NodeRef) error) error {
	if err := s.settlingCheckingStore.ScanNodes(ctx, fn); err != nil {
		return err
	}
	return fn([]sink.NodeRef{s.ghost})
}

// TestLaggingStoreIsAskedAgainAboutListedNodes: a node that a lagging
// store lists but no longer holds once asked again after Settle is not
// taken for an unlisted node of a recorded document (by Verify or Full),
// nor is its document, if the manifest does not know it, removed again
// and counted as deleted.
func TestLaggingStoreIsAskedAgainAboutListedNodes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ghost sink.NodeRef
		full  bool
	}{
		{"verify, recorded document", sink.NodeRef{ID: "ghost", RefDocID: "d00/f00.md"}, false},
		{"full, recorded document", sink.NodeRef{ID: "ghost", RefDocID: "d00/f00.md"}, true},
		{"verify, deleted document", sink.NodeRef{ID: "ghost", RefDocID: "removed.md"}, false},
		{"full, deleted document", sink.NodeRef{ID: "ghost", RefDocID: "removed.md"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(3))
			in.run(in.verifying(false))
			calls := 0
			rep := in.run(func(o *Options) {
				o.Store = ghostStore{settlingCheckingStore{checkingStore{scanningStore{nodeListingStore{in.store}}, &calls, 0}}, tt.ghost}
				o.Verify, o.Full = !tt.full, tt.full
			})
			if rep.ChunksDeleted != 0 || rep.FilesDeleted != 0 || (rep.Verify != nil && rep.Verify.NodesUnlisted != 0) {
				t.Errorf("report %+v, verify %+v; want the ghost neither unlisted nor deleted", rep, rep.Verify)
			}
			if !tt.full && rep.FilesUnchanged != 3 {
				t.Errorf("%d unchanged, want 3", rep.FilesUnchanged)
			}
			if calls < 1 {
				t.Errorf("ExistingIDs called %d times, want the ghost asked about", calls)
			}
			if ids, err := in.state.DocIDs(context.Background()); err != nil || len(ids) != 3 {
				t.Errorf("manifest documents %v, %v; want the 3 files only", ids, err)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestListedIDsThatAreNotUTF8: a node whose id is not valid UTF-8 (written
// by another tool) can be neither recorded nor deleted through the
// manifest: Verify leaves it alone instead of reading its document again
// on every run.
func TestListedIDsThatAreNotUTF8(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(in.verifying(false))
	in.intrude("bad\xff\xfeid", "d00/f00.md")
	for range 2 {
		rep := in.run(in.verifying(true))
		if rep.Verify == nil || rep.Verify.NodesUnlisted != 0 || rep.FilesUnchanged != 3 {
			t.Errorf("report %+v, verify %+v; want the node left alone and 3 unchanged", rep, rep.Verify)
		}
	}
	if _, ok := in.store.nodes["bad\xff\xfeid"]; !ok {
		t.Error("the node was deleted")
	}
}
