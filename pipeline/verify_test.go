package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// checkingStore is a scanningStore that tells which node ids it holds
// (NodeChecker), as sink/local.Store and sink/cloudsearch.Store do. Until
// lagging calls have been answered, it holds none of them, as a store
// whose reads lag its writes answers right after a run (see Settle).
type checkingStore struct {
	scanningStore
	calls   *int
	lagging int
}

func (s checkingStore) ExistingIDs(_ context.Context, ids []string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.calls++
	held := map[string]bool{}
	if *s.calls <= s.lagging {
		return held, nil
	}
	for _, id := range ids {
		if _, ok := s.nodes[id]; ok {
			held[id] = true
		}
	}
	return held, nil
}

// settlingCheckingStore is a checkingStore whose reads lag its writes
// (SettlingCounter).
type settlingCheckingStore struct{ checkingStore }

func (settlingCheckingStore) Settle() time.Duration { return time.Millisecond }

// verifying returns the options of a run with Verify over a checkingStore
// of in's store.
func (in *incr) verifying(verify bool) func(*Options) {
	return func(o *Options) {
		o.Store = checkingStore{scanningStore{nodeListingStore{in.store}}, new(int), 0}
		o.Verify = verify
	}
}

// dropNodes deletes from in's store, behind the manifest's back, the
// first n nodes of doc in text order (all with n < 0), and returns their
// texts.
func (in *incr) dropNodes(doc string, n int) []string {
	in.t.Helper()
	nodes := in.store.byDoc()[doc]
	if n < 0 || n > len(nodes) {
		n = len(nodes)
	}
	if n == 0 {
		in.t.Fatalf("%s has no node to drop", doc)
	}
	var texts []string
	in.store.mu.Lock()
	defer in.store.mu.Unlock()
	for _, node := range nodes[:n] {
		delete(in.store.nodes, node.ID)
		texts = append(texts, node.Text)
	}
	return texts
}

// TestVerifyWritesAgainNodesDeletedBehindTheManifest deletes some nodes of
// one document and all of another from the store, as a delete in the
// service's portal does. A run trusts the manifest and leaves them
// missing; a run with Verify finds them, embeds and writes again exactly
// those chunks, keeps the others, and the store is then what a clean run
// writes. The run after finds nothing missing.
func TestVerifyWritesAgainNodesDeletedBehindTheManifest(t *testing.T) {
	in := newIncr(t, corpus(6))
	first := in.run(in.verifying(false))
	total := first.ChunksWritten
	in.dropNodes("d00/f00.md", 2)
	in.dropNodes("d01/f01.md", -1)
	missing := total - len(in.store.nodes)
	if missing < 3 {
		t.Fatalf("only %d nodes dropped", missing)
	}

	if rep := in.run(in.verifying(false)); rep.FilesUnchanged != 6 || rep.Verify != nil {
		t.Fatalf("run without Verify: %+v, want 6 unchanged and no verify report", rep)
	}
	if got := total - len(in.store.nodes); got != missing {
		t.Fatalf("a run without Verify changed the store: %d missing, want %d", got, missing)
	}

	in.emb.requests = 0
	tokensBefore := first.TokensEmbedded
	rep := in.run(in.verifying(true))
	want := VerifyReport{NodesChecked: total, NodesMissing: missing, Documents: 2}
	if rep.Verify == nil || *rep.Verify != want {
		t.Fatalf("verify report %+v, want %+v", rep.Verify, want)
	}
	if rep.FilesUpdated != 2 || rep.FilesUnchanged != 4 || rep.ChunksWritten != missing || rep.ChunksDeleted != 0 {
		t.Errorf("run with Verify: %+v; want 2 updated, 4 unchanged, %d chunks written, none deleted", rep, missing)
	}
	if rep.TokensEmbedded <= 0 || rep.TokensEmbedded >= tokensBefore {
		t.Errorf("run with Verify embedded %d tokens, the first run %d: want only the missing chunks'", rep.TokensEmbedded, tokensBefore)
	}
	in.assertEqualsCleanRun()

	in.emb.requests = 0
	again := in.run(in.verifying(true))
	want = VerifyReport{NodesChecked: total}
	if again.Verify == nil || *again.Verify != want || again.FilesUnchanged != 6 || in.emb.requests != 0 {
		t.Errorf("the run after: %+v, verify %+v, %d embedding requests; want nothing missing, 6 unchanged, none", again, again.Verify, in.emb.requests)
	}
}

