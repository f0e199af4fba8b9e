package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// tagged returns an option setting the metadata rule of every *.md file to
// tag.
func tagged(tag string) func(*Options) {
	return func(o *Options) {
		o.Reader.Metadata = []reader.MetadataRule{{Match: "*.md", Set: map[string]any{"tag": tag}}}
	}
}

// TestFailureAfterCutShortRewriteThenReverted: a run killed while it
// rewrote a document's metadata leaves pending ids of the record's chunks;
// the next run, with the rule reverted, fails the document before reaching
// them (its file was emptied meanwhile). The rollback must not forget
// that those chunks may carry the other metadata: once the file is back,
// the next run gives them the document's metadata again.
func TestFailureAfterCutShortRewriteThenReverted(t *testing.T) {
	body := paragraphText("alpha", 30)
	in := newIncr(t, map[string]string{"a.md": body})
	in.run(tagged("old"))
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	o := in.options()
	tagged("new")(&o)
	o.Store = killedAtUpdate{in.store, kill}
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want it stopped", err)
	}
	in.write("a.md", "")
	if rep := in.run(tagged("old")); rep.FilesFailed != 1 {
		t.Fatalf("run over the emptied file: %+v; want it failed", rep)
	}
	in.write("a.md", body)
	if rep := in.run(tagged("old")); rep.FilesUpdated != 1 || rep.TokensEmbedded != 0 {
		t.Errorf("run after the file came back: %d updated, %d unchanged, %d tokens embedded; want the document read again and nothing embedded",
			rep.FilesUpdated, rep.FilesUnchanged, rep.TokensEmbedded)
	}
	in.assertEqualsCleanRunWith(tagged("old"))
}

// TestSplitterChangeCutShortThenReverted: a run that splits every document
// again with other splitter settings is killed after committing some of
// them. Whether the next run keeps the new settings or goes back to the
// old ones, the store must hold what a clean run with its settings writes.
func TestSplitterChangeCutShortThenReverted(t *testing.T) {
	other := func(o *Options) { o.Splitter = newSplitter(t, 100, 10) }
	for _, tt := range []struct {
		name string
		full bool
		next func(*Options)
	}{
		{"reverted", false, nil},
		{"kept", false, other},
		{"full, reverted", true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(8))
			in.run(nil)
			o := in.options()
			other(&o)
			o.Full = tt.full
			o.BatchSize, o.EmbedConcurrency = 3, 1
			stopped := in.runInterrupted(o, 4)
			if stopped.FilesIngested == 0 || stopped.Complete {
				t.Fatalf("interrupted run: %+v; the test needs some documents committed, not all", stopped)
			}
			// With the new settings kept, the documents the stopped run
			// committed are done; any other document is split again.
			wantUnchanged := 0
			if tt.next != nil {
				wantUnchanged = stopped.FilesIngested
			}
			if rep := in.run(tt.next); rep.FilesUnchanged != wantUnchanged || rep.FilesIngested != 8-wantUnchanged {
				t.Errorf("next run: %d unchanged, %d ingested; want %d and %d", rep.FilesUnchanged, rep.FilesIngested, wantUnchanged, 8-wantUnchanged)
			}
			in.assertEqualsCleanRunWith(tt.next)
		})
	}
}

// TestFirstRunCutShortThenOtherSplitter: the first run into a new manifest
// is killed after committing some documents, and the next run has other
// splitter settings (the first one's were a mistake, or were put back).
// The manifest had no settings recorded, as a run records them at its end:
// the next run took those documents, cut with the first run's settings,
// for unchanged, and kept their chunks (found by TestModelIncrementalRuns).
func TestFirstRunCutShortThenOtherSplitter(t *testing.T) {
	in := newIncr(t, corpus(8))
	o := in.options()
	o.Splitter = newSplitter(t, 40, 8)
	o.BatchSize, o.EmbedConcurrency = 3, 1
	stopped := in.runInterrupted(o, 4)
	if stopped.FilesIngested == 0 || stopped.Complete {
		t.Fatalf("interrupted run: %+v; the test needs some documents committed, not all", stopped)
	}
	if rep := in.run(nil); rep.FilesUnchanged != 0 || rep.FilesIngested != 8 {
		t.Errorf("next run: %d unchanged, %d ingested; want every document split again", rep.FilesUnchanged, rep.FilesIngested)
	}
	in.assertEqualsCleanRun()
}

