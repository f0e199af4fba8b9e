package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/internal/testenv"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashGolden(t *testing.T) {
	texts := []string{
		"The quick brown fox jumps over the lazy dog.",
		"the the the the",
		"Straße, ÉCOLE; 東京 2026 naïve",
		"",
		"... --- !!!",
	}
	h := embedder.NewHash(16)
	var b strings.Builder
	for _, text := range texts {
		fmt.Fprintf(&b, "%q\n", text)
		for _, x := range h.Vector(text) {
			fmt.Fprintf(&b, " %.6f", x)
		}
		b.WriteString("\n")
	}
	// The vectors must be stable across runs and platforms.
	testenv.Golden(t, filepath.Join("testdata", "hash.golden"), []byte(b.String()))
}

func TestHashProperties(t *testing.T) {
	h := embedder.NewHash(0)
	if h.Dimensions() != embedder.DefaultDimensions {
		t.Fatalf("NewHash(0).Dimensions() = %d, want %d", h.Dimensions(), embedder.DefaultDimensions)
	}
	tests := []struct {
		name   string
		a, b   string
		relate func(sim float64) bool
		want   string
	}{
		{"case and punctuation are ignored", "Hello, World!", "hello world", func(s float64) bool { return s > 0.9999 }, "identical"},
		{"unicode case folds", "ÉCOLE Straße", "école straße", func(s float64) bool { return s > 0.9999 }, "identical"},
		{"word order matters through bigrams", "dog bites man", "man bites dog", func(s float64) bool { return s < 0.9999 && s > 0.3 }, "similar, not identical"},
		{"shared words are similar", "vector index of documents", "documents in a vector index", func(s float64) bool { return s > 0.3 }, "similar"},
		{"disjoint words are near orthogonal", "apples oranges bananas", "kernel scheduler interrupt", func(s float64) bool { return math.Abs(s) < 0.3 }, "near 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := h.Vector(tt.a), h.Vector(tt.b)
			if n := norm(a); math.Abs(n-1) > 1e-5 {
				t.Fatalf("norm %v, want 1", n)
			}
			if s := dot(a, b); !tt.relate(s) {
				t.Fatalf("cosine(%q, %q) = %v, want %s", tt.a, tt.b, s, tt.want)
			}
		})
	}
}

func TestHashEmptyIsZero(t *testing.T) {
	h := embedder.NewHash(32)
	for _, text := range []string{"", "   ", "?!.,;"} {
		v := h.Vector(text)
		if len(v) != 32 || norm(v) != 0 {
			t.Fatalf("Vector(%q): len %d norm %v, want 32 zeros", text, len(v), norm(v))
		}
	}
}

func TestHashSublinear(t *testing.T) {
	h := embedder.NewHash(1 << 14)
	// One word repeated: a single feature, normalised, whatever the count.
	one, many := h.Vector("echo"), h.Vector(strings.Repeat("echo ", 1000))
	if s := dot(one, many); s < 0.5 {
		t.Fatalf("cosine(echo, echo*1000) = %v; the bigram echo-echo should not dominate with sublinear tf", s)
	}
}

func TestHashEmbed(t *testing.T) {
	h := embedder.NewHash(64)
	in := embedder.Texts("alpha beta", "", "gamma")
	vecs, err := h.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 {
		t.Fatalf("%d vectors, want 3", len(vecs))
	}
	for i, v := range vecs {
		want := h.Vector(in[i].Text)
		if len(v) != 64 || dot(v, want) != dot(want, want) {
			t.Fatalf("vector %d differs from Vector", i)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestHashNoPerTokenAllocs(t *testing.T) {
	h := embedder.NewHash(1536)
	text := strings.Repeat("Sluice streams documents through a splitter, naïve café 東京. ", 200)
	allocs := testing.AllocsPerRun(20, func() { h.Vector(text) })
	if allocs > 1 {
		t.Fatalf("Vector allocates %v times per call, want 1 (the vector)", allocs)
	}
}