// TestVerifyDryRunPlansTheWrites: a dry run with Verify reports the
// missing nodes and plans their chunks, and writes nothing.
func TestVerifyDryRunPlansTheWrites(t *testing.T) {
	in := newIncr(t, corpus(4))
	in.run(in.verifying(false))
	texts := in.dropNodes("d02/f02.md", 3)
	before, adds := len(in.store.nodes), in.store.adds
	rep := in.run(func(o *Options) {
		in.verifying(true)(o)
		o.DryRun = true
		o.Embedder = nil
	})
	if rep.Verify == nil || rep.Verify.NodesMissing != len(texts) || rep.Verify.Documents != 1 {
		t.Errorf("dry run's verify report %+v, want %d missing in 1 document", rep.Verify, len(texts))
	}
	if rep.ChunksPlanned != len(texts) || rep.FilesUpdated != 1 || rep.FilesUnchanged != 3 || rep.ChunksDeleted != 0 {
		t.Errorf("dry run: %+v; want %d chunks planned, 1 updated, 3 unchanged", rep, len(texts))
	}
	if len(in.store.nodes) != before || in.store.adds != adds {
		t.Errorf("the dry run wrote: %d nodes (want %d), %d adds", len(in.store.nodes), before, in.store.adds-adds)
	}
}

// TestVerifyLooksOnlyAtSelectedDocuments: documents the include settings
// leave out are neither checked nor written.
func TestVerifyLooksOnlyAtSelectedDocuments(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": paragraphText("a", 20), "b.txt": paragraphText("b", 20)})
	in.run(in.verifying(false))
	in.dropNodes("a.md", 1)
	in.dropNodes("b.txt", 1)
	rep := in.run(func(o *Options) {
		in.verifying(true)(o)
		o.Reader.Include = []string{"**/*.txt"}
	})
	if rep.Verify == nil || rep.Verify.NodesMissing != 1 || rep.Verify.Documents != 1 || rep.FilesUpdated != 1 {
		t.Fatalf("run over *.txt: %+v, verify %+v; want b.txt's one missing node written again", rep, rep.Verify)
	}
	if got := len(in.store.byDoc()["a.md"]); got == 0 {
		t.Error("a.md lost all its nodes")
	}
	if n := rep.Verify.NodesChecked; n != len(in.store.byDoc()["b.txt"]) {
		t.Errorf("checked %d nodes, want b.txt's %d", n, len(in.store.byDoc()["b.txt"]))
	}
}

