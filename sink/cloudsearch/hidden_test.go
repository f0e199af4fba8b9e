package cloudsearch

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestHiddenFieldIsNotReturned: a filterable metadata field listed in
// hiddenFieldKeys is returned neither as a field nor in the metadata of a
// query's or a read's nodes, though it can still be filtered on; the
// other metadata is returned as written.
func TestHiddenFieldIsNotReturned(t *testing.T) {
	for _, tt := range []struct {
		name   string
		field  FilterableField
		hidden string
	}{
		{"field named as its key", FilterableField{Key: "secret"}, "secret"},
		{"field named otherwise", FilterableField{Key: "secret", Field: "secret_field"}, "secret_field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := startStore(t, searchtest.Options{}, func(c *Config) {
				c.HiddenFieldKeys = []string{tt.hidden}
				c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, tt.field}
			})
			ctx := context.Background()
			node := sink.Node{ID: "n1", RefDocID: "a.md", Text: "rivers and lakes", Embedding: vec(1),
				Metadata: map[string]any{"author": "Quixote", "secret": "marmalade", "plain": "kept"}}
			if _, err := s.Add(ctx, []sink.Node{node}); err != nil {
				t.Fatal(err)
			}
			filter := &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "secret", Value: "marmalade", Operator: sink.EQ}}}
			res, err := s.Query(ctx, sink.Query{Mode: sink.Vector, Embedding: vec(1), TopK: 1, Filters: filter})
			if err != nil || len(res) != 1 {
				t.Fatalf("query filtered on the hidden field: %v, %v", res, err)
			}
			got, err := s.GetNodes(ctx, []string{"n1"}, nil, 0)
			if err != nil || len(got) != 1 {
				t.Fatalf("GetNodes: %v, %v", got, err)
			}
			for what, md := range map[string]map[string]any{"query": res[0].Node.Metadata, "get": got[0].Metadata} {
				if _, ok := md["secret"]; ok {
					t.Errorf("%s returned the hidden field in the metadata: %v", what, md)
				}
				if md["author"] != "Quixote" || md["plain"] != "kept" {
					t.Errorf("%s metadata %v, want author and plain kept", what, md)
				}
			}
			assertNoClientErrors(t, srv)
		})
	}
}
