package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// reportingStore is a memStore that tells whether it is empty
// (EmptyReporter).
type reportingStore struct{ *memStore }

func (s reportingStore) Empty(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.nodes) == 0, nil
}

// nodeListingStore is a memStore that, as sink/local.Store, tells whether
// it is empty and lists a document's nodes (NodeLister), in pages of two.
type nodeListingStore struct{ *memStore }

func (s nodeListingStore) Empty(ctx context.Context) (bool, error) {
	return reportingStore(s).Empty(ctx)
}

func (s nodeListingStore) NodeIDs(_ context.Context, refDocID string, fn func([]string) error) error {
	var ids []string
	for _, n := range s.byDoc()[refDocID] {
		ids = append(ids, n.ID)
	}
	for page := range slices.Chunk(ids, 2) {
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// scanningStore is a nodeListingStore that also lists all its nodes
// (NodeScanner), as sink/local.Store and sink/cloudsearch.Store do, in
// pages of two.
type scanningStore struct{ nodeListingStore }

func (s scanningStore) ScanNodes(_ context.Context, fn func([]sink.NodeRef) error) error {
	s.mu.Lock()
	var refs []sink.NodeRef
	for _, n := range s.nodes {
		refs = append(refs, sink.NodeRef{ID: n.ID, RefDocID: n.RefDocID})
	}
	s.mu.Unlock()
	slices.SortFunc(refs, func(a, b sink.NodeRef) int {
		return cmp.Or(strings.Compare(a.RefDocID, b.RefDocID), strings.Compare(a.ID, b.ID))
	})
	for page := range slices.Chunk(refs, 2) {
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// storeKinds are the capabilities a store may have, by name.
var storeKinds = []struct {
	name string
	wrap func(*memStore) Writer
}{
	{"plain", func(s *memStore) Writer { return s }},
	{"empty reporter", func(s *memStore) Writer { return reportingStore{s} }},
	{"node lister", func(s *memStore) Writer { return nodeListingStore{s} }},
	{"node scanner", func(s *memStore) Writer { return scanningStore{nodeListingStore{s}} }},
}

// loseManifest points the setup at a new, empty state file, as when the
// state file is lost, emptied or state.path changes.
func (in *incr) loseManifest() {
	in.t.Helper()
	in.state = openState(in.t, filepath.Join(in.t.TempDir(), "state.db"))
}

// texts returns the texts of a document's nodes.
func (in *incr) texts(doc string) []string {
	var out []string
	for _, n := range in.store.byDoc()[doc] {
		out = append(out, n.Text)
	}
	return out
}

// TestLostManifestLeavesNoStaleNodes edits a document after the manifest
// was lost: its earlier nodes, which the new manifest does not know, must
// not stay in the store next to the new ones, whatever the store can tell.
func TestLostManifestLeavesNoStaleNodes(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Version one. Alpha.", "b.md": "Another document."})
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.run(wrap)
			in.loseManifest()
			in.write("a.md", "Version two. Beta.")
			rep := in.run(wrap)
			if rep.FilesAdded != 2 || rep.FilesFailed != 0 {
				t.Errorf("run after the manifest was lost: %+v", rep)
			}
			if got := in.texts("a.md"); !slices.Equal(got, []string{"Version two. Beta."}) {
				t.Errorf("nodes of a.md = %q, want only the second version", got)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestLostManifestIsReported: a run over the folder that finds nodes in
// the store although the manifest records none cannot tell which belong to
// files that are gone; it must say so, in its report and in a warning that
// names the way out (--verify), and a Verify run must then remove them.
// Runs into an empty store, runs that know the store, and Full and Verify
// runs, which remove such documents themselves, say nothing. A store that
// cannot tell it is empty cannot be caught.
func TestLostManifestIsReported(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha stays.", "b.md": "Bravo goes."})
			var logged strings.Builder
			wrap := func(o *Options) {
				o.Store = kind.wrap(in.store)
				o.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
			}
			run := func(step string, mod func(*Options), want bool) {
				t.Helper()
				logged.Reset()
				rep := in.run(func(o *Options) {
					wrap(o)
					if mod != nil {
						mod(o)
					}
				})
				warned := strings.Contains(logged.String(), "manifest records none")
				if rep.UnknownNodes != want || warned != want {
					t.Errorf("%s: unknown_nodes %v, warned %v; want %v (log: %s)", step, rep.UnknownNodes, warned, want, logged.String())
				}
				if want && !strings.Contains(logged.String(), "--verify") {
					t.Errorf("%s: the warning does not name --verify: %s", step, logged.String())
				}
			}
			_, reporter := kind.wrap(in.store).(EmptyReporter)
			run("first run, empty store", nil, false)
			run("second run", nil, false)
			in.loseManifest()
			if err := os.Remove(filepath.Join(in.root, "b.md")); err != nil {
				t.Fatal(err)
			}
			run("run after the manifest was lost", nil, reporter)
			if got := len(in.texts("b.md")); got != 1 {
				t.Errorf("b.md has %d nodes after the plain run, want its 1 (the manifest never knew it)", got)
			}
			run("the run after that", nil, false)
			in.loseManifest()
			run("verify run after the manifest was lost", in.verifying(true), false)
			if got := len(in.texts("b.md")); got != 0 {
				t.Errorf("b.md has %d nodes after the verify run, want none", got)
			}
			in.assertEqualsCleanRun()
			in.loseManifest()
			run("full run after the manifest was lost", func(o *Options) { o.Full = true }, false)
		})
	}
}

// TestLostManifestThenFailureThenRemoval: a document that fails in the run
// after the manifest was lost, before its first chunk (its file cannot be
// read) or after (its embedding fails), keeps its nodes, and the manifest
// keeps knowing them, so that they go, and are counted, when its file is
// removed later. Before, the manifest forgot them with the failure, and
// they stayed in the store for good. Stores that cannot list a document's
// nodes (NodeLister) are not covered: nothing can tell their ids.
func TestLostManifestThenFailureThenRemoval(t *testing.T) {
	for _, kind := range storeKinds {
		if _, ok := kind.wrap(newMemStore()).(NodeLister); !ok {
			continue
		}
		for _, at := range []string{"read", "embedding"} {
			t.Run(kind.name+", fails at the "+at, func(t *testing.T) {
				in := newIncr(t, map[string]string{"a.md": "Alpha stays.", "b.md": "Bravo goes. " + paragraphText("bravo", 40)})
				wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
				in.run(wrap)
				before := len(in.texts("b.md"))
				in.loseManifest()
				if at == "read" {
					in.write("b.md", "Bravo \xff broken.")
				} else {
					in.emb.poison = "bravo"
				}
				if rep := in.run(wrap); rep.FilesFailed != 1 || len(in.texts("b.md")) != before {
					t.Fatalf("the failing run: %d failed, b.md has %d nodes; want 1 failed and its %d nodes kept", rep.FilesFailed, len(in.texts("b.md")), before)
				}
				in.emb.poison = ""
				if err := os.Remove(filepath.Join(in.root, "b.md")); err != nil {
					t.Fatal(err)
				}
				rep := in.run(wrap)
				if rep.FilesDeleted != 1 || rep.ChunksDeleted != before || len(in.texts("b.md")) != 0 {
					t.Errorf("the run after b.md was removed: %d deleted, %d chunks deleted, b.md has %d nodes; want 1, %d and none", rep.FilesDeleted, rep.ChunksDeleted, len(in.texts("b.md")), before)
				}
				in.assertEqualsCleanRun()
			})
		}
	}
}

// TestFullRemovesNodesTheManifestDoesNotList: --full rewrites a document
// whole, so nodes of it that no manifest lists (left by an earlier lost
// state file) go too.
func TestFullRemovesNodesTheManifestDoesNotList(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Version two. Beta.", "b.md": "Another document."})
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.run(wrap)
			orphan := sink.Node{ID: "orphan", RefDocID: "a.md", Text: "Version one. Alpha.", Embedding: make([]float32, 8)}
			if _, err := in.store.Add(context.Background(), []sink.Node{orphan}); err != nil {
				t.Fatal(err)
			}
			rep := in.run(func(o *Options) { wrap(o); o.Full = true })
			if rep.FilesUpdated != 2 || rep.FilesFailed != 0 {
				t.Errorf("--full run: %+v", rep)
			}
			if _, lister := kind.wrap(in.store).(NodeLister); lister && rep.ChunksDeleted != 1 {
				t.Errorf("--full run deleted %d chunks, want the orphan's 1", rep.ChunksDeleted)
			}
			if got := in.texts("a.md"); !slices.Equal(got, []string{"Version two. Beta."}) {
				t.Errorf("nodes of a.md after --full = %q, want only the current version", got)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// presentStore is a nodeListingStore that, after every change, checks that
// each document of docs still has a node, as a reader would want it to.
type presentStore struct {
	nodeListingStore
	t    *testing.T
	docs []string
}

func (s presentStore) check() {
	s.t.Helper()
	have := s.byDoc()
	for _, d := range s.docs {
		if len(have[d]) == 0 {
			s.t.Errorf("%s has no node in the store during the run", d)
		}
	}
}

func (s presentStore) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	defer s.check()
	return s.memStore.Add(ctx, nodes)
}

func (s presentStore) Delete(ctx context.Context, refDocID string) error {
	defer s.check()
	return s.memStore.Delete(ctx, refDocID)
}

func (s presentStore) DeleteNodes(ctx context.Context, ids []string) error {
	defer s.check()
	return s.memStore.DeleteNodes(ctx, ids)
}

// TestReplacedDocumentsNeverDisappear: a --full run, and a run after the
// manifest was lost, into a store that lists a document's nodes, delete a
// document's earlier nodes only after its new ones are stored, so readers
// never find a document missing; the result is a clean run's.
func TestReplacedDocumentsNeverDisappear(t *testing.T) {
	files := corpus(6)
	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprint("full=", full), func(t *testing.T) {
			in := newIncr(t, files)
			in.run(nil)
			ps := presentStore{nodeListingStore{in.store}, t, slices.Sorted(maps.Keys(files))}
			orphan := sink.Node{ID: "orphan", RefDocID: ps.docs[0], Text: "Left by a lost manifest.", Embedding: make([]float32, 8)}
			if _, err := in.store.Add(context.Background(), []sink.Node{orphan}); err != nil {
				t.Fatal(err)
			}
			if !full {
				in.loseManifest()
			}
			in.store.docDeletes = 0
			rep := in.run(func(o *Options) { o.Store = ps; o.Full = full; o.BatchSize = 2 })
			if rep.FilesFailed != 0 || in.store.docDeletes != 0 {
				t.Errorf("run: %d deletes by document, report %+v; want none and no failure", in.store.docDeletes, rep)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestFullRemovesGoneDocumentsTheStoreLists: after the manifest was lost, a
// --full run deletes the nodes of documents whose files are gone if the
// store can list its documents; a store that cannot keeps them (the
// documented limitation), and no store loses documents the include
// settings do not select.
func TestFullRemovesGoneDocumentsTheStoreLists(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha text.", "gone.md": "Gone soon.", "keep.json": "{}"})
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.run(wrap)
			notes := sink.Node{ID: "notes", RefDocID: "keep.json", Text: "Not selected.", Embedding: make([]float32, 8)}
			if _, err := in.store.Add(context.Background(), []sink.Node{notes}); err != nil {
				t.Fatal(err)
			}
			remove(t, in, "gone.md")
			in.loseManifest()
			rep := in.run(func(o *Options) { wrap(o); o.Full = true })
			_, lister := kind.wrap(in.store).(NodeScanner)
			docs := in.store.byDoc()
			if _, kept := docs["gone.md"]; kept == lister {
				t.Errorf("gone.md kept: %v, want kept only by a store that cannot list its documents (report %+v)", kept, rep)
			}
			if lister && rep.FilesDeleted != 1 {
				t.Errorf("FilesDeleted = %d, want 1", rep.FilesDeleted)
			}
			if len(docs["keep.json"]) != 1 || len(docs["a.md"]) == 0 {
				t.Errorf("documents left: %v; want a.md and the unselected keep.json", slices.Sorted(maps.Keys(docs)))
			}
		})
	}
}

// TestFirstLoadIntoEmptyStoreDeletesNothing: a store that can tell it is
// empty spares a first bulk load the delete per document; other stores get
// it (correct, slower), and so does a store that holds nodes.
func TestFirstLoadIntoEmptyStoreDeletesNothing(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, corpus(6))
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.run(wrap)
			_, reporter := kind.wrap(in.store).(EmptyReporter)
			_, lister := kind.wrap(in.store).(NodeLister)
			want := 6
			if reporter || lister {
				want = 0
			}
			if in.store.docDeletes != want {
				t.Errorf("first load: %d deletes by document, want %d", in.store.docDeletes, want)
			}
			in.loseManifest()
			in.store.docDeletes = 0
			in.run(wrap)
			if want = 6; lister {
				want = 0 // its nodes are listed, and replaced by the new ones
			}
			if in.store.docDeletes != want {
				t.Errorf("load into a store that holds nodes: %d deletes by document, want %d", in.store.docDeletes, want)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestInterruptedFullRunsConverge cancels --full runs at many points, each
// after some documents had their nodes deleted and were being written
// again, then runs without --full: the result must equal a clean run. A
// document whose nodes were deleted must not keep a record that says they
// are there.
func TestInterruptedFullRunsConverge(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			files := corpus(12)
			in := newIncr(t, files)
			in.run(func(o *Options) { o.Store = kind.wrap(in.store) })
			orphan := sink.Node{ID: "orphan", RefDocID: "d00/f00.md", Text: "Left by a lost manifest.", Embedding: make([]float32, 8)}
			if _, err := in.store.Add(context.Background(), []sink.Node{orphan}); err != nil {
				t.Fatal(err)
			}
			for i := range 8 {
				o := in.options()
				o.Store = kind.wrap(in.store)
				o.Full = true
				o.BatchSize, o.EmbedConcurrency = 3, 1
				in.runInterrupted(o, int64(i+1))
			}
			in.run(func(o *Options) { o.Store = kind.wrap(in.store) })
			in.assertEqualsCleanRun()
		})
	}
}

// TestDeleteOfEarlierNodesStopsTheRun: a store that cannot delete stops the
// run, as for every other store error, instead of failing documents one by
// one.
func TestDeleteOfEarlierNodesStopsTheRun(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(nil)
	in.loseManifest()
	_, err := Run(context.Background(), func() Options {
		o := in.options()
		o.Store = failingDelete{in.store}
		return o
	}())
	if err == nil || !strings.Contains(err.Error(), "deleting the earlier nodes") {
		t.Fatalf("Run = %v, want the store's delete error", err)
	}
}

// TestListingOfEarlierNodesStopsTheRun: a store that cannot list a
// document's nodes stops the run, naming the document.
func TestListingOfEarlierNodesStopsTheRun(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(nil)
	in.loseManifest()
	_, err := Run(context.Background(), func() Options {
		o := in.options()
		o.Store = failingList{nodeListingStore{in.store}}
		return o
	}())
	if !errors.Is(err, sink.ErrUnavailable) || !strings.Contains(err.Error(), "listing the earlier nodes of d0") {
		t.Fatalf("Run = %v, want the store's listing error naming the document", err)
	}
}

// listOnePage is a nodeListingStore whose listing fails after its first
// page, as on a transient error or a kill between two pages.
type listOnePage struct{ nodeListingStore }

func (s listOnePage) NodeIDs(ctx context.Context, id string, fn func([]string) error) error {
	pages := 0
	return s.nodeListingStore.NodeIDs(ctx, id, func(ids []string) error {
		if pages++; pages > 1 {
			return sink.ErrUnavailable
		}
		return fn(ids)
	})
}

// TestListingCutShortIsTakenAgain: a run that recorded only part of a
// document's nodes before it stopped leaves a document without a record,
// which the next run lists again, so none of its earlier nodes stay.
func TestListingCutShortIsTakenAgain(t *testing.T) {
	in := newIncr(t, map[string]string{"big.md": paragraphText("v1", 60)})
	in.run(nil)
	in.loseManifest()
	in.write("big.md", paragraphText("v2", 60))
	o := in.options()
	o.Store = listOnePage{nodeListingStore{in.store}}
	if _, err := Run(context.Background(), o); !errors.Is(err, sink.ErrUnavailable) {
		t.Fatalf("Run = %v, want the listing's error", err)
	}
	in.run(func(o *Options) { o.Store = nodeListingStore{in.store} })
	in.assertEqualsCleanRun()
}

// failingList is a nodeListingStore whose NodeIDs fails.
type failingList struct{ nodeListingStore }

func (failingList) NodeIDs(context.Context, string, func([]string) error) error {
	return sink.ErrUnavailable
}

// failingDelete is a memStore whose Delete fails.
type failingDelete struct{ *memStore }

func (failingDelete) Delete(context.Context, string) error { return sink.ErrUnavailable }

// TestStoreLostBehindTheManifest empties the store between runs, as when
// an index is deleted and created again: the next run must write every
// document again (the manifest says they are all there), forget the
// documents whose files are gone, and say so in its report.
func TestStoreLostBehindTheManifest(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, corpus(6))
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.run(wrap)
			in.store.mu.Lock()
			clear(in.store.nodes)
			in.store.mu.Unlock()
			if err := os.Remove(filepath.Join(in.root, "d00/f00.md")); err != nil {
				t.Fatal(err)
			}
			rep := in.run(wrap)
			if _, reporter := kind.wrap(in.store).(EmptyReporter); !reporter {
				// Without Empty the loss cannot be seen: the run trusts
				// the manifest, as documented.
				if rep.StoreLost || rep.FilesUnchanged != 5 {
					t.Errorf("store that cannot tell it is empty: report %+v, want 5 unchanged", rep)
				}
				return
			}
			if !rep.StoreLost || rep.FilesUnchanged != 0 || rep.FilesUpdated != 5 || rep.FilesDeleted != 1 || rep.ChunksReused != 0 {
				t.Errorf("report %+v; want store_lost, 5 updated, 1 deleted, nothing unchanged or reused", rep)
			}
			in.assertEqualsCleanRun()
			if rep := in.run(wrap); rep.StoreLost || rep.FilesUnchanged != 5 {
				t.Errorf("the run after: %+v, want 5 unchanged", rep)
			}
		})
	}
}