// TestVerifyAsksALaggingStoreAgain: a store whose reads lag its writes
// (SettlingCounter) is asked about the missing nodes again after Settle,
// so a run right after another writes nothing again; a store that still
// lacks them then gets them written.
func TestVerifyAsksALaggingStoreAgain(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(map[bool]string{false: "lagging", true: "lost"}[lost], func(t *testing.T) {
			in := newIncr(t, corpus(3))
			in.run(in.verifying(false))
			dropped := 0
			if lost {
				dropped = len(in.dropNodes("d00/f00.md", 1))
			}
			calls := 0
			rep := in.run(func(o *Options) {
				o.Store = settlingCheckingStore{checkingStore{scanningStore{nodeListingStore{in.store}}, &calls, 1}}
				o.Verify = true
			})
			if calls != 2 {
				t.Errorf("ExistingIDs called %d times, want 2 (once more after Settle)", calls)
			}
			if rep.Verify == nil || rep.Verify.NodesMissing != dropped || rep.ChunksWritten != dropped {
				t.Errorf("report %+v, verify %+v; want %d missing and written", rep, rep.Verify, dropped)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// TestVerifyDeletesDocumentsTheManifestForgot: with Verify, as with Full,
// a NodeScanner store's documents whose files are gone are deleted even when
// the manifest does not know them.
func TestVerifyDeletesDocumentsTheManifestForgot(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(in.verifying(false))
	in.loseManifest()
	in.run(in.verifying(false)) // records every document again
	in.store.nodes["orphan"] = sink.Node{ID: "orphan", RefDocID: "gone.md", Text: "left behind"}
	if rep := in.run(in.verifying(false)); rep.FilesDeleted != 0 {
		t.Fatalf("run without Verify deleted %d documents", rep.FilesDeleted)
	}
	rep := in.run(in.verifying(true))
	if rep.FilesDeleted != 1 || rep.Verify == nil || rep.Verify.NodesMissing != 0 {
		t.Errorf("run with Verify: %+v, verify %+v; want gone.md deleted, nothing missing", rep, rep.Verify)
	}
	if _, ok := in.store.nodes["orphan"]; ok {
		t.Error("the orphan node is still stored")
	}
}

// TestVerifyIsMootWhenEverythingIsWritten: a Full run and a run that finds
// the store lost write every document anyway and check nothing.
func TestVerifyIsMootWhenEverythingIsWritten(t *testing.T) {
	in := newIncr(t, corpus(3))
	calls := 0
	verifying := func(o *Options) {
		o.Store = checkingStore{scanningStore{nodeListingStore{in.store}}, &calls, 0}
		o.Verify = true
	}
	in.run(verifying) // an empty manifest: nothing to check
	if calls != 0 {
		t.Errorf("first run: ExistingIDs called %d times for an empty manifest", calls)
	}
	rep := in.run(func(o *Options) { verifying(o); o.Full = true })
	if rep.Verify != nil || calls != 0 || rep.FilesUpdated != 3 {
		t.Errorf("Full: %+v, verify %+v, %d calls; want every document written and nothing checked", rep, rep.Verify, calls)
	}
	clear(in.store.nodes)
	rep = in.run(verifying)
	if rep.Verify != nil || !rep.StoreLost || calls != 0 {
		t.Errorf("store lost: %+v, verify %+v, %d calls; want store_lost and nothing checked", rep, rep.Verify, calls)
	}
}

// TestVerifyOptionErrors: Verify without a manifest, with a store that
// cannot check node ids, or over named files is refused before anything
// is read.
func TestVerifyOptionErrors(t *testing.T) {
	in := newIncr(t, corpus(1))
	tests := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"no manifest", func(o *Options) { in.verifying(true)(o); o.State = nil }, "needs Options.State"},
		{"store cannot check", func(o *Options) { o.Verify = true }, "NodeChecker"},
		{"named files", func(o *Options) {
			in.verifying(true)(o)
			o.Source = func(context.Context, func(reader.File, error) error) error { return nil }
		}, "whole folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := in.options()
			tt.mod(&o)
			rep, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) || rep != nil {
				t.Errorf("Run = %v, %v; want an error containing %q", rep, err, tt.want)
			}
		})
	}
	if len(in.store.nodes) != 0 {
		t.Errorf("a refused run wrote %d nodes", len(in.store.nodes))
	}
}

// serial makes a run embed and write one chunk at a time, in order.
func serial(o *Options) { o.BatchSize, o.EmbedConcurrency, o.SplitConcurrency = 1, 1, 1 }

// TestVerifyFailedRepairLeavesNoStaleMetadata: a document whose nodes were
// all lost is repaired from a file that changed meanwhile and fails; the
// chunks written before the failure must not stay with that file's
// metadata: once the file is back as recorded, the store is what a clean
// run writes.
func TestVerifyFailedRepairLeavesNoStaleMetadata(t *testing.T) {
	body := paragraphText("known", 30)
	in := newIncr(t, map[string]string{"known.md": body, "other.md": paragraphText("other", 30)})
	in.run(func(o *Options) { serial(o); in.verifying(false)(o) })
	in.dropNodes("known.md", -1)
	in.write("known.md", body+"The last sentence says REJECTME.")
	in.store.reject = "REJECTME"
	if rep := in.run(func(o *Options) { serial(o); in.verifying(true)(o) }); rep.FilesFailed != 1 {
		t.Fatalf("report %+v, want known.md failed", rep)
	}
	in.store.reject = ""
	in.write("known.md", body)
	in.run(func(o *Options) { serial(o); in.verifying(false)(o) })
	in.assertEqualsCleanRun()
	for id, n := range in.store.nodes {
		if want := fmt.Sprint(len(body)); fmt.Sprint(n.Metadata["file_size"]) != want && n.RefDocID == "known.md" {
			t.Errorf("node %s has file_size %v, want %s", id, n.Metadata["file_size"], want)
		}
	}
}

