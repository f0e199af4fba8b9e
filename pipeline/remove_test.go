package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// orderedDeleter is a store whose Delete and DeleteNodes check that the
// manifest still holds the document's record, then fail with err if set.
// It records its calls in order.
type orderedDeleter struct {
	t        *testing.T
	store    *memStore
	manifest *state.Store
	err      error
	calls    []string // "Delete" and "DeleteNodes"
}

func (d *orderedDeleter) Delete(ctx context.Context, refDocID string) error {
	d.calls = append(d.calls, "Delete")
	if _, recorded, err := d.manifest.Doc(ctx, refDocID); err != nil || !recorded {
		d.t.Errorf("store delete of %s after the manifest forgot it (recorded %v, %v)", refDocID, recorded, err)
	}
	if d.err != nil {
		return d.err
	}
	return d.store.Delete(ctx, refDocID)
}

func (d *orderedDeleter) DeleteNodes(ctx context.Context, ids []string) error {
	d.calls = append(d.calls, "DeleteNodes")
	if _, recorded, err := d.manifest.Doc(ctx, "a.md"); err != nil || !recorded {
		d.t.Errorf("store delete of nodes after the manifest forgot a.md (recorded %v, %v)", recorded, err)
	}
	if d.err != nil {
		return d.err
	}
	return d.store.DeleteNodes(ctx, ids)
}

// laggingDeleter is an orderedDeleter whose lookups lag behind its writes
// (SettlingCounter), as Cloud AI Search's do.
type laggingDeleter struct{ *orderedDeleter }

func (laggingDeleter) Empty(context.Context) (bool, error) { return false, nil }
func (laggingDeleter) Settle() time.Duration               { return 0 }

// TestRemoveDocument checks the order of a removal: the store first, then
// the manifest, so that a store delete that fails leaves the record and the
// next run, finding the file gone, deletes the nodes again. In the store, a
// store whose lookups keep up deletes by document first, then the ids the
// manifest knows; a lagging one by id first, then by document; a failure
// stops the removal.
func TestRemoveDocument(t *testing.T) {
	errDown := errors.New("store down")
	tests := []struct {
		name     string
		lagging  bool
		storeErr error
		calls    []string
		recorded bool // the record is still there after RemoveDocument
	}{
		{"store delete succeeds", false, nil, []string{"Delete", "DeleteNodes"}, false},
		{"store delete fails", false, errDown, []string{"Delete"}, true},
		{"lagging store delete succeeds", true, nil, []string{"DeleteNodes", "Delete"}, false},
		{"lagging store delete fails", true, errDown, []string{"DeleteNodes"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			in := newIncr(t, map[string]string{"a.md": paragraphText("alpha", 20), "b.md": "Bravo."})
			in.run(nil)
			d := &orderedDeleter{t: t, store: in.store, manifest: in.state, err: tt.storeErr}
			var store Deleter = d
			if tt.lagging {
				store = laggingDeleter{d}
			}
			err := RemoveDocument(ctx, store, in.state, "a.md")
			if !errors.Is(err, tt.storeErr) || (tt.storeErr == nil) != (err == nil) {
				t.Errorf("RemoveDocument = %v, want %v", err, tt.storeErr)
			}
			if !slices.Equal(d.calls, tt.calls) {
				t.Errorf("store calls %q, want %q", d.calls, tt.calls)
			}
			if _, recorded, err := in.state.Doc(ctx, "a.md"); err != nil || recorded != tt.recorded {
				t.Fatalf("record of a.md after RemoveDocument: %v (%v), want %v", recorded, err, tt.recorded)
			}

			// The file goes too: the next run deletes what is left.
			if err := os.Remove(filepath.Join(in.root, "a.md")); err != nil {
				t.Fatal(err)
			}
			rep := in.run(nil)
			if want := map[bool]int{true: 1}[tt.recorded]; rep.FilesDeleted != want {
				t.Errorf("next run deleted %d documents, want %d", rep.FilesDeleted, want)
			}
			if n := len(in.store.byDoc()["a.md"]); n != 0 {
				t.Errorf("%d nodes of a.md left after the next run", n)
			}
			if _, recorded, err := in.state.Doc(ctx, "a.md"); err != nil || recorded {
				t.Errorf("record of a.md after the next run: %v (%v), want none", recorded, err)
			}
		})
	}
}

