package local

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// TestDecodedFilters applies filters decoded from JSON, spelt as the
// store's spec and LlamaIndex write them, to the local store: they must
// select the same nodes as the filters built from the constants.
func TestDecodedFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, filterCorpus...)
	tests := []struct {
		name, json string
		want       []string
	}{
		{"EQ name", `{"filters":[{"key":"lang","value":"en","operator":"EQ"}]}`, []string{"f1", "f3"}},
		{"eq lowercase name", `{"filters":[{"key":"lang","value":"en","operator":"eq"}]}`, []string{"f1", "f3"}},
		{"== value", `{"filters":[{"key":"lang","value":"en","operator":"=="}]}`, []string{"f1", "f3"}},
		{"missing operator is EQ", `{"filters":[{"key":"lang","value":"en"}]}`, []string{"f1", "f3"}},
		{"EQ number", `{"filters":[{"key":"year","value":2023,"operator":"EQ"}]}`, []string{"f1"}},
		{"IN name", `{"filters":[{"key":"lang","value":["de","fr"],"operator":"IN"}]}`, []string{"f2", "f4"}},
		{"IN on a collection", `{"filters":[{"key":"tags","value":["rust","db"],"operator":"In"}]}`, []string{"f1", "f2"}},
		{"AND name", `{"filters":[{"key":"lang","value":"en","operator":"EQ"},{"key":"tags","value":"go","operator":"EQ"}],"condition":"AND"}`, []string{"f1"}},
		{"OR name", `{"filters":[{"key":"lang","value":"de","operator":"EQ"},{"key":"tags","value":["go"],"operator":"IN"}],"condition":"OR"}`, []string{"f1", "f2", "f4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f sink.MetadataFilters
			if err := json.Unmarshal([]byte(tt.json), &f); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			got, err := s.GetNodes(ctx, nil, &f, 0)
			if err != nil {
				t.Fatalf("GetNodes: %v", err)
			}
			assertSameSet(t, "GetNodes", nodeIDs(got), tt.want)
			res, err := s.Query(ctx, sink.Query{Mode: sink.Vector, Embedding: []float32{1, 0}, TopK: 10, Filters: &f})
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			assertSameSet(t, "Query", scoredIDs(res), tt.want)
		})
	}
}
