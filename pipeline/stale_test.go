package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// errDeleteRefused is the error of refusingDeletes.
var errDeleteRefused = errors.New("store refuses the delete")

// refusingDeletes is a memStore whose DeleteNodes refuses its failOn-th
// call (1 for the first) and deletes nothing then, as a store that fails
// between two pages of a document's stale deletes. It records the ids of
// every call, the refused one included.
type refusingDeletes struct {
	*memStore
	failOn int

	mu    sync.Mutex
	pages [][]string
}

func (s *refusingDeletes) DeleteNodes(ctx context.Context, ids []string) error {
	s.mu.Lock()
	s.pages = append(s.pages, slices.Clone(ids))
	refuse := len(s.pages) == s.failOn
	s.mu.Unlock()
	if refuse {
		return fmt.Errorf("test store: %w", errDeleteRefused)
	}
	return s.memStore.DeleteNodes(ctx, ids)
}

// TestStaleDeleteFailureConverges: a changed document leaves more than
// stalePage stale chunks (two pages of deletes) and the store refuses one
// page, the first or the second once the first is deleted. The run stops
// with the store's error, which names the document and wraps the cause, in
// Report.Error too: it is the store's failure, not the document's, so the
// document is not dead-lettered (its rollback would delete the new
// chunks). The new version's chunks, written or kept, stay in the store
// and acknowledged in the manifest, no delete follows the refused one, and
// the document is not committed (its record keeps the old hash). The next
// run, with the store back, reuses every new chunk without embedding or
// writing it, deletes the stale ones (each counted deleted once over the
// two runs) and commits the document: the store holds exactly what a clean
// run writes, the manifest records it with no pending id, and a third run
// finds the document unchanged.
func TestStaleDeleteFailureConverges(t *testing.T) {
	const (
		doc    = "big.md"
		kept   = 3             // chunks of the new version its record already has
		stales = stalePage + 7 // chunks of the old version that the new one lacks
	)
	ctx := context.Background()
	root := writeTree(t, map[string]string{doc: paragraphText("new", 40)})
	clean := newIncr(t, nil)
	clean.root = root
	clean.run(nil)
	want := view(clean.store)
	newIDs := slices.Sorted(maps.Keys(want))
	cleanRecord, _, err := clean.state.Doc(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}

	// The old version, as a run over it left the store and the manifest:
	// kept chunks of the new version (with other metadata), and stales
	// that the new version lacks. Recorded once (it takes seconds under
	// -race), into a state file each case copies.
	byStart := clean.store.byDoc()[doc]
	if len(byStart) <= kept {
		t.Fatalf("the new version has %d chunks; the test needs more than %d", len(byStart), kept)
	}
	oldNodes := map[string]sink.Node{}
	var old []state.Node
	for _, n := range byStart[:kept] {
		oldNodes[n.ID] = sink.Node{ID: n.ID, RefDocID: doc, Text: n.Text}
		old = append(old, state.Node{ID: n.ID})
	}
	stale := map[string]bool{}
	for i := range stales {
		text := fmt.Sprintf("Sentence %d of the old version.", i)
		id := sink.NodeID(doc, text, 0)
		oldNodes[id] = sink.Node{ID: id, RefDocID: doc, Text: text}
		old = append(old, state.Node{ID: id})
		stale[id] = true
	}
	oldStamp := state.Stamp{Hash: "old", Size: 1, ModTime: time.Unix(1, 0)}
	seeded := filepath.Join(t.TempDir(), "state.db")
	if err := recordDocument(ctx, seeded, doc, old, oldStamp); err != nil {
		t.Fatal(err)
	}
	seededFile, err := os.ReadFile(seeded)
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name   string
		failOn int // the refused DeleteNodes call
	}{
		{"first page refused", 1},
		{"second page refused", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(path, seededFile, 0o644); err != nil {
				t.Fatal(err)
			}
			in := &incr{t: t, root: root, store: newMemStore(), state: openState(t, path), statePath: path, emb: &fakeEmbedder{dims: 8}}
			maps.Copy(in.store.nodes, oldNodes)

			store := &refusingDeletes{memStore: in.store, failOn: tt.failOn}
			o := in.options()
			o.Store = store
			rep, err := Run(ctx, o)
			if !errors.Is(err, errDeleteRefused) || !strings.Contains(err.Error(), "stale chunks of "+doc) {
				t.Errorf("Run = %v; want the store's error, naming %s", err, doc)
			}
			if rep == nil {
				t.Fatal("Run returned no report")
			}
			if rep.Complete || rep.Error != fmt.Sprint(err) {
				t.Errorf("report: complete %v, error %q; want an incomplete run with the error", rep.Complete, rep.Error)
			}
			if rep.FilesIngested != 0 || rep.FilesFailed != 0 || len(rep.Failures) != 0 {
				t.Errorf("report: %d ingested, %d failed %v; want the document neither ingested nor failed", rep.FilesIngested, rep.FilesFailed, rep.Failures)
			}
			if rep.ChunksWritten != len(want)-kept {
				t.Errorf("%d chunks written, want %d", rep.ChunksWritten, len(want)-kept)
			}
			// The pages deleted before the refused one, and nothing after it.
			sizes := []int{stalePage, stales - stalePage}
			deleted := map[string]bool{}
			for i, page := range store.pages {
				if i < len(sizes) && len(page) != sizes[i] {
					t.Errorf("delete %d of %d ids, want %d", i+1, len(page), sizes[i])
				}
				for _, id := range page {
					if !stale[id] {
						t.Errorf("%s deleted, which is not stale", id)
					}
					if i < tt.failOn-1 {
						deleted[id] = true
					}
				}
			}
			if len(store.pages) != tt.failOn {
				t.Errorf("%d deletes, want %d: none after the refused one", len(store.pages), tt.failOn)
			}
			got := view(in.store)
			for id, v := range want {
				if got[id] != v {
					t.Errorf("after the stopped run, node %s is %+v; want %+v", id, got[id], v)
				}
			}
			for id := range stale {
				if _, held := got[id]; held == deleted[id] {
					t.Errorf("after the stopped run, stale node %s held: %v; want %v", id, held, !deleted[id])
				}
			}
			if len(got) != len(want)+stales-len(deleted) {
				t.Errorf("after the stopped run, the store holds %d nodes; want %d", len(got), len(want)+stales-len(deleted))
			}
			if st, _, err := in.state.Stamp(ctx, doc); err != nil || st.Hash != oldStamp.Hash {
				t.Errorf("after the stopped run, the record's hash is %q (%v); want the old one, %q", st.Hash, err, oldStamp.Hash)
			}
			acked, _, err := in.state.Pending(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Sort(acked); !slices.Equal(acked, newIDs) {
				t.Errorf("after the stopped run, the manifest acknowledges %d ids; want the %d of the new version", len(acked), len(newIDs))
			}

			next := in.run(nil)
			if !next.Complete || next.FilesUpdated != 1 || next.ChunksWritten != 0 || next.TokensEmbedded != 0 || next.ChunksReused != len(want) {
				t.Errorf("next run: %+v; want the document updated, its %d chunks reused, none written or embedded", next, len(want))
			}
			if n := rep.ChunksDeleted + next.ChunksDeleted; n != stales {
				t.Errorf("%d + %d chunks deleted, want %d", rep.ChunksDeleted, next.ChunksDeleted, stales)
			}
			in.assertEqualsCleanRun()
			record, ok, err := in.state.Doc(ctx, doc)
			if err != nil || !ok || record.Hash != cleanRecord.Hash || record.Size != cleanRecord.Size || !slices.Equal(record.NodeIDs, newIDs) {
				t.Errorf("after the next run, the record is %v %v (%d nodes, hash %q); want the new version's: %d nodes, hash %q",
					ok, err, len(record.NodeIDs), record.Hash, len(newIDs), cleanRecord.Hash)
			}
			if acked, intended, err := in.state.Pending(ctx, doc); err != nil || len(acked)+len(intended) != 0 {
				t.Errorf("after the next run, %d acknowledged and %d intended ids pending (%v); want none", len(acked), len(intended), err)
			}
			if third := in.run(nil); third.FilesUnchanged != 1 || third.ChunksWritten+third.ChunksDeleted != 0 {
				t.Errorf("third run: %+v; want the document unchanged", third)
			}
		})
	}
}

