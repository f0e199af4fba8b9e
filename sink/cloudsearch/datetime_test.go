package cloudsearch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestDateTimeOffsetThroughServer stores nodes with a metadata field
// declared filterable as Edm.DateTimeOffset, given as time.Time values and
// RFC 3339 strings with various offsets, and filters on it with EQ and IN
// against the strict server (which compares unquoted DateTimeOffset
// literals as instants and refuses quoted ones).
func TestDateTimeOffsetThroughServer(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) {
		c.FilterableMetadataFieldKeys = append(c.FilterableMetadataFieldKeys, FilterableField{Key: "published", Type: "DATETIME"})
	})
	ctx := context.Background()
	nodes := makeNodes("dates.md", 5)
	nodes[0].Metadata["published"] = time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CET", 2*60*60)) // 10:00Z
	nodes[1].Metadata["published"] = "2024-05-02T09:00:00-03:00"                                        // 12:00Z
	nodes[2].Metadata["published"] = "2024-05-03T10:00:00.5Z"
	nodes[3].Metadata["published"] = "2024-05-01T10:00:00Z or true" // not a date and time
	// nodes[4] has none.
	ids, err := s.Add(ctx, nodes)
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed[nodes[3].ID] == nil {
		t.Fatalf("Add = %v, want only node 3 (not a date and time) reported", err)
	}
	if msg := we.Failed[nodes[3].ID].Error(); !containsAll(msg, `"published"`, "RFC 3339", "filterableMetadataFieldKeys.published") {
		t.Errorf("node 3: %q, want the key, the expected form and the setting", msg)
	}
	if msg := we.Failed[nodes[3].ID].Error(); strings.Count(msg, nodes[3].ID) != 1 {
		t.Errorf("node 3: %q, want the node named once", msg)
	}
	if len(ids) != 4 {
		t.Fatalf("acknowledged %d nodes, want 4", len(ids))
	}
	filter := func(mf sink.MetadataFilter) *sink.MetadataFilters {
		return &sink.MetadataFilters{Filters: []sink.MetadataFilter{mf}}
	}
	tests := []struct {
		name string
		f    *sink.MetadataFilters
		want []int // indexes into nodes
	}{
		{"eq RFC 3339 UTC", filter(eq("published", "2024-05-01T10:00:00Z")), []int{0}},
		{"eq RFC 3339 with offset", filter(eq("published", "2024-05-01T11:00:00+01:00")), []int{0}},
		{"eq time.Time", filter(eq("published", time.Date(2024, 5, 2, 12, 0, 0, 0, time.UTC))), []int{1}},
		{"eq fractional seconds", filter(eq("published", "2024-05-03T10:00:00.500Z")), []int{2}},
		{"eq no match", filter(eq("published", "2024-05-01T10:00:01Z")), nil},
		{"in mixed", filter(in("published", []any{"2024-05-03T12:00:00.5+02:00", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)})), []int{0, 2}},
		{"in strings", filter(in("published", []string{"2024-05-02T12:00:00Z", "1999-01-01T00:00:00Z"})), []int{1}},
		{"and another field", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("published", []string{"2024-05-02T12:00:00Z", "2024-05-01T10:00:00Z"}), eq("year", 2001)}}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, i := range tt.want {
				want = append(want, nodes[i].ID)
			}
			got, err := s.GetNodes(ctx, nil, tt.f, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ids := sortedIDs(got); !slices.Equal(ids, sorted(want)) {
				t.Errorf("GetNodes = %v, want %v", ids, sorted(want))
			}
			res, err := s.Query(ctx, sink.Query{Embedding: vec(0), TopK: 10, Filters: tt.f})
			if err != nil {
				t.Fatal(err)
			}
			var qn []sink.Node
			for _, r := range res {
				qn = append(qn, r.Node)
			}
			if ids := sortedIDs(qn); !slices.Equal(ids, sorted(want)) {
				t.Errorf("Query = %v, want %v", ids, sorted(want))
			}
		})
	}
	assertNoClientErrors(t, srv)

	before := len(srv.Requests())
	for _, v := range []any{"2024-05-01T10:00:00Z or true", "2024-05-01T10:00:00Z) or (true", "May 1st"} {
		_, err := s.GetNodes(ctx, nil, filter(eq("published", v)), 0)
		if !errors.Is(err, sink.ErrInvalidFilter) || !containsAll(err.Error(), `"published"`, "RFC 3339") {
			t.Errorf("filter published eq %q: %v, want a *sink.FilterError naming the key and the form", v, err)
		}
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests sent for invalid filters, want 0", n)
	}
}

func containsAll(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func sortedIDs(nodes []sink.Node) []string {
	ids := nodeIDs(nodes)
	slices.Sort(ids)
	return ids
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}