// docsDeletingStore is a memStore that deletes many documents at once
// (DocsDeleter), as sink/local.Store does, counting its calls; with err
// set, DeleteDocs fails without deleting anything.
type docsDeletingStore struct {
	*memStore
	batches [][]string
	err     error
}

func (s *docsDeletingStore) DeleteDocs(ctx context.Context, refDocIDs []string) error {
	s.batches = append(s.batches, slices.Clone(refDocIDs))
	if s.err != nil {
		return s.err
	}
	for _, id := range refDocIDs {
		if err := s.memStore.Delete(ctx, id); err != nil {
			return err
		}
	}
	s.memStore.docDeletes -= len(refDocIDs) // counted as DeleteDocs
	return nil
}

// TestRemoveDocumentsInBatches: a run that finds many files gone removes
// their documents RemoveBatch at a time, with one DeleteDocs call per
// batch when the store has it (before, two commits per document made
// removing a large folder take seconds per thousand files) and one Delete
// per document otherwise; either way the store ends as a clean run leaves
// it. A batch the store fails to delete stops the run with its records
// kept, and the next run removes them.
func TestRemoveDocumentsInBatches(t *testing.T) {
	const n = RemoveBatch + 7
	files := map[string]string{"keep.md": "Kept text."}
	for i := range n {
		files[fmt.Sprintf("gone/%04d.md", i)] = fmt.Sprintf("Document %d.", i)
	}
	for _, tt := range []struct {
		name        string
		docsDeleter bool
		err         error
	}{
		{name: "DocsDeleter", docsDeleter: true},
		{name: "Delete per document"},
		{name: "DocsDeleter fails", docsDeleter: true, err: errors.New("store down")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, files)
			in.run(nil)
			if err := os.RemoveAll(filepath.Join(in.root, "gone")); err != nil {
				t.Fatal(err)
			}
			dd := &docsDeletingStore{memStore: in.store, err: tt.err}
			o := in.options()
			if tt.docsDeleter {
				o.Store = dd
			}
			in.store.docDeletes = 0
			rep, err := Run(context.Background(), o)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), fmt.Sprintf("%d documents (gone/0000.md, ...)", RemoveBatch)) {
					t.Fatalf("Run = %v, want the store's error naming the batch", err)
				}
				if _, recorded, err := in.state.Doc(context.Background(), "gone/0000.md"); err != nil || !recorded {
					t.Errorf("a document of the failed batch lost its record (%v, %v)", recorded, err)
				}
				rep = in.run(nil) // the store is back: the records left make it delete them
			} else if err != nil {
				t.Fatal(err)
			}
			if rep.FilesDeleted != n || rep.ChunksDeleted != n {
				t.Errorf("report: %d documents, %d chunks deleted; want %d of each", rep.FilesDeleted, rep.ChunksDeleted, n)
			}
			switch {
			case tt.err != nil:
				if len(dd.batches) != 1 {
					t.Errorf("DeleteDocs called %d times before the failure stopped the run, want 1", len(dd.batches))
				}
			case tt.docsDeleter:
				if got := []int{len(dd.batches[0]), len(dd.batches[1])}; len(dd.batches) != 2 || !slices.Equal(got, []int{RemoveBatch, 7}) {
					t.Errorf("DeleteDocs batches of %d documents, want [%d 7]", len(dd.batches), RemoveBatch)
				}
				if in.store.docDeletes != 0 {
					t.Errorf("%d Delete calls next to DeleteDocs, want none", in.store.docDeletes)
				}
			default:
				if in.store.docDeletes != n {
					t.Errorf("%d Delete calls, want one per document (%d)", in.store.docDeletes, n)
				}
			}
			in.assertEqualsCleanRun()
			if ids := in.failureIDs(); len(ids) != 0 {
				t.Errorf("dead letters %v, want none", ids)
			}
		})
	}
}

// blindStore is a memStore whose Delete by document id finds nothing, as
// Cloud AI Search's search by doc_id misses nodes it acknowledged less
// than about a second ago.
type blindStore struct{ *memStore }

func (blindStore) Delete(context.Context, string) error { return nil }

