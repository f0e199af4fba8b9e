package cloudsearch

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// searchBodies returns the docs/search request bodies the server received
// since from (an index into its request log), decoded.
func searchBodies(t *testing.T, srv *searchtest.Server, from int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range srv.Requests()[from:] {
		if !strings.HasSuffix(r.Path, "/docs/search") {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("search body %q: %v", r.Body, err)
		}
		out = append(out, body)
	}
	return out
}

// earlyYears is the filter of the paging tests: year 2000 or 2001.
var earlyYears = &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "year", Value: []any{2000, 2001}, Operator: sink.IN}}}

// addBigAndSmall adds the nodes of the paging tests: 2300 of big.md and
// 200 of small.md, more than one page of results.
func addBigAndSmall(t *testing.T, s *Store) (big, small []sink.Node) {
	t.Helper()
	big, small = makeNodes("big.md", 2300), makeNodes("small.md", 200)
	for _, batch := range [][]sink.Node{big, small} {
		if _, err := s.Add(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return big, small
}

// getPagedNodes calls GetNodes with ids, filters (nil or earlyYears) and
// limit, checks that it returns want distinct nodes, each matching the
// filter, and returns the docs/search request bodies it sent.
func getPagedNodes(t *testing.T, s *Store, srv *searchtest.Server, ids []string, filters *sink.MetadataFilters, limit, want int) []map[string]any {
	t.Helper()
	from := len(srv.Requests())
	got, err := s.GetNodes(context.Background(), ids, filters, limit)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if y := n.Metadata["year"]; filters != nil && y != float64(2000) && y != float64(2001) {
			t.Errorf("node %s has year %v, the filter asks for 2000 or 2001", n.ID, y)
		}
		seen[n.ID] = true
	}
	if len(got) != want || len(seen) != want {
		t.Errorf("got %d nodes (%d distinct), want %d", len(got), len(seen), want)
	}
	return searchBodies(t, srv, from)
}

// docsTrace lists the document requests the server received since from
// (an index into its request log): "search" for each docs/search, "index"
// for each docs/index, separated by spaces.
func docsTrace(srv *searchtest.Server, from int) string {
	var trace []string
	for _, r := range srv.Requests()[from:] {
		switch {
		case strings.HasSuffix(r.Path, "/docs/search"):
			trace = append(trace, "search")
		case strings.HasSuffix(r.Path, "/docs/index"):
			trace = append(trace, "index")
		}
	}
	return strings.Join(trace, " ")
}

// TestScanPagesByKey checks that reading documents (GetNodes, Delete) pages
// by key, as the service's documentation advises, and never by $skip, whose
// 100,000 cap would stop a read of a larger index.
func TestScanPagesByKey(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2500 nodes")
	}
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	big, small := addBigAndSmall(t, s)
	tests := []struct {
		name    string
		ids     []string
		filters *sink.MetadataFilters
		limit   int
		want    int
	}{
		{"all", nil, nil, 0, 2500},
		{"limit across pages", nil, nil, 2100, 2100},
		{"filter", nil, earlyYears, 0, 1534 + 134},
		{"ids and filter", nodeIDs(big[:2100]), earlyYears, 0, 1400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bodies := getPagedNodes(t, s, srv, tt.ids, tt.filters, tt.limit, tt.want)
			if len(bodies) < 2 {
				t.Fatalf("%d search requests, want several pages", len(bodies))
			}
			for i, b := range bodies {
				if b["skip"] != nil {
					t.Errorf("request %d sent skip %v; pages must go by key", i, b["skip"])
				}
				if b["orderby"] != "id asc" {
					t.Errorf("request %d orderby = %v, want \"id asc\"", i, b["orderby"])
				}
				if b["count"] != nil || b["sessionId"] != nil {
					t.Errorf("request %d sent count %v and sessionId %v; reads by key need neither", i, b["count"], b["sessionId"])
				}
				// Without ids, every page after the first continues after
				// the last key; with ids, each group of ids starts anew.
				if filter, _ := b["filter"].(string); tt.ids == nil && i > 0 && !strings.Contains(filter, "id gt '") {
					t.Errorf("request %d filter %.200q does not continue after the last key", i, filter)
				}
			}
		})
	}
	assertNoClientErrors(t, srv)

	// NodeIDs lists big.md's keys in pages of at most 1000.
	listed := map[string]bool{}
	var pages []int
	err := s.NodeIDs(ctx, "big.md", func(ids []string) error {
		pages = append(pages, len(ids))
		for _, id := range ids {
			listed[id] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := nodeIDs(big); len(listed) != len(want) || !listed[want[0]] || !listed[want[len(want)-1]] || slices.Max(pages) > 1000 || len(pages) < 2 {
		t.Errorf("NodeIDs(big.md) listed %d distinct ids in pages %v, want the %d of big.md in pages of at most 1000", len(listed), pages, len(want))
	}

	from := len(srv.Requests())
	if err := s.Delete(ctx, "big.md"); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Documents("docs")); n != len(small) {
		t.Errorf("%d documents left after Delete, want the %d of small.md", n, len(small))
	}
	// Keys are deleted page by page: the deletes interleave with the reads.
	if got := docsTrace(srv, from); !strings.HasPrefix(got, "search index search") {
		t.Errorf("Delete sent %q; want each page of keys deleted before the next page is read", got)
	}
}

// TestQueryFollowsContinuations checks that a query for more than the 1000
// results one response carries follows @search.nextPageParameters.
func TestQueryFollowsContinuations(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2100 nodes")
	}
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	if _, err := s.Add(ctx, makeNodes("big.md", 2100)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    sink.Query
		want int
	}{
		{"vector", sink.Query{Embedding: vec(3), TopK: 1050}, 1050},
		{"sparse", sink.Query{Mode: sink.Sparse, QueryStr: "rivers", TopK: 2050}, 2050},
		{"hybrid", sink.Query{Mode: sink.Hybrid, QueryStr: "rivers", Embedding: vec(3), TopK: 1500}, 1500},
		{"fewer matches than asked", sink.Query{Mode: sink.Sparse, QueryStr: "rivers", TopK: 3000}, 2100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := len(srv.Requests())
			got, err := s.Query(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i, n := range got {
				seen[n.ID] = true
				if i > 0 && n.Score > got[i-1].Score {
					t.Fatalf("result %d scores %v above result %d's %v: pages out of order", i, n.Score, i-1, got[i-1].Score)
				}
			}
			if len(got) != tt.want || len(seen) != tt.want {
				t.Errorf("got %d results (%d distinct), want %d", len(got), len(seen), tt.want)
			}
			if n := len(searchBodies(t, srv, from)); n < 2 {
				t.Errorf("%d search requests; a query above 1000 results needs continuations", n)
			}
		})
	}
	assertNoClientErrors(t, srv)
}