// recordDocument records in a new manifest at path, as a run that wrote
// them would have, a document's nodes and stamp.
func recordDocument(ctx context.Context, path, doc string, nodes []state.Node, stamp state.Stamp) (err error) {
	st, err := state.Open(ctx, path, "test")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the manifest: %w", cerr)
		}
	}()
	run, err := st.Begin(ctx)
	if err != nil {
		return err
	}
	if err := run.Ack(ctx, map[string][]state.Node{doc: nodes}); err != nil {
		return fmt.Errorf("recording the nodes of %s: %w", doc, err)
	}
	if err := run.Commit(ctx, doc, stamp, ""); err != nil {
		return fmt.Errorf("committing %s: %w", doc, err)
	}
	return nil
}

// deletesThenFails is a memStore whose DeleteNodes deletes, then fails, as
// a store whose delete took effect although it reported an error (a
// timeout), or a process killed between the delete and the manifest's
// next step: a document's stale deletes stop part-way, after a page was
// deleted.
type deletesThenFails struct{ *memStore }

func (s deletesThenFails) DeleteNodes(ctx context.Context, ids []string) error {
	if err := s.memStore.DeleteNodes(ctx, ids); err != nil {
		return err
	}
	return fmt.Errorf("test store: %w", errDeleteRefused)
}

