package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
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
