package pipeline

import (
	"context"
	"errors"
	"testing"

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
