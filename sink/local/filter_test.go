package local

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// filterCorpus holds metadata of every supported shape. Every text holds
// "common" so that sparse queries see all nodes.
var filterCorpus = []sink.Node{
	{ID: "f1", RefDocID: "d1", Text: "common one", Embedding: []float32{1, 0}, Metadata: map[string]any{"lang": "en", "year": 2023, "tags": []string{"go", "db"}, "draft": false, `we"ird`: "x"}},
	{ID: "f2", RefDocID: "d1", Text: "common two", Embedding: []float32{0.9, 0.1}, Metadata: map[string]any{"lang": "de", "year": 2024.0, "tags": []string{"rust"}, "draft": true}},
	{ID: "f3", RefDocID: "d2", Text: "common three", Embedding: []float32{0.5, 0.5}, Metadata: map[string]any{"lang": "en", "year": "2024", "tags": []string{}, "score": []float64{1.5, 2}}},
	{ID: "f4", RefDocID: "d3", Text: "common four", Embedding: []float32{0, 1}, Metadata: map[string]any{"lang": "fr", "a.b": "dotted", "tags": []any{"go", 7}}},
	{ID: "f5", RefDocID: "d3", Text: "common five", Embedding: []float32{0.2, 0.8}},
}

func eq(k string, v any) sink.MetadataFilter {
	return sink.MetadataFilter{Key: k, Value: v, Operator: sink.EQ}
}
func in(k string, v any) sink.MetadataFilter {
	return sink.MetadataFilter{Key: k, Value: v, Operator: sink.IN}
}

func TestFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, filterCorpus...)
	tests := []struct {
		name string
		f    *sink.MetadataFilters
		want []string
	}{
		{"nil", nil, []string{"f1", "f2", "f3", "f4", "f5"}},
		{"EQ string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("lang", "en")}}, []string{"f1", "f3"}},
		{"EQ int matches stored float and numeric string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2024)}}, []string{"f2", "f3"}},
		{"EQ float", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2023.0)}}, []string{"f1"}},
		{"EQ numeric string matches number", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "2023")}}, []string{"f1"}},
		{"EQ numeric string matches both", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "2024.0")}}, []string{"f2"}},
		{"EQ non-numeric string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "twenty")}}, nil},
		{"EQ string true matches bool", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", "true")}}, []string{"f2"}},
		{"EQ string matches string only", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("lang", "EN")}}, nil},
		{"EQ bool", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", true)}}, []string{"f2"}},
		{"EQ bool false", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", false)}}, []string{"f1"}},
		{"EQ on collection contains", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("tags", "go")}}, []string{"f1", "f4"}},
		{"EQ number in mixed collection", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("tags", 7)}}, []string{"f4"}},
		{"EQ number in number list", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("score", 2)}}, []string{"f3"}},
		{"IN strings", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("lang", []string{"de", "fr"})}}, []string{"f2", "f4"}},
		{"IN numbers", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("year", []any{2023, 1999})}}, []string{"f1"}},
		{"IN on collection shares element", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("tags", []string{"rust", "db"})}}, []string{"f1", "f2"}},
		{"IN empty list", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("lang", []string{})}}, nil},
		{"missing key", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("nope", "x")}}, nil},
		{"dotted key is literal", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("a.b", "dotted")}}, []string{"f4"}},
		{"key with quote", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq(`we"ird`, "x")}}, []string{"f1"}},
		{"key with quote OR", &sink.MetadataFilters{Condition: sink.Or, Filters: []sink.MetadataFilter{eq(`we"ird`, "x"), eq("lang", "fr")}}, []string{"f1", "f4"}},
		{"AND", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("lang", "en"), eq("tags", "go")}}, []string{"f1"}},
		{"explicit AND none", &sink.MetadataFilters{Condition: sink.And, Filters: []sink.MetadataFilter{eq("lang", "de"), eq("tags", "go")}}, nil},
		{"OR", &sink.MetadataFilters{Condition: sink.Or, Filters: []sink.MetadataFilter{eq("lang", "de"), in("tags", []string{"go"})}}, []string{"f1", "f2", "f4"}},
		{"empty filter list", &sink.MetadataFilters{}, []string{"f1", "f2", "f3", "f4", "f5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The expectation must agree with sink's reference semantics.
			var ref []string
			for _, n := range filterCorpus {
				if tt.f.Match(roundTrip(t, n.Metadata)) {
					ref = append(ref, n.ID)
				}
			}
			if !slices.Equal(ref, tt.want) {
				t.Fatalf("test table disagrees with MetadataFilters.Match: Match gives %v, table says %v", ref, tt.want)
			}

			got, err := s.GetNodes(ctx, nil, tt.f, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertSameSet(t, "GetNodes", nodeIDs(got), tt.want)
			for _, n := range got {
				if !tt.f.Match(n.Metadata) {
					t.Errorf("GetNodes returned %s whose metadata %v does not match", n.ID, n.Metadata)
				}
			}

			for _, q := range []sink.Query{
				{Mode: sink.Vector, Embedding: []float32{1, 0}},
				{Mode: sink.Sparse, QueryStr: "common"},
				{Mode: sink.Hybrid, QueryStr: "common", Embedding: []float32{1, 0}},
			} {
				q.TopK, q.Filters = 10, tt.f
				res, err := s.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				assertSameSet(t, string(q.Mode), scoredIDs(res), tt.want)
			}
		})
	}
}

