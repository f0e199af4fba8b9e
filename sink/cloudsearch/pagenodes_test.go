package cloudsearch

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// pageAll calls PageNodes and returns the nodes it passed, in order, and
// for each page its length and the number of docs/search requests the
// server had answered when it was passed (counted from the request log's
// length before the call).
func pageAll(t *testing.T, s *Store, srv *searchtest.Server, filters *sink.MetadataFilters, limit int) (nodes []sink.Node, sizes, searches []int) {
	t.Helper()
	from := len(srv.Requests())
	err := s.PageNodes(context.Background(), filters, limit, func(page []sink.Node) error {
		nodes = append(nodes, page...)
		sizes = append(sizes, len(page))
		searches = append(searches, len(searchBodies(t, srv, from)))
		return nil
	})
	if err != nil {
		t.Fatalf("PageNodes: %v", err)
	}
	return nodes, sizes, searches
}

// TestPageNodes: PageNodes passes the nodes GetNodes(nil, filters, limit)
// returns, in the same order, in pages of at most 1000, each passed once
// it is read and before the next is asked for, so that no more than a
// page is held however many nodes match; on both kinds of key.
func TestPageNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2500 nodes")
	}
	for _, kind := range keyKinds {
		t.Run(kind.name, func(t *testing.T) {
			s, srv := kind.start(t)
			if nodes, sizes, _ := pageAll(t, s, srv, nil, 0); len(nodes) != 0 || len(sizes) != 0 {
				t.Errorf("PageNodes of an empty index passed %d nodes in %d pages; want none", len(nodes), len(sizes))
			}
			addBigAndSmall(t, s)
			tests := []struct {
				name    string
				filters *sink.MetadataFilters
				limit   int
				want    int
			}{
				{"all", nil, 0, 2500},
				{"limit across pages", nil, 2100, 2100},
				{"limit within a page", nil, 7, 7},
				{"filter", earlyYears, 0, 1534 + 134},
				{"filter and limit", earlyYears, 1200, 1200},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want, err := s.GetNodes(context.Background(), nil, tt.filters, tt.limit)
					if err != nil {
						t.Fatal(err)
					}
					got, sizes, searches := pageAll(t, s, srv, tt.filters, tt.limit)
					if len(got) != tt.want || len(want) != tt.want {
						t.Fatalf("PageNodes passed %d nodes and GetNodes returned %d; want %d", len(got), len(want), tt.want)
					}
					if kind.sortable {
						if !reflect.DeepEqual(got, want) {
							t.Errorf("PageNodes passed other nodes, or in another order, than GetNodes returns")
						}
						for i := 1; i < len(got); i++ {
							if got[i-1].ID >= got[i].ID {
								t.Fatalf("node %d (%s) passed after %s: want key order", i, got[i].ID, got[i-1].ID)
							}
						}
					} else if !sameNodes(got, want) { // pages by skip: the service's order
						t.Errorf("PageNodes passed other nodes than GetNodes returns")
					}
					for i, n := range sizes {
						// Page i is passed after request i+1 (the first
						// one, with skip, counts the matches as well)
						// and before request i+2.
						if n > maxPageSize || (n < maxPageSize && i < len(sizes)-1) || searches[i] != i+1 {
							t.Fatalf("pages of %v nodes passed after %v search requests; want full pages of %d, page i after request i+1", sizes, searches, maxPageSize)
						}
					}
				})
			}
			assertNoClientErrors(t, srv)

			// fn's error stops the read at once.
			stop := errors.New("stop")
			calls, from := 0, len(srv.Requests())
			err := s.PageNodes(context.Background(), nil, 0, func([]sink.Node) error { calls++; return stop })
			if !errors.Is(err, stop) || calls != 1 || len(searchBodies(t, srv, from)) != 1 {
				t.Errorf("PageNodes = %v after %d calls and %d requests, want fn's error after 1 of each", err, calls, len(searchBodies(t, srv, from)))
			}
			var qe *sink.QueryError
			if err := s.PageNodes(context.Background(), nil, -1, func([]sink.Node) error { return nil }); !errors.As(err, &qe) {
				t.Errorf("PageNodes with limit -1 = %v, want a *sink.QueryError as GetNodes returns", err)
			}
		})
	}
}

