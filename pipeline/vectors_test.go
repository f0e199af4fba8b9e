package pipeline

import (
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
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