// TestSplitterChangeInARunOverNamedFiles: a run over named files (`sluice
// failed retry`) with other splitter settings than those recorded cuts
// those files with its settings. Whichever settings the next run over the
// whole folder has, the store must then hold what a clean run with them
// writes: the retried documents are not taken for cut with the recorded
// settings, nor the others for cut with the retry's.
func TestSplitterChangeInARunOverNamedFiles(t *testing.T) {
	other := func(o *Options) { o.Splitter = newSplitter(t, 100, 10) }
	for _, tt := range []struct {
		name string
		next func(*Options)
	}{
		{"then the recorded settings", nil},
		{"then the retry's settings", other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(4))
			in.run(nil)
			retry := in.run(func(o *Options) {
				other(o)
				o.Source = namedFiles(o.Reader, "d01/f01.md")
			})
			if retry.FilesUpdated != 1 {
				t.Fatalf("the run over d01/f01.md: %d updated, want it split again with its settings", retry.FilesUpdated)
			}
			in.run(tt.next)
			in.assertEqualsCleanRunWith(tt.next)
		})
	}
}

// otherModel embeds like fakeEmbedder, into other vectors: another model
// with the same dimensions.
type otherModel struct{ *fakeEmbedder }

func (e otherModel) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	vecs, err := e.fakeEmbedder.Embed(ctx, in)
	for _, v := range vecs {
		v[0] += 2
	}
	return vecs, err
}

// assertVectors checks that every node of the store has the vector emb
// gives its text.
func (in *incr) assertVectors(emb embedder.Embedder) {
	in.t.Helper()
	bad := 0
	for _, n := range in.store.nodes {
		want, err := emb.Embed(context.Background(), []embedder.Input{{Text: n.Text}})
		if err != nil {
			in.t.Fatal(err)
		}
		if !reflect.DeepEqual(n.Embedding, want[0]) {
			bad++
		}
	}
	if bad > 0 {
		in.t.Errorf("%d of %d nodes hold vectors of another model", bad, len(in.store.nodes))
	}
}

// TestModelChangeCutShort: a --full run that re-embeds the index with
// another model is killed after committing some documents. The next run,
// with the new model or back with the old one, must not leave an index of
// mixed vectors: with the new model it completes the change, with the old
// one it is refused, as any change of model is, until a --full run.
func TestModelChangeCutShort(t *testing.T) {
	newInfo := state.Embedder{Provider: "fake", Model: "two", Dimensions: 8}
	for _, back := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverted %v", back), func(t *testing.T) {
			in := newIncr(t, corpus(8))
			in.run(nil)
			o := in.options()
			o.Embedder, o.EmbedderInfo, o.Full = otherModel{in.emb}, newInfo, true
			o.BatchSize, o.EmbedConcurrency = 3, 1
			if rep := in.runInterrupted(o, 4); rep.FilesIngested == 0 || rep.Complete {
				t.Fatalf("interrupted run: %+v; the test needs some documents committed, not all", rep)
			}
			o = in.options()
			var emb embedder.Embedder = in.emb
			if !back {
				o.Embedder, o.EmbedderInfo = otherModel{in.emb}, newInfo
				emb = o.Embedder
			}
			_, err := Run(context.Background(), o)
			if back {
				// The documents the stopped run committed hold vectors of
				// the new model: only --full puts the old one back.
				if !errors.Is(err, state.ErrModelChanged) {
					t.Fatalf("next run with the old model = %v, want ErrModelChanged", err)
				}
				o.Full = true
				_, err = Run(context.Background(), o)
			}
			if err != nil {
				t.Fatalf("next run: %v", err)
			}
			in.assertVectors(emb)
			in.assertEqualsCleanRun()
		})
	}
}

// TestFullRunCutShortThenRuleReverted: a --full run with a new metadata
// rule is killed after two batches, having rewritten some documents'
// chunks, committed or not; the rule is then put back, at once or after a
// run with the new rule. Whatever the store can tell, each run leaves the
// store as a clean run with its rule writes it.
func TestFullRunCutShortThenRuleReverted(t *testing.T) {
	for _, kind := range storeKinds {
		for _, viaNew := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, via the new rule %v", kind.name, viaNew), func(t *testing.T) {
				t.Parallel()
				in := newIncr(t, corpus(6))
				rule := func(tag string) func(*Options) {
					return func(o *Options) { tagged(tag)(o); o.Store = kind.wrap(in.store) }
				}
				in.run(rule("old"))
				o := in.options()
				rule("new")(&o)
				o.Full = true
				o.BatchSize, o.EmbedConcurrency = 3, 1
				in.runInterrupted(o, 2)
				if viaNew {
					in.run(rule("new"))
					in.assertEqualsCleanRunWith(tagged("new"))
				}
				in.run(rule("old"))
				in.assertEqualsCleanRunWith(tagged("old"))
			})
		}
	}
}

