package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

func randomVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestQueryVectorMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := rand.New(rand.NewPCG(1, 2))
	const n, dims = 300, 16
	nodes := make([]sink.Node, n)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n%03d", i), "d", "text", randomVector(r, dims)...)
	}
	nodes[7].Embedding = make([]float32, dims) // a zero vector scores 0
	mustAdd(t, s, nodes...)

	for _, k := range []int{0, 1, 5, 50, n, n + 10} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			q := randomVector(r, dims)
			got, err := s.Query(ctx, sink.Query{Embedding: q, TopK: k})
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(nodes, q, sink.Query{TopK: k}.K())
			if len(got) != len(want) {
				t.Fatalf("got %d results, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Fatalf("result %d = %s (%.12f), want %s (%.12f)", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
				}
			}
		})
	}
}

// bruteForce ranks nodes by cosine similarity in float64, ties by position.
func bruteForce(nodes []sink.Node, q []float32, k int) []sink.ScoredNode {
	out := make([]sink.ScoredNode, len(nodes))
	for i, n := range nodes {
		var dot, a, b float64
		for j := range q {
			dot += float64(q[j]) * float64(n.Embedding[j])
			a += float64(q[j]) * float64(q[j])
			b += float64(n.Embedding[j]) * float64(n.Embedding[j])
		}
		score := 0.0
		if a > 0 && b > 0 {
			score = dot / (math.Sqrt(a) * math.Sqrt(b))
		}
		out[i] = sink.ScoredNode{Node: n, Score: score}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out[:min(k, len(out))]
}

func TestQueryVectorEmptyStore(t *testing.T) {
	s := openTest(t)
	got, err := s.Query(context.Background(), sink.Query{Embedding: []float32{1, 2}})
	if err != nil || len(got) != 0 {
		t.Fatalf("query on an empty store = %v, %v; want no results", got, err)
	}
}

var corpus = []sink.Node{
	node("rivers", "geo", "Rivers carry sediment from the mountains down to the sea.", 1, 0),
	node("tides", "geo", "The tides of the sea follow the moon; the sea rises twice a day.", 0.9, 0.1),
	node("sluice", "eng", "A sluice gate controls the flow of water in a canal lock.", 0.5, 0.5),
	node("bread", "food", "Bread rises when yeast ferments the sugars in the dough.", 0, 1),
	node("punct", "misc", `Odd text: "quotes", (parens), AND/OR/NOT, col:umn, star* ^caret -minus +plus {braces}`, 0.2, 0.8),
}

func TestQuerySparseFindsPhraseChunkFirst(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, corpus...)
	tests := []struct {
		query string
		first string
	}{
		{"sluice gate", "sluice"},
		{"yeast ferments dough", "bread"},
		{"tides moon", "tides"},
		{"sediment mountains", "rivers"},
		{"SLUICE Gate!", "sluice"}, // case and punctuation do not matter
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: tt.query, TopK: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].ID != tt.first {
				t.Fatalf("sparse %q = %v, want %s first", tt.query, scoredIDs(got), tt.first)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Errorf("scores not descending: %v", got)
				}
			}
			if got[0].Score <= 0 {
				t.Errorf("best BM25 score %v, want > 0 (higher is better)", got[0].Score)
			}
		})
	}
}