// TestVerifyFailedRepairIsRetried: a repair that fails is dead-lettered,
// and a run over the named file that does not verify (`sluice failed
// retry`, a watch round) writes the missing chunk when the store takes it:
// the manifest no longer lists it.
func TestVerifyFailedRepairIsRetried(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(in.verifying(false))
	texts := in.dropNodes("d01/f01.md", 1)
	in.store.reject = texts[0][:40]
	if rep := in.run(in.verifying(true)); rep.FilesFailed != 1 {
		t.Fatalf("want the repair to fail: %+v", rep)
	}
	in.store.reject = ""
	rep := in.run(func(o *Options) {
		in.verifying(false)(o)
		o.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
			f, err := reader.Stat(o.Reader, "d01/f01.md")
			return fn(f, err)
		}
	})
	if rep.FilesUpdated != 1 || rep.ChunksWritten != 1 {
		t.Errorf("retry: %+v; want d01/f01.md updated with its 1 missing chunk", rep)
	}
	if fails, err := in.state.Failures(context.Background()); err != nil || len(fails) != 0 {
		t.Errorf("dead letters after the retry: %v, %v", fails, err)
	}
	in.assertEqualsCleanRun()
}

// TestVerifyDryRunMatchesRun: the plan of a dry run with Verify is what the
// run with Verify then does, for a damaged document edited meanwhile too.
func TestVerifyDryRunMatchesRun(t *testing.T) {
	in := newIncr(t, corpus(4))
	in.run(in.verifying(false))
	in.dropNodes("d02/f02.md", 3)
	in.write("d02/f02.md", paragraphText("rewritten", 30))
	dry := in.run(func(o *Options) { in.verifying(true)(o); o.DryRun = true; o.Embedder = nil })
	real := in.run(in.verifying(true))
	if dry.ChunksDeleted != real.ChunksDeleted || dry.ChunksPlanned != real.ChunksWritten || dry.FilesUpdated != real.FilesUpdated || *dry.Verify != *real.Verify {
		t.Errorf("dry run planned %d writes, %d deletes, %d updated files, verify %+v; the run did %d, %d, %d, %+v",
			dry.ChunksPlanned, dry.ChunksDeleted, dry.FilesUpdated, *dry.Verify, real.ChunksWritten, real.ChunksDeleted, real.FilesUpdated, *real.Verify)
	}
	in.assertEqualsCleanRun()
}

// TestVerifyKilledMidRepairConverges kills runs with Verify after 1 to 3
// embedding batches, with and without edits of damaged documents: the next
// run, with or without Verify, leaves the store as a clean run writes it.
func TestVerifyKilledMidRepairConverges(t *testing.T) {
	for _, edit := range []bool{false, true} {
		for batches := int64(1); batches <= 3; batches++ {
			t.Run(fmt.Sprintf("edit %v, killed after %d", edit, batches), func(t *testing.T) {
				in := newIncr(t, corpus(6))
				two := func(o *Options) { o.BatchSize, o.EmbedConcurrency, o.SplitConcurrency = 2, 1, 1 }
				in.run(func(o *Options) { two(o); in.verifying(false)(o) })
				for _, d := range []string{"d00/f00.md", "d01/f01.md", "d02/f02.md", "d00/f03.md"} {
					in.dropNodes(d, 3)
				}
				if edit {
					in.write("d01/f01.md", paragraphText("topic1", 30)+" An extra sentence.")
					in.write("d02/f02.md", paragraphText("other", 25))
				}
				o := in.options()
				two(&o)
				in.verifying(true)(&o)
				in.runInterrupted(o, batches)
				in.run(func(o *Options) { two(o); in.verifying(false)(o) })
				in.assertEqualsCleanRun()
				if again := in.run(in.verifying(true)); again.Verify.NodesMissing != 0 || again.FilesUnchanged != 6 {
					t.Errorf("not converged: %+v, verify %+v", again, again.Verify)
				}
			})
		}
	}
}