// TestVerifyCutShortThenReverted: a run with Verify that writes again the
// chunks of damaged documents, two of them edited, under a new metadata
// rule, is killed after a few batches; the edits and the rule are then
// undone. The documents whose nodes were missing stay to be read again
// however unchanged their files look, and the next run leaves the store as
// a clean run writes it.
func TestVerifyCutShortThenReverted(t *testing.T) {
	for batches := int64(1); batches <= 3; batches++ {
		t.Run(fmt.Sprintf("killed after %d", batches), func(t *testing.T) {
			files := corpus(6)
			in := newIncr(t, files)
			two := func(o *Options) { o.BatchSize, o.EmbedConcurrency, o.SplitConcurrency = 2, 1, 1 }
			in.run(func(o *Options) { two(o); in.verifying(false)(o) })
			for _, d := range []string{"d00/f00.md", "d01/f01.md", "d02/f02.md"} {
				in.dropNodes(d, 3)
			}
			in.write("d01/f01.md", paragraphText("topic1", 30)+" An extra sentence.")
			in.write("d02/f02.md", paragraphText("other", 25))
			o := in.options()
			two(&o)
			in.verifying(true)(&o)
			tagged("new")(&o)
			in.runInterrupted(o, batches)
			in.write("d01/f01.md", files["d01/f01.md"])
			in.write("d02/f02.md", files["d02/f02.md"])
			in.run(func(o *Options) { two(o); in.verifying(false)(o) })
			in.assertEqualsCleanRun()
		})
	}
}

// errTimeout is the error of the stores below that apply a change and
// then report a failure, as a request that timed out after the service
// applied it.
var errTimeout = errors.New("test store: timed out")

// addsThenTimesOut is a memStore whose Add stores the nodes, then fails.
type addsThenTimesOut struct{ *memStore }

func (s addsThenTimesOut) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if _, err := s.memStore.Add(ctx, nodes); err != nil {
		return nil, err
	}
	return nil, errTimeout
}

// addsThenRejects is a memStore whose Add stores the nodes, then reports
// each of them refused.
type addsThenRejects struct{ *memStore }

func (s addsThenRejects) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if _, err := s.memStore.Add(ctx, nodes); err != nil {
		return nil, err
	}
	werr := &sink.WriteError{Failed: map[string]error{}}
	for _, n := range nodes {
		werr.Failed[n.ID] = errTimeout
	}
	return nil, werr
}

// TestAddAppliedThenReverted: the store takes a run's new chunks (of an
// edited document, of a new one) but reports a failure, which stops the
// run, or refuses every node, which fails their documents; with --full or
// not, under a new metadata rule. The edit, the new file and the rule are
// then undone: the next run leaves the store as a clean run writes it.
func TestAddAppliedThenReverted(t *testing.T) {
	for _, refused := range []bool{false, true} {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("refused %v, full %v", refused, full), func(t *testing.T) {
				v1 := paragraphText("v1", 30)
				in := newIncr(t, map[string]string{"a.md": v1, "b.md": "Bravo."})
				in.run(tagged("old"))
				in.write("a.md", v1+" A new sentence at the end. And another one here.")
				in.write("c.md", paragraphText("new", 10))
				o := in.options()
				tagged("new")(&o)
				o.Full = full
				o.Store = addsThenTimesOut{in.store}
				if refused {
					o.Store = addsThenRejects{in.store}
				}
				rep, err := Run(context.Background(), o)
				if refused && (err != nil || rep.FilesFailed == 0) {
					t.Fatalf("Run = %v, %+v; want documents failed", err, rep)
				}
				if !refused && !errors.Is(err, errTimeout) {
					t.Fatalf("Run = %v, want the store's error", err)
				}
				in.write("a.md", v1)
				if err := os.Remove(filepath.Join(in.root, "c.md")); err != nil {
					t.Fatal(err)
				}
				in.run(tagged("old"))
				in.assertEqualsCleanRunWith(tagged("old"))
			})
		}
	}
}