// TestFirstRunWithNothingWrittenIsNotALostStore: a first run stopped by
// its store before any write landed (a full disk) leaves the manifest
// recording only the nodes it meant to write; the store is empty because
// nothing was written, not because it was lost, so the next run says
// nothing of a lost store.
func TestFirstRunWithNothingWrittenIsNotALostStore(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			in := newIncr(t, corpus(6))
			wrap := func(o *Options) { o.Store = kind.wrap(in.store) }
			in.store.down = fmt.Errorf("database or disk is full: %w", sink.ErrUnavailable)
			o := in.options()
			wrap(&o)
			if _, err := Run(context.Background(), o); !errors.Is(err, sink.ErrUnavailable) {
				t.Fatalf("first run: %v, want the store's error", err)
			}
			// The memStore keeps what it refuses, as a service may; a
			// SQLite store rolls the refused transaction back.
			in.store.mu.Lock()
			clear(in.store.nodes)
			in.store.down = nil
			in.store.mu.Unlock()
			rep := in.run(wrap)
			if rep.StoreLost || rep.FilesIngested != 6 {
				t.Errorf("the run after: store_lost %v, %d files ingested; want no lost store, 6 ingested", rep.StoreLost, rep.FilesIngested)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestStoreLostThenAFailure: a document the run that finds the store lost
// does not write back must be written whole by a later run, although the
// manifest's record of it lists the nodes the lost store had: the run that
// found the loss records it, so the later run embeds those chunks again
// instead of taking them for stored (which left them out of the store, or
// sent Cloud AI Search a merge it refused with 404 on every run). Such a
// document failed in that run, or was not in it: a watch round over one
// changed file found the loss, wrote that file, and the store was no longer
// empty for the next run to see.
func TestStoreLostThenAFailure(t *testing.T) {
	files := corpus(4)
	files["p.md"] = paragraphText("first", 30) + " POISON " + paragraphText("second", 30)
	for _, tt := range []struct {
		name       string
		watchRound bool // the run that finds the loss reads p.md alone
		fail       bool // p.md fails in that run
		unchanged  int  // documents the run after finds unchanged
	}{
		{"failure", false, true, 4},
		{"watch round with a failure", true, true, 0},
		{"watch round", true, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, files)
			wrap := func(o *Options) { o.Store = reportingStore{in.store} }
			in.run(wrap)
			in.store.mu.Lock()
			clear(in.store.nodes)
			in.store.mu.Unlock()
			if tt.fail {
				in.emb.poison = "POISON"
			}
			lost := in.run(func(o *Options) {
				wrap(o)
				if tt.watchRound {
					o.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
						f, err := reader.Stat(o.Reader, "p.md")
						return fn(f, err)
					}
				}
			})
			if wantFailed := map[bool]int{true: 1}[tt.fail]; !lost.StoreLost || lost.FilesFailed != wantFailed {
				t.Fatalf("the run that finds the loss: %+v; want store_lost and %d failed", lost, wantFailed)
			}
			in.emb.poison = ""
			if rep := in.run(wrap); rep.FilesFailed != 0 || rep.FilesUnchanged != tt.unchanged || rep.ChunksReused != 0 {
				t.Errorf("the run after: %+v; want no failure, %d unchanged, nothing reused", rep, tt.unchanged)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// laggingStore is a memStore whose count lags its writes, as Cloud AI
// Search's does: its first answer to Empty is "empty", whatever it holds.
type laggingStore struct {
	*memStore
	asked *int
}

func (s laggingStore) Empty(ctx context.Context) (bool, error) {
	if *s.asked++; *s.asked == 1 {
		return true, nil
	}
	return reportingStore{s.memStore}.Empty(ctx)
}

func (laggingStore) Settle() time.Duration { return time.Millisecond }

// TestStoreLostAsksALaggingCountAgain: a store whose count lags its writes
// (SettlingCounter) is asked again before the run takes it for lost: a run
// started right after another writes nothing again, while a store that
// is still empty when asked again is written whole.
func TestStoreLostAsksALaggingCountAgain(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost %v", lost), func(t *testing.T) {
			in := newIncr(t, corpus(4))
			in.run(nil)
			if lost {
				clear(in.store.nodes)
			}
			asked := 0
			rep := in.run(func(o *Options) { o.Store = laggingStore{in.store, &asked} })
			if asked != 2 {
				t.Errorf("Empty asked %d times, want 2 (once more after Settle)", asked)
			}
			if rep.StoreLost != lost || (rep.FilesUnchanged == 4) == lost {
				t.Errorf("report %+v; want store_lost %v", rep, lost)
			}
			in.assertEqualsCleanRun()
		})
	}
}