// roundTrip returns metadata as the store returns it.
func roundTrip(t *testing.T, md map[string]any) map[string]any {
	t.Helper()
	s, err := encodeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeMetadata(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s returned %v, want %v", what, got, want)
	}
}

// TestFilteredTopKReturnsK checks that filtering happens before the top-k
// cut: the matching nodes are the farthest from the query, yet all come back.
func TestFilteredTopKReturnsK(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	var nodes []sink.Node
	for i := range 200 {
		nodes = append(nodes, sink.Node{ID: fmt.Sprintf("near%03d", i), Text: "walrus near", Embedding: []float32{1, float32(i) / 1000}, Metadata: map[string]any{"keep": "no"}})
	}
	for i := range 3 {
		nodes = append(nodes, sink.Node{ID: fmt.Sprintf("far%d", i), Text: "far away walrus, rarely seen", Embedding: []float32{-1, float32(i)}, Metadata: map[string]any{"keep": "yes"}})
	}
	mustAdd(t, s, nodes...)
	f := &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("keep", "yes")}}
	for _, mode := range []sink.QueryMode{sink.Vector, sink.Sparse, sink.Hybrid} {
		res, err := s.Query(ctx, sink.Query{Mode: mode, Embedding: []float32{1, 0}, QueryStr: "walrus near", TopK: 3, Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		assertSameSet(t, string(mode), scoredIDs(res), []string{"far0", "far1", "far2"})
	}
	got, err := s.GetNodes(ctx, nil, f, 2)
	if err != nil || len(got) != 2 {
		t.Errorf("GetNodes with filter and limit 2 = %v, %v; want 2 nodes", nodeIDs(got), err)
	}
}

func TestGetNodesCombinesIDsFiltersLimit(t *testing.T) {
	s := openTest(t)
	mustAdd(t, s, filterCorpus...)
	goTag := &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("tags", "go")}}
	tests := []struct {
		name  string
		ids   []string
		limit int
		want  []string
	}{
		{"ids and filter", []string{"f1", "f2", "f4"}, 0, []string{"f1", "f4"}},
		{"ids, filter and limit", []string{"f1", "f2", "f4"}, 1, []string{"f1"}},
		{"filter excludes all ids", []string{"f2", "f3"}, 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GetNodes(context.Background(), tt.ids, goTag, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(nodeIDs(got), tt.want) {
				t.Errorf("GetNodes = %v, want %v", nodeIDs(got), tt.want)
			}
		})
	}
}