// deletesDocThenTimesOut is a memStore whose Delete deletes a document's
// nodes, then fails.
type deletesDocThenTimesOut struct{ *memStore }

func (s deletesDocThenTimesOut) Delete(ctx context.Context, refDocID string) error {
	if err := s.memStore.Delete(ctx, refDocID); err != nil {
		return err
	}
	return errTimeout
}

// TestEarlierNodesDeleteCutShortThenReverted: a store that cannot list a
// document's nodes has them deleted before the first new one is written (a
// --full run, or a document the manifest lost); the delete takes effect
// but reports a failure, which stops the run. The file is then put back:
// the next run writes it whole, not trusting a record of deleted nodes.
func TestEarlierNodesDeleteCutShortThenReverted(t *testing.T) {
	for _, full := range []bool{false, true} {
		for _, lost := range []bool{false, true} {
			if !full && !lost {
				continue // the manifest lists the nodes: nothing is deleted first
			}
			t.Run(fmt.Sprintf("full %v, manifest lost %v", full, lost), func(t *testing.T) {
				v1 := paragraphText("v1", 30)
				in := newIncr(t, map[string]string{"a.md": v1, "b.md": "Bravo."})
				in.run(nil)
				if lost {
					in.loseManifest()
				}
				in.write("a.md", v1+" More.")
				o := in.options()
				o.Full = full
				o.Store = deletesDocThenTimesOut{in.store}
				o.SplitConcurrency = 1 // a.md first
				if _, err := Run(context.Background(), o); !errors.Is(err, errTimeout) {
					t.Fatalf("Run = %v, want the store's error", err)
				}
				if n := len(in.texts("a.md")); n != 0 {
					t.Fatalf("%d nodes of a.md left: the delete did not take effect", n)
				}
				in.write("a.md", v1)
				in.run(nil)
				in.assertEqualsCleanRun()
			})
		}
	}
}

// TestRollbackCutShortThenReverted: a document fails (the store refuses
// its last chunk) in a run with a new metadata rule, --full or not, and
// the run dies during its rollback, after a delete. The file and the rule
// are then put back: whatever the store can tell, the next run leaves the
// store as a clean run writes it.
func TestRollbackCutShortThenReverted(t *testing.T) {
	for _, full := range []bool{false, true} {
		for _, kind := range storeKinds {
			t.Run(fmt.Sprintf("full %v, %s", full, kind.name), func(t *testing.T) {
				v1 := paragraphText("a", 30)
				in := newIncr(t, map[string]string{"a.md": v1})
				serial := func(o *Options) { o.BatchSize, o.EmbedConcurrency = 1, 1 }
				in.run(func(o *Options) { serial(o); tagged("old")(o); o.Store = kind.wrap(in.store) })
				in.write("a.md", v1+"The last sentence says REJECTME.")
				in.store.reject = "REJECTME"
				o := in.options()
				serial(&o)
				tagged("new")(&o)
				o.Full = full
				o.Store = killedAfterDelete{in.store}
				if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "killed") {
					t.Fatalf("Run = %v, want it killed during the rollback", err)
				}
				in.store.reject = ""
				in.write("a.md", v1)
				in.run(func(o *Options) { serial(o); tagged("old")(o); o.Store = kind.wrap(in.store) })
				in.assertEqualsCleanRunWith(tagged("old"))
			})
		}
	}
}

// TestRemovalCutShortThenRestoredInARound: a removal of a document whose
// file is gone (a watch round's) stops part-way; the file comes back as it
// was and a run over that file alone (the next watch round) writes its
// chunks again rather than taking its record for stored.
func TestRemovalCutShortThenRestoredInARound(t *testing.T) {
	body := paragraphText("alpha", 20)
	in := newIncr(t, map[string]string{"a.md": body, "b.md": "Bravo."})
	in.run(nil)
	if err := RemoveDocument(context.Background(), cutShortRemoval{in.store, false}, in.state, "a.md"); !errors.Is(err, errCutShort) {
		t.Fatalf("RemoveDocument = %v, want the store's error", err)
	}
	in.write("a.md", body)
	if rep := in.run(func(o *Options) { o.Source = namedFiles(o.Reader, "a.md") }); rep.FilesUpdated != 1 || rep.ChunksWritten == 0 {
		t.Errorf("round over a.md: %+v; want it updated, its deleted chunks written again", rep)
	}
	in.assertEqualsCleanRun()
}