// TestStaleDeleteCutShortThenRestored: the deletes of a changed document's
// stale chunks stop after some were deleted, and the file is then restored
// to the version whose chunks those were (a revert, a branch switched
// back). The chunks deleted are not taken for stored: the next run writes
// them again, and the store holds what a clean run writes. So too when the
// next run fails the document (a chunk refused) and a later one ingests it:
// the failed run's rollback keeps a record that lists only the nodes the
// store still holds, and the document is read again although its file is
// as that record says.
func TestStaleDeleteCutShortThenRestored(t *testing.T) {
	for _, tt := range []struct {
		name   string
		refuse string // text of a chunk the store refuses in the run after the restore
	}{
		{"then ingested", ""},
		{"then failed, then ingested", "Sentence 3 about v1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			v1 := paragraphText("v1", 30)
			in := newIncr(t, map[string]string{"a.md": v1})
			in.run(nil)
			in.write("a.md", paragraphText("v2", 30))
			o := in.options()
			o.Store = deletesThenFails{in.store}
			if _, err := Run(ctx, o); !errors.Is(err, errDeleteRefused) {
				t.Fatalf("Run = %v, want the store's error", err)
			}
			in.write("a.md", v1)
			if tt.refuse != "" {
				in.store.reject = tt.refuse
				if rep := in.run(nil); rep.FilesFailed != 1 {
					t.Fatalf("run with the store refusing %q: %+v; want the document failed", tt.refuse, rep)
				}
				in.store.reject = ""
			}
			if rep := in.run(nil); rep.FilesUpdated != 1 || rep.ChunksWritten == 0 {
				t.Errorf("run after the restore: %+v; want the document updated, its deleted chunks written again", rep)
			}
			in.assertEqualsCleanRun()
			if rep := in.run(nil); rep.FilesUnchanged != 1 {
				t.Errorf("last run: %+v; want the document unchanged", rep)
			}
		})
	}
}