func TestQuerySparsePunctuation(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, corpus...)
	tests := []struct {
		query string
		want  []string // ids expected among the results; nil means any, possibly none
	}{
		{`"quotes"`, []string{"punct"}},
		{`"unterminated`, nil},
		{`(parens`, []string{"punct"}},
		{`AND`, []string{"punct"}},
		{`OR NOT`, []string{"punct"}},
		{`NEAR(sea moon)`, []string{"tides"}},
		{`col:umn`, []string{"punct"}},
		{`star*`, []string{"punct"}},
		{`^caret`, []string{"punct"}},
		{`-minus +plus`, []string{"punct"}},
		{`{braces}`, []string{"punct"}},
		{`sea's "moon" -- tides?!`, []string{"tides"}},
		{`"" '' ;;; ??? !!!`, nil},
		{`*`, nil},
		{`a"b""c`, nil},
		{"tab\tnew\nline\x00nul", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: tt.query, TopK: 5})
			if err != nil {
				t.Fatalf("sparse %q failed: %v", tt.query, err)
			}
			for _, id := range tt.want {
				if !slices.Contains(scoredIDs(got), id) {
					t.Errorf("sparse %q = %v, want %s among them", tt.query, scoredIDs(got), id)
				}
			}
			// Hybrid uses the same text path.
			if _, err := s.Query(ctx, sink.Query{Mode: sink.Hybrid, QueryStr: tt.query, Embedding: []float32{1, 0}}); err != nil {
				t.Errorf("hybrid %q failed: %v", tt.query, err)
			}
		})
	}
}

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello world", `"hello" OR "world"`},
		{`"quoted" AND (x)`, `"quoted" OR "AND" OR "x"`},
		{"col:val star*", `"col" OR "val" OR "star"`},
		{"Dup dup DUP other", `"Dup" OR "other"`},
		{"café naïve 42", `"café" OR "naïve" OR "42"`},
		{"!!! ???", ``},
		{"", ``},
	}
	for _, tt := range tests {
		if got := ftsQuery(tt.in); got != tt.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestQueryHybridRRF checks reciprocal rank fusion on a hand-computed case.
//
// Query vector (1,0): cosine ranks a (1.0), b (0.8), c (0.6), d (0.0).
// Text "zebra": BM25 ranks d (three zebras, short) before c (one, long);
// a and b do not match. RRF with k=60:
//
//	d: 1/64 + 1/61 = 0.0320184...
//	c: 1/63 + 1/62 = 0.0320020...
//	a: 1/61        = 0.0163934...
//	b: 1/62        = 0.0161290...
func TestQueryHybridRRF(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s,
		node("a", "doc", "apple", 1, 0),
		node("b", "doc", "banana", 0.8, 0.6),
		node("c", "doc", "zebra and other animals walked along the river bank today", 0.6, 0.8),
		node("d", "doc", "zebra zebra zebra", 0, 1),
	)
	got, err := s.Query(ctx, sink.Query{Mode: sink.Hybrid, QueryStr: "zebra", Embedding: []float32{1, 0}, TopK: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    string
		score float64
	}{
		{"d", 1.0/64 + 1.0/61},
		{"c", 1.0/63 + 1.0/62},
		{"a", 1.0 / 61},
		{"b", 1.0 / 62},
	}
	if len(got) != len(want) {
		t.Fatalf("hybrid = %v, want %d results", scoredIDs(got), len(want))
	}
	for i, w := range want {
		if got[i].ID != w.id || math.Abs(got[i].Score-w.score) > 1e-12 {
			t.Errorf("hybrid result %d = %s (%.10f), want %s (%.10f)", i, got[i].ID, got[i].Score, w.id, w.score)
		}
	}

	top2, err := s.Query(ctx, sink.Query{Mode: sink.Hybrid, QueryStr: "zebra", Embedding: []float32{1, 0}, TopK: 2})
	if err != nil || !slices.Equal(scoredIDs(top2), []string{"d", "c"}) {
		t.Errorf("hybrid top 2 = %v, %v; want [d c]", scoredIDs(top2), err)
	}
}

// TestQueryMatchAll: the text "*" matches every node, as in Cloud AI
// Search's simple query syntax (and its test double): sparse returns the
// nodes the filters keep, each scored 1, in the order they were stored;
// hybrid ranks by the vector alone.
func TestQueryMatchAll(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	nodes := []sink.Node{
		node("a", "doc", "apple", 1, 0),
		node("b", "doc", "banana", 0.8, 0.6),
		node("c", "doc", "cherry", 0, 1),
		node("d", "doc", "date", 0.6, 0.8),
	}
	for i := range nodes {
		nodes[i].Metadata = map[string]any{"even": i%2 == 1}
	}
	mustAdd(t, s, nodes...)
	even := &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "even", Value: true, Operator: sink.EQ}}}
	tests := []struct {
		name  string
		q     sink.Query
		want  []string
		score func(rank int) float64
	}{
		{"sparse", sink.Query{Mode: sink.Sparse, QueryStr: "*", TopK: 10}, []string{"a", "b", "c", "d"}, func(int) float64 { return 1 }},
		{"sparse, top 2, spaces", sink.Query{Mode: sink.Sparse, QueryStr: " * ", TopK: 2}, []string{"a", "b"}, func(int) float64 { return 1 }},
		{"sparse, filtered", sink.Query{Mode: sink.Sparse, QueryStr: "*", TopK: 10, Filters: even}, []string{"b", "d"}, func(int) float64 { return 1 }},
		{"hybrid", sink.Query{Mode: sink.Hybrid, QueryStr: "*", Embedding: []float32{0, 1}, TopK: 3}, []string{"c", "d", "b"},
			func(rank int) float64 { return 1 / float64(61+rank) }},
		{"hybrid, filtered", sink.Query{Mode: sink.Hybrid, QueryStr: "*", Embedding: []float32{1, 0}, TopK: 3, Filters: even}, []string{"b", "d"},
			func(rank int) float64 { return 1 / float64(61+rank) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Query(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(scoredIDs(got), tt.want) {
				t.Fatalf("%q = %v, want %v", tt.q.QueryStr, scoredIDs(got), tt.want)
			}
			for i, n := range got {
				if want := tt.score(i); math.Abs(n.Score-want) > 1e-12 {
					t.Errorf("score of %s = %v, want %v", n.ID, n.Score, want)
				}
			}
		})
	}
	// "*" among other words is no wildcard: it is dropped like any
	// punctuation.
	got, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "* cherry", TopK: 10})
	if err != nil || !slices.Equal(scoredIDs(got), []string{"c"}) {
		t.Errorf(`"* cherry" = %v, %v; want [c]`, scoredIDs(got), err)
	}
}

func TestQueryErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, corpus...)
	emb := []float32{1, 0}
	tests := []struct {
		name   string
		q      sink.Query
		target error
		as     any
	}{
		{"semantic hybrid", sink.Query{Mode: sink.SemanticHybrid, QueryStr: "sea", Embedding: emb}, sink.ErrUnsupported, new(*sink.UnsupportedError)},
		{"hybrid without queryStr", sink.Query{Mode: sink.Hybrid, Embedding: emb}, sink.ErrInvalidQuery, new(*sink.QueryError)},
		{"semantic hybrid without queryStr", sink.Query{Mode: sink.SemanticHybrid, Embedding: emb}, sink.ErrInvalidQuery, new(*sink.QueryError)},
		{"sparse without queryStr", sink.Query{Mode: sink.Sparse}, sink.ErrInvalidQuery, new(*sink.QueryError)},
		{"vector without embedding", sink.Query{QueryStr: "sea"}, sink.ErrInvalidQuery, new(*sink.QueryError)},
		{"unknown mode", sink.Query{Mode: "fuzzy", Embedding: emb}, sink.ErrUnsupported, new(*sink.UnsupportedError)},
		{"wrong dimensions", sink.Query{Embedding: []float32{1, 2, 3}}, sink.ErrDimensionMismatch, new(*sink.DimensionError)},
		{"bad filter", sink.Query{Embedding: emb, Filters: &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "k", Operator: ">", Value: 1}}}}, sink.ErrInvalidFilter, new(*sink.FilterError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Query(ctx, tt.q)
			if !errors.Is(err, tt.target) || !errors.As(err, tt.as) {
				t.Fatalf("Query = %v, %v; want %v as %T", got, err, tt.target, tt.as)
			}
		})
	}
	_, err := s.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, QueryStr: "sea", Embedding: emb})
	for _, word := range []string{"semantic ranker", "hybrid", "cloudsearch"} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("semantic hybrid error %q does not mention %q", err, word)
		}
	}
}

func TestQueryCanceled(t *testing.T) {
	s := openTest(t)
	mustAdd(t, s, corpus...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, mode := range []sink.QueryMode{sink.Vector, sink.Sparse, sink.Hybrid} {
		_, err := s.Query(ctx, sink.Query{Mode: mode, QueryStr: "sea", Embedding: []float32{1, 0}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s query with a canceled context = %v, want context.Canceled", mode, err)
		}
	}
	if _, err := s.GetNodes(ctx, nil, nil, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("GetNodes with a canceled context = %v, want context.Canceled", err)
	}
}

func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range []int{0, 1, 3, 10, 1 << 40} {
		top := newTopK(k)
		var all []hit
		for i := range 200 {
			h := hit{seq: int64(i), score: float64(r.IntN(20))} // many ties
			top.push(h)
			all = append(all, h)
		}
		sortHits(all)
		want := all[:min(k, len(all))]
		if got := top.sorted(); !slices.Equal(got, want) {
			t.Errorf("k=%d: topK = %v, want %v", k, got, want)
		}
	}
}
