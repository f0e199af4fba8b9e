package watch

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
)

// paidEmbedder embeds as the hash embedder does but is no local one (it
// has no Local method), as a provider that charges by the token: a Loop
// keeps the vectors of the documents it removes for it. It counts the
// texts it is asked to embed, the barrier files of env.wait aside.
type paidEmbedder struct {
	e     embedder.Embedder
	mu    sync.Mutex
	texts int
}

func (p *paidEmbedder) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	p.mu.Lock()
	for _, x := range in {
		if !strings.HasPrefix(x.Text, "barrier ") {
			p.texts++
		}
	}
	p.mu.Unlock()
	return p.e.Embed(ctx, in)
}

func (p *paidEmbedder) Dimensions() int { return p.e.Dimensions() }

func (p *paidEmbedder) embedded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.texts
}

// words returns n distinct words in sentences: a document of several chunks.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix + strconv.Itoa(i))
		if i%10 == 9 {
			b.WriteString(".\n")
		} else {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// TestRemovedDocumentsComeBack moves a document out of the folder and back
// once its removal is done, renames a folder and copies it: the documents
// that come back, under their own ids or others, are written with the
// vectors of those removed, and the copies with those of the documents
// copied, not embedded again by a provider that charges for it.
func TestRemovedDocumentsComeBack(t *testing.T) {
	e := newEnv(t)
	e.writeFile("doc.md", words("alpha", 300))
	e.writeFile("guide/a.md", words("bravo", 200))
	e.writeFile("guide/b.md", words("charlie", 200))
	paid := &paidEmbedder{}
	e.start(func(o *Options) {
		paid.e = o.Pipeline.Embedder
		o.Pipeline.Embedder = paid
	})
	e.waitReady()
	all := paid.embedded()
	if n := len(nodesOf(t, e.store)); n < 10 || all != n {
		t.Fatalf("%d chunks stored, %d embedded; want several, each once", n, all)
	}

	from := e.log.len()
	if err := os.Rename(e.path("doc.md"), e.path("@out/doc.md")); err != nil {
		t.Fatal(err)
	}
	e.log.await(t, from, "removing doc.md", func(r Round) bool { return slices.Contains(r.Removed, "doc.md") })
	if err := os.Rename(e.path("@out/doc.md"), e.path("doc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(e.path("guide"), e.path("manual")); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"doc.md", "manual/a.md", "manual/b.md"}) {
		t.Fatalf("store holds %q", got)
	}
	if n := paid.embedded() - all; n != 0 {
		t.Errorf("%d chunks embedded again; want none: their text was in the store", n)
	}

	// A copy of a folder, whose documents are still in the store, is
	// written with their vectors too (the pipeline's copies).
	if err := os.CopyFS(e.path("copies"), os.DirFS(e.path("manual"))); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, []string{"copies/a.md", "copies/b.md", "doc.md", "manual/a.md", "manual/b.md"}) {
		t.Fatalf("store holds %q", got)
	}
	if n := paid.embedded() - all; n != 0 {
		t.Errorf("%d chunks embedded for a copied folder; want none: their text was in the store", n)
	}
	e.checkClean()
}

// TestParkedIsBounded checks that the vectors kept are the newest max.
func TestParkedIsBounded(t *testing.T) {
	p := &parked{model: "m", max: 3, vecs: map[string][]float32{}}
	for i := range 10 {
		p.put(strconv.Itoa(i), []float32{float32(i)})
	}
	got := p.Vectors("m", []string{"0", "6", "7", "8", "9"})
	if len(got) != 3 || got["7"] == nil || got["9"] == nil {
		t.Errorf("held %v, want the last three", got)
	}
	if got := p.Vectors("other", []string{"9"}); got != nil {
		t.Errorf("another model's vectors: %v, want none", got)
	}
	if len(p.order) > 2*p.max+16 {
		t.Errorf("%d keys in order, want at most %d", len(p.order), 2*p.max+16)
	}
}

var _ pipeline.VectorSource = (*parked)(nil)