// TestRemoveDocumentsByKnownIDs: the nodes the manifest records for a
// removed document, committed or pending, are deleted by id, so that a
// store whose lookups lag behind its writes keeps none of them (a file
// that watch mode ingests and that is removed a moment later). The count
// is of the nodes the store held for sure, each once: the committed ones
// (which a dead run that reused them acknowledged again) and those a
// listing found.
func TestRemoveDocumentsByKnownIDs(t *testing.T) {
	ctx := context.Background()
	in := newIncr(t, map[string]string{"a.md": paragraphText("alpha", 30), "b.md": "Bravo."})
	in.run(nil)
	// A dead run's pending node of a.md, written but never committed.
	run, err := in.state.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pending := sink.Node{ID: "pending-a", RefDocID: "a.md", Text: "pending", Embedding: make([]float32, 8)}
	if err := run.Intend(ctx, map[string][]state.Node{"a.md": {{ID: pending.ID}}}); err != nil {
		t.Fatal(err)
	}
	rec, _, err := in.state.Doc(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	reused := make([]state.Node, len(rec.NodeIDs))
	for i, id := range rec.NodeIDs {
		reused[i] = state.Node{ID: id}
	}
	if err := run.Ack(ctx, map[string][]state.Node{"a.md": reused}); err != nil {
		t.Fatal(err)
	}
	found := sink.Node{ID: "found-a", RefDocID: "a.md", Text: "found", Embedding: make([]float32, 8)}
	if err := run.Found(ctx, []state.NodeRef{{Doc: "a.md", ID: found.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.store.Add(ctx, []sink.Node{pending, found}); err != nil {
		t.Fatal(err)
	}
	n := len(in.texts("a.md"))
	got, err := RemoveDocuments(ctx, blindStore{in.store}, in.state, []string{"a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if left := len(in.texts("a.md")); left != 0 {
		t.Errorf("%d of a.md's %d nodes left in a store that could not find them by document id", left, n)
	}
	if got != n-1 {
		t.Errorf("RemoveDocuments = %d, want the %d committed chunks and the found one", got, n-1)
	}
	if len(in.texts("b.md")) == 0 {
		t.Error("b.md lost its nodes")
	}
}

// unlistableStore is a NodeScanner that cannot list its nodes now, as a
// Cloud AI Search index whose key is not sortable and that holds more
// nodes than paging with skip reaches.
type unlistableStore struct{ nodeListingStore }

func (unlistableStore) ScanNodes(context.Context, func([]sink.NodeRef) error) error {
	return fmt.Errorf("too many nodes: %w", sink.ErrUnsupported)
}

// TestUnlistableStoreWarns: a Full or Verify run whose store cannot list
// its documents (sink.ErrUnsupported) warns and goes on as with a store
// that cannot list: the documents the manifest knows are still removed
// when their files are gone.
func TestUnlistableStoreWarns(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha.", "b.md": "Bravo."})
	in.run(nil)
	if err := os.Remove(filepath.Join(in.root, "b.md")); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	o := in.options()
	o.Full = true
	o.Store = unlistableStore{nodeListingStore{in.store}}
	o.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run = %v, want the run to go on without the listing", err)
	}
	if rep.FilesDeleted != 1 || len(in.texts("b.md")) != 0 {
		t.Errorf("report: %d deleted; b.md has %d nodes; want the recorded b.md removed", rep.FilesDeleted, len(in.texts("b.md")))
	}
	if !strings.Contains(logged.String(), "cannot list the nodes of the store") || !strings.Contains(logged.String(), "too many nodes") {
		t.Errorf("log %q lacks the warning and its cause", logged.String())
	}
}

// pageRecorder is a Deleter that records the pages of DeleteNodes.
type pageRecorder struct{ pages [][]string }

func (*pageRecorder) Delete(context.Context, string) error { return nil }

func (p *pageRecorder) DeleteNodes(_ context.Context, ids []string) error {
	p.pages = append(p.pages, slices.Clone(ids))
	return nil
}

// TestRemoveDocumentsPagesKnownIDs: the node ids the manifest records for
// removed documents (committed, acknowledged, intended and found) are
// deleted in pages of knownPage, filled across documents, each id once,
// and the count is of those the store held for sure, however many there
// are.
func TestRemoveDocumentsPagesKnownIDs(t *testing.T) {
	type doc struct {
		id                                string
		committed, acked, intended, found int
		reused                            int // committed ids acknowledged again by the dead run
	}
	for _, tt := range []struct {
		name  string
		docs  []doc
		pages int
		known int
	}{
		{"one small document", []doc{{id: "a.md", committed: 3}}, 1, 3},
		{"a page exactly", []doc{{id: "a.md", committed: knownPage}}, 1, knownPage},
		{"a large document", []doc{{id: "a.md", committed: 2*knownPage + 300, acked: 200, reused: 150, intended: 70, found: 30}},
			3, 2*knownPage + 300 + 200 + 30},
		{"pages across documents", []doc{
			{id: "a.md", committed: 700, intended: 10},
			{id: "b.md", committed: 700, acked: 5},
			{id: "c.md", intended: 600}, // no record
			{id: "d.md"},                // nothing known
		}, 3, 700 + 700 + 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := openState(t, filepath.Join(t.TempDir(), "state.db"))
			keep, err := st.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dead, err := st.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			ids := func(doc, kind string, n int) []state.Node {
				out := make([]state.Node, n)
				for i := range out {
					out[i] = state.Node{ID: fmt.Sprintf("%s-%s-%05d", doc, kind, i)}
					want[out[i].ID] = true
				}
				return out
			}
			var docIDs []string
			for _, d := range tt.docs {
				docIDs = append(docIDs, d.id)
				if d.committed > 0 {
					if err := keep.Ack(ctx, map[string][]state.Node{d.id: ids(d.id, "c", d.committed)}); err != nil {
						t.Fatal(err)
					}
					if err := keep.Commit(ctx, d.id, state.Stamp{Hash: "h"}, ""); err != nil {
						t.Fatal(err)
					}
				}
				var found []state.NodeRef
				for _, n := range ids(d.id, "f", d.found) {
					found = append(found, state.NodeRef{Doc: d.id, ID: n.ID})
				}
				if err := dead.Found(ctx, found); err != nil {
					t.Fatal(err)
				}
				acked := append(ids(d.id, "a", d.acked), ids(d.id, "c", d.reused)...)
				if err := dead.Ack(ctx, map[string][]state.Node{d.id: acked}); err != nil {
					t.Fatal(err)
				}
				if err := dead.Intend(ctx, map[string][]state.Node{d.id: ids(d.id, "i", d.intended)}); err != nil {
					t.Fatal(err)
				}
			}

			rec := &pageRecorder{}
			known, err := RemoveDocuments(ctx, rec, st, docIDs)
			if err != nil {
				t.Fatal(err)
			}
			if known != tt.known {
				t.Errorf("RemoveDocuments = %d, want %d", known, tt.known)
			}
			if len(rec.pages) != tt.pages {
				t.Errorf("%d DeleteNodes calls, want %d", len(rec.pages), tt.pages)
			}
			deleted := map[string]bool{}
			for i, page := range rec.pages {
				if len(page) > knownPage || (i < len(rec.pages)-1 && len(page) != knownPage) {
					t.Errorf("page %d of %d ids, want %d (fewer only in the last)", i, len(page), knownPage)
				}
				for _, id := range page {
					if deleted[id] {
						t.Errorf("%s deleted twice", id)
					}
					deleted[id] = true
				}
			}
			if len(deleted) != len(want) {
				t.Errorf("%d ids deleted, want %d", len(deleted), len(want))
			}
			for id := range want {
				if !deleted[id] {
					t.Errorf("%s not deleted", id)
					break
				}
			}
			if ids, err := st.DocIDs(ctx); err != nil || len(ids) != 0 {
				t.Errorf("the manifest still records %v (%v)", ids, err)
			}
		})
	}
}

// stalePager is a memStore that records the pages of DeleteNodes.
type stalePager struct {
	*memStore
	pages [][]string
}

func (s *stalePager) DeleteNodes(ctx context.Context, ids []string) error {
	s.pages = append(s.pages, slices.Clone(ids))
	return s.memStore.DeleteNodes(ctx, ids)
}

// TestDeleteStalePages: a document's stale nodes are deleted in pages of
// stalePage, each once, and those this run acknowledged stay, however many
// there are.
func TestDeleteStalePages(t *testing.T) {
	for _, tt := range []struct {
		name              string
		committed, reused int
		pages             []int
	}{
		{"none stale", 5, 5, nil},
		{"a few", 5, 2, []int{3}},
		{"a page exactly", stalePage + 4, 4, []int{stalePage}},
		{"many pages", 2*stalePage + 5, 3, []int{stalePage, stalePage, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := openState(t, filepath.Join(t.TempDir(), "state.db"))
			node := func(i int) state.Node { return state.Node{ID: fmt.Sprintf("n%05d", i)} }
			var committed []state.Node
			for i := range tt.committed {
				committed = append(committed, node(i))
			}
			first, err := st.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Ack(ctx, map[string][]state.Node{"a.md": committed}); err != nil {
				t.Fatal(err)
			}
			if err := first.Commit(ctx, "a.md", state.Stamp{Hash: "h"}, ""); err != nil {
				t.Fatal(err)
			}
			manifest, err := st.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			acked := append(slices.Clone(committed[:tt.reused]), node(99999)) // and a new one
			if err := manifest.Ack(ctx, map[string][]state.Node{"a.md": acked}); err != nil {
				t.Fatal(err)
			}
			store := &stalePager{memStore: newMemStore()}
			r := &run{opts: Options{Store: store}, manifest: manifest}
			n, err := r.deleteStale(ctx, "a.md")
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.committed - tt.reused; n != want {
				t.Errorf("deleteStale = %d, want %d", n, want)
			}
			var sizes []int
			deleted := map[string]bool{}
			for _, page := range store.pages {
				sizes = append(sizes, len(page))
				for _, id := range page {
					if deleted[id] {
						t.Errorf("%s deleted twice", id)
					}
					deleted[id] = true
				}
			}
			if !slices.Equal(sizes, tt.pages) {
				t.Errorf("pages of %v ids, want %v", sizes, tt.pages)
			}
			for i, c := range committed {
				if deleted[c.ID] != (i >= tt.reused) {
					t.Errorf("%s deleted: %v, want %v", c.ID, deleted[c.ID], i >= tt.reused)
				}
			}
		})
	}
}

// cutShortRemoval is a memStore whose removals stop part-way: Delete (by
// document) and, for a lagging store, DeleteNodes take effect, and the
// other one fails, as a store that times out, or a process killed, between
// the two would leave things.
type cutShortRemoval struct {
	*memStore
	lagging bool
}

var errCutShort = errors.New("store timed out")

func (s cutShortRemoval) Delete(ctx context.Context, refDocID string) error {
	if s.lagging {
		return errCutShort
	}
	return s.memStore.Delete(ctx, refDocID)
}

func (s cutShortRemoval) DeleteNodes(ctx context.Context, ids []string) error {
	if !s.lagging {
		return errCutShort
	}
	return s.memStore.DeleteNodes(ctx, ids)
}

// laggingCutShort is a cutShortRemoval whose lookups lag (SettlingCounter),
// so that its removals delete by id first.
type laggingCutShort struct{ cutShortRemoval }

func (laggingCutShort) Empty(context.Context) (bool, error) { return false, nil }
func (laggingCutShort) Settle() time.Duration               { return 0 }

// TestRemovalCutShortThenRestored: a removal whose deletes took effect but
// did not finish leaves the document's record, so that the next run deletes
// again. Should the file come back meanwhile as it was (a revert, a branch
// switched back), that run must write its chunks again, not take the
// record's for stored: the store would silently lack them.
func TestRemovalCutShortThenRestored(t *testing.T) {
	for _, lagging := range []bool{false, true} {
		t.Run(fmt.Sprintf("lagging %v", lagging), func(t *testing.T) {
			body := paragraphText("alpha", 20)
			in := newIncr(t, map[string]string{"a.md": body, "b.md": "Bravo."})
			in.run(nil)
			n := len(in.texts("a.md"))
			if err := os.Remove(filepath.Join(in.root, "a.md")); err != nil {
				t.Fatal(err)
			}
			var store Writer = cutShortRemoval{in.store, false}
			if lagging {
				store = laggingCutShort{cutShortRemoval{in.store, true}}
			}
			o := in.options()
			o.Store = store
			if _, err := Run(context.Background(), o); !errors.Is(err, errCutShort) {
				t.Fatalf("Run = %v, want the store's error", err)
			}
			if left := len(in.texts("a.md")); left == n {
				t.Fatalf("all %d chunks of a.md still stored: the removal did not take effect", n)
			}
			in.write("a.md", body)
			rep := in.run(nil)
			if got := len(in.texts("a.md")); got != n {
				t.Errorf("after the file came back, %d of a.md's %d chunks stored (report: %d written, %d reused, %d unchanged)",
					got, n, rep.ChunksWritten, rep.ChunksReused, rep.FilesUnchanged)
			}
			in.assertEqualsCleanRun()
		})
	}
}
