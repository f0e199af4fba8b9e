package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// lender lends the vectors it holds, by text key, for one model.
type lender struct {
	model string
	vecs  map[string][]float32
}

func (l lender) Vectors(model string, keys []string) map[string][]float32 {
	out := map[string][]float32{}
	for _, k := range keys {
		if v, ok := l.vecs[k]; ok && model == l.model {
			out[k] = v
		}
	}
	return out
}

// TestLentVectorsAreNotEmbedded runs with Options.Vectors lending the
// vector of one chunk text: that chunk is written with it, not embedded,
// and its tokens are not counted as embedded; the other is embedded.
func TestLentVectorsAreNotEmbedded(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha comes back.", "b.md": "Bravo is new."})
	lent := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	l := lender{model: state.Embedder{Provider: "fake", Dimensions: 8}.Key(), vecs: map[string][]float32{TextKey("Alpha comes back."): lent}}
	rep := in.run(func(o *Options) { o.Vectors = l })
	if rep.ChunksWritten != 2 || in.emb.requests != 1 {
		t.Errorf("%d chunks written, %d embedding requests; want 2 written, 1 request (for b.md)", rep.ChunksWritten, in.emb.requests)
	}
	var a, b int
	for _, n := range in.store.nodes {
		switch n.RefDocID {
		case "a.md":
			a++
			if len(n.Embedding) != 8 || n.Embedding[0] != 1 || n.Embedding[7] != 8 {
				t.Errorf("a.md is written with %v, want the lent vector", n.Embedding)
			}
		case "b.md":
			b++
		}
	}
	if a != 1 || b != 1 {
		t.Errorf("%d nodes of a.md, %d of b.md; want one each", a, b)
	}
	// Only b.md's tokens were embedded: a second run over b.md alone
	// with nothing lent embeds as many.
	only := newIncr(t, map[string]string{"b.md": "Bravo is new."})
	if want := only.run(nil).TokensEmbedded; rep.TokensEmbedded != want {
		t.Errorf("tokens embedded %d, want %d (b.md's only)", rep.TokensEmbedded, want)
	}
}

// vectorMemStore is a memStore that reads vectors back (VectorReader).
// NodeVectors returns the text of retext instead of a node's, as a store
// written behind the manifest's back holds another text under the id.
type vectorMemStore struct {
	*memStore
	retext map[string]string
}