// sameNodes reports whether a and b hold the same nodes, in any order.
func sameNodes(a, b []sink.Node) bool {
	byID := make(map[string]sink.Node, len(b))
	for _, n := range b {
		byID[n.ID] = n
	}
	if len(a) != len(b) || len(byID) != len(b) {
		return false
	}
	for _, n := range a {
		if m, ok := byID[n.ID]; !ok || !reflect.DeepEqual(n, m) {
			return false
		}
	}
	return true
}

// TestPageNodesHiddenDocID: PageNodes lists the nodes of an index whose
// doc_id field is hidden (hiddenFieldKeys), which ScanNodes cannot list,
// a page at a time, without asking for doc_id (the service refuses to
// select a field that is not retrievable): each node has the reference
// document id its metadata string holds.
func TestPageNodesHiddenDocID(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.HiddenFieldKeys = []string{"doc_id"} })
	addDocs(t, s, []storedDoc{{"big.md", 1100}, {"O'Brien's notes.md", 3}})
	from := len(srv.Requests())
	got, sizes, searches := pageAll(t, s, srv, nil, 0)
	perDoc := map[string]int{}
	for _, n := range got {
		perDoc[n.RefDocID]++
	}
	if len(got) != 1103 || perDoc["big.md"] != 1100 || perDoc["O'Brien's notes.md"] != 3 {
		t.Errorf("PageNodes passed %d nodes, per document %v; want the 1100 of big.md and 3 of O'Brien's notes.md", len(got), perDoc)
	}
	if !reflect.DeepEqual(sizes, []int{1000, 103}) || !reflect.DeepEqual(searches, []int{1, 2}) {
		t.Errorf("pages of %v nodes passed after %v search requests; want [1000 103] after [1 2]", sizes, searches)
	}
	for _, b := range searchBodies(t, srv, from) {
		if sel, _ := b["select"].(string); strings.Contains(sel, "doc_id") {
			t.Errorf("PageNodes selected %q, which names the hidden doc_id field", sel)
		}
	}
	assertNoClientErrors(t, srv)
}

// TestPageNodesPastScanReach: on an index whose key is not sortable,
// PageNodes reads as far as paging with skip reaches, as GetNodes does: a
// read of more nodes fails with a *ScanLimitError before any is passed,
// and a limit within the reach narrows it enough.
func TestPageNodesPastScanReach(t *testing.T) {
	s, _ := startLlamaIndexPython(t, searchtest.Options{SpecDir: noSpec}, ValidateIndex)
	s.maxSkip = 0 // a reach of one page
	addDocs(t, s, []storedDoc{{"big.md", 1001}})
	calls := 0
	err := s.PageNodes(context.Background(), nil, 0, func([]sink.Node) error { calls++; return nil })
	var sle *ScanLimitError
	if !errors.As(err, &sle) || sle.Op != "get nodes" || calls != 0 {
		t.Fatalf("PageNodes = %v after %d calls, want a *ScanLimitError for \"get nodes\", before any", err, calls)
	}
	if _, gerr := s.GetNodes(context.Background(), nil, nil, 0); gerr == nil || gerr.Error() != err.Error() {
		t.Errorf("GetNodes = %v, want PageNodes' error %v", gerr, err)
	}
	passed := 0
	err = s.PageNodes(context.Background(), nil, 1000, func(page []sink.Node) error { passed += len(page); return nil })
	if err != nil || passed != 1000 {
		t.Errorf("PageNodes with limit 1000 = %v after %d nodes, want 1000 nodes", err, passed)
	}
}