func (s *vectorMemStore) NodeVectors(ctx context.Context, ids []string) ([]sink.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sink.Node
	for _, id := range ids {
		if n, ok := s.nodes[id]; ok {
			if t, ok := s.retext[id]; ok {
				n.Text = t
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// nonLending is a vectorMemStore that says it lends no vector
// (LendsVectors), as a Cloud AI Search index whose vector field is not
// retrievable.
type nonLending struct{ *vectorMemStore }

func (nonLending) LendsVectors() bool { return false }

// TestCopiedVectors copies a document and renames another in a folder
// whose store reads vectors back: the chunks of the same text as a
// committed node are written with its vector (marked in the store, so
// that an embedding would show), not embedded, and counted as copied; a
// node whose text the store no longer holds lends nothing.
func TestCopiedVectors(t *testing.T) {
	const alpha, bravo = "Alpha is written once and copied.", "Bravo is renamed."
	in := newIncr(t, map[string]string{"a.md": alpha, "b.md": bravo})
	vs := &vectorMemStore{memStore: in.store}
	withStore := func(o *Options) { o.Store = vs }
	if rep := in.run(withStore); rep.ChunksCopied != 0 || rep.ChunksWritten != 2 {
		t.Fatalf("first run: %d chunks written, %d copied; want 2, 0", rep.ChunksWritten, rep.ChunksCopied)
	}
	mark := []float32{9, 8, 7, 6, 5, 4, 3, 2}
	nodeOf := func(doc string) sink.Node {
		t.Helper()
		for _, n := range in.store.nodes {
			if n.RefDocID == doc {
				return n
			}
		}
		t.Fatalf("no node of %s", doc)
		return sink.Node{}
	}
	for _, doc := range []string{"a.md", "b.md"} {
		n := nodeOf(doc)
		n.Embedding = mark
		in.store.nodes[n.ID] = n
	}

	in.write("copy/a.md", alpha)
	if err := os.Rename(filepath.Join(in.root, "b.md"), filepath.Join(in.root, "c.md")); err != nil {
		t.Fatal(err)
	}
	in.write("d.md", "Delta is new.")
	// A dry run plans them, from the manifest, if the store (or, without
	// one, PlanCopies) says it reads vectors back.
	for _, tt := range []struct {
		name          string
		mod           func(*Options)
		copied, plans int
	}{
		{"with the store", withStore, 2, 1},
		{"without a store, PlanCopies", func(o *Options) { o.Store, o.PlanCopies = nil, true }, 2, 1},
		{"without a store", func(o *Options) { o.Store = nil }, 0, 3},
		{"with a store that reads no vectors", nil, 0, 3},
		{"with a store that lends no vectors", func(o *Options) { o.Store = nonLending{vs} }, 0, 3},
	} {
		rep := in.run(func(o *Options) {
			if tt.mod != nil {
				tt.mod(o)
			}
			o.DryRun = true
		})
		if rep.ChunksCopied != tt.copied || rep.ChunksPlanned != tt.plans {
			t.Errorf("dry run %s: %d chunks copied, %d planned; want %d, %d", tt.name, rep.ChunksCopied, rep.ChunksPlanned, tt.copied, tt.plans)
		}
	}
	before := in.emb.requests
	rep := in.run(withStore)
	if rep.ChunksWritten != 3 || rep.ChunksCopied != 2 || rep.FilesDeleted != 1 {
		t.Errorf("%d chunks written, %d copied, %d files deleted; want 3, 2 (copy/a.md, c.md), 1 (b.md)", rep.ChunksWritten, rep.ChunksCopied, rep.FilesDeleted)
	}
	if got := in.emb.requests - before; got != 1 {
		t.Errorf("%d embedding requests, want 1 (d.md)", got)
	}
	for _, doc := range []string{"copy/a.md", "c.md"} {
		if got := nodeOf(doc).Embedding; !slices.Equal(got, mark) {
			t.Errorf("%s is written with %v, want the vector of the node of the same text, %v", doc, got, mark)
		}
	}
	if got := nodeOf("d.md").Embedding; slices.Equal(got, mark) {
		t.Errorf("d.md, of a new text, is written with the marked vector")
	}
	// Every chunk's text was recorded with a key, so a clean run writes the same.
	in.assertEqualsCleanRun()

	// The store holds another text under the node of alpha: the copy of
	// it is embedded.
	vs.retext = map[string]string{nodeOf("a.md").ID: "another text", nodeOf("copy/a.md").ID: "another text"}
	in.write("again/a.md", alpha)
	before = in.emb.requests
	rep = in.run(withStore)
	if rep.ChunksCopied != 0 || in.emb.requests-before != 1 {
		t.Errorf("with the node's text changed in the store: %d copied, %d requests; want 0, 1", rep.ChunksCopied, in.emb.requests-before)
	}
	if got := nodeOf("again/a.md").Embedding; slices.Equal(got, mark) {
		t.Errorf("again/a.md is written with the vector of a node whose text the store no longer holds")
	}

	// A Full run embeds every chunk again, copies none.
	vs.retext = nil
	before = in.emb.requests
	rep = in.run(func(o *Options) { withStore(o); o.Full = true })
	if rep.ChunksCopied != 0 || rep.ChunksWritten != 5 || in.emb.requests == before {
		t.Errorf("Full run: %d chunks written, %d copied, %d requests; want 5, 0, some", rep.ChunksWritten, rep.ChunksCopied, in.emb.requests-before)
	}
	for _, doc := range []string{"copy/a.md", "c.md"} {
		if got := nodeOf(doc).Embedding; slices.Equal(got, mark) {
			t.Errorf("after a Full run, %s still holds the vector of the node it was copied from", doc)
		}
	}
}

// TestDryRunPlansCopiesOfLargeDocuments: a dry run looks the texts of a
// document's chunks up in the manifest by batches; across several batches,
// some of texts a committed node holds and some new, its plan is what the
// run then does: as many chunks copied, the others embedded, token for
// token.
func TestDryRunPlansCopiesOfLargeDocuments(t *testing.T) {
	body := paragraphText("huge", 3000)
	in := newIncr(t, map[string]string{"huge.md": body})
	vs := &vectorMemStore{memStore: in.store}
	withStore := func(o *Options) { o.Store = vs }
	in.run(withStore)
	// The copy's chunks are the original's up to where the new text starts.
	in.write("copy/huge.md", body+paragraphText("tail", 800))
	plan := in.run(func(o *Options) { withStore(o); o.DryRun = true })
	if plan.ChunksCopied <= 2*planBatch || plan.ChunksPlanned == 0 {
		t.Fatalf("dry run: %d chunks copied, %d planned; the test needs over %d copied and some planned", plan.ChunksCopied, plan.ChunksPlanned, 2*planBatch)
	}
	before := in.emb.requests
	rep := in.run(withStore)
	if rep.ChunksCopied != plan.ChunksCopied || rep.ChunksWritten-rep.ChunksCopied != plan.ChunksPlanned || rep.TokensEmbedded != plan.TokensPlanned {
		t.Errorf("dry run planned %d copied, %d embedded (%d tokens); the run copied %d, embedded %d (%d tokens)",
			plan.ChunksCopied, plan.ChunksPlanned, plan.TokensPlanned, rep.ChunksCopied, rep.ChunksWritten-rep.ChunksCopied, rep.TokensEmbedded)
	}
	if in.emb.requests == before {
		t.Error("the run embedded nothing; the tail is new text")
	}
}
