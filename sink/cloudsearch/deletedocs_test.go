package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// keyKinds are the two ways the store reads documents: by key on Sluice's
// index, whose key field is sortable, and by skip on LlamaIndex's Python
// index, whose key field is not (see unsortable_key_test.go).
var keyKinds = []struct {
	name     string
	sortable bool
	start    func(t *testing.T) (*Store, *searchtest.Server)
}{
	{"sortable key", true, func(t *testing.T) (*Store, *searchtest.Server) {
		return startStore(t, searchtest.Options{}, nil)
	}},
	{"key not sortable", false, func(t *testing.T) (*Store, *searchtest.Server) {
		return startLlamaIndexPython(t, searchtest.Options{}, ValidateIndex)
	}},
}

// storedDoc is a reference document and its number of nodes.
type storedDoc struct {
	ref   string
	nodes int
}

// addDocs adds makeNodes(d.ref, d.nodes) for each of docs.
func addDocs(t *testing.T, s *Store, docs []storedDoc) {
	t.Helper()
	var nodes []sink.Node
	for _, d := range docs {
		nodes = append(nodes, makeNodes(d.ref, d.nodes)...)
	}
	if _, err := s.Add(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
}

// nodesPerDoc counts the documents the server holds per doc_id, checking
// that each is one makeNodes wrote for its reference document.
func nodesPerDoc(t *testing.T, srv *searchtest.Server) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range srv.Documents("docs") {
		ref, _ := d["doc_id"].(string)
		if chunk, _ := d["chunk"].(string); !strings.HasSuffix(chunk, " of "+ref+" about rivers") {
			t.Errorf("document %v holds chunk %q, not one of %q", d["id"], chunk, ref)
		}
		out[ref]++
	}
	return out
}

// smallDocs is n documents named prefix-0.md, ... of nodes nodes each.
func smallDocs(prefix string, n, nodes int) []storedDoc {
	out := make([]storedDoc, n)
	for i := range out {
		out[i] = storedDoc{fmt.Sprintf("%s-%d.md", prefix, i), nodes}
	}
	return out
}

func refsOf(docs []storedDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ref
	}
	return out
}

// allDelimiters holds every delimiter searchIn tries: no search.in can
// list it.
const allDelimiters = "all,of|the;delimiters~in^one\tid.md"

// TestDeleteDocs deletes the nodes of many documents, on both kinds of
// key: exactly the documents asked for go, whatever their ids hold, the
// others stay whole, and the nodes are found with a search per group of
// documents (per page of 1000 nodes), not one per document.
func TestDeleteDocs(t *testing.T) {
	fifty := smallDocs("small", 50, 3)
	tests := []struct {
		name     string
		stored   []storedDoc
		del      []string
		searches int // docs/search requests
		large    bool
		// The docs requests (docsTrace) with a sortable key, and with
		// a key that is not, if checked.
		sortableTrace, unsortableTrace string
	}{
		{
			name:     "fifty documents, one search",
			stored:   append(slices.Clone(fifty), smallDocs("kept", 5, 3)...),
			del:      refsOf(fifty),
			searches: 1, // Delete would search 50 times
		},
		{
			name:     "a document past one page",
			stored:   append([]storedDoc{{"big.md", 1200}}, append(smallDocs("gone", 8, 5), smallDocs("kept", 4, 5)...)...),
			del:      append([]string{"big.md"}, refsOf(smallDocs("gone", 8, 5))...),
			searches: 2, // 1240 nodes: two pages
			large:    true,
			// As Delete: with a sortable key, each page is deleted
			// before the next is read; without one, every key is read
			// first, since deleting would shift the pages by skip.
			sortableTrace:   "search index search index",
			unsortableTrace: "search search index index",
		},
		{
			name: "commas, quotes, non-ASCII and white space",
			stored: []storedDoc{
				{"a.md,b.md", 3}, {"a.md", 2}, {"b.md", 2}, // a comma: not a.md and b.md
				{"O'Brien's notes.md", 3}, {"OBriens notes.md", 2},
				{"日本語/ファイル.md", 3}, {"café, thé.md", 3}, {"cafe.md", 2},
				{"x|y.md", 2}, {"x,y|z;w.md", 2}, {"x.md", 2}, {"t~c^.md", 2}, {"tab\t.md", 2},
				{allDelimiters, 2}, {" padded.md ", 2}, {"padded.md", 2},
			},
			del: []string{"a.md,b.md", "O'Brien's notes.md", "日本語/ファイル.md", "café, thé.md", "x|y.md", "x,y|z;w.md", "t~c^.md", "tab\t.md", allDelimiters, " padded.md "},
			// allDelimiters and " padded.md " alone (Delete's eq);
			// "O'Brien's notes.md", "日本語/ファイル.md", "x|y.md",
			// "t~c^.md" and "tab\t.md" in one search.in with ',';
			// "a.md,b.md" and "café, thé.md" in one with '|';
			// "x,y|z;w.md" alone in its group. Together the ids hold
			// every delimiter, so one group would have to be a
			// disjunction of eq.
			searches: 5,
		},
		{
			name:   "unknown and repeated ids",
			stored: smallDocs("doc", 6, 2),
			del:    []string{"doc-1.md", "unknown.md", "doc-3.md", "doc-1.md", "DOC-5.md", "doc-5.md ", "doc-", "doc-3.md"},
			// Case matters, and so does white space: "DOC-5.md" and
			// "doc-5.md " are not doc-5.md. One search.in for all but
			// "doc-5.md ", which is alone (white space at an end).
			searches: 2,
		},
	}
	for _, kind := range keyKinds {
		for _, tt := range tests {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				if tt.large && testing.Short() {
					t.Skip("uploads 1200 nodes")
				}
				s, srv := kind.start(t)
				addDocs(t, s, tt.stored)
				want := map[string]int{}
				for _, d := range tt.stored {
					if !slices.Contains(tt.del, d.ref) {
						want[d.ref] = d.nodes
					}
				}
				from := len(srv.Requests())
				if err := s.DeleteDocs(context.Background(), tt.del); err != nil {
					t.Fatalf("DeleteDocs = %v", err)
				}
				if got := nodesPerDoc(t, srv); !maps.Equal(got, want) {
					t.Errorf("nodes left per document:\n%v\nwant\n%v", got, want)
				}
				wantTrace := tt.unsortableTrace
				if kind.sortable {
					wantTrace = tt.sortableTrace
				}
				if trace := docsTrace(srv, from); wantTrace != "" && trace != wantTrace {
					t.Errorf("requests %q, want %q", trace, wantTrace)
				}
				bodies := searchBodies(t, srv, from)
				if len(bodies) != tt.searches {
					t.Errorf("%d search requests, want %d", len(bodies), tt.searches)
				}
				for i, b := range bodies {
					f, _ := b["filter"].(string)
					if strings.Contains(f, " or ") {
						t.Errorf("search %d filters with a disjunction, not search.in: %.200s", i, f)
					}
					if sorted := b["orderby"] == "id asc"; sorted != kind.sortable {
						t.Errorf("search %d orderby = %v, want by key: %v", i, b["orderby"], kind.sortable)
					}
				}
				assertNoClientErrors(t, srv)
			})
		}
	}
}

// TestDeleteDocsNoRequest: no id, no request, and nothing deleted.
func TestDeleteDocsNoRequest(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	addDocs(t, s, smallDocs("doc", 2, 2))
	from := len(srv.Requests())
	for _, ids := range [][]string{nil, {}} {
		if err := s.DeleteDocs(context.Background(), ids); err != nil {
			t.Errorf("DeleteDocs(%#v) = %v, want nil", ids, err)
		}
	}
	if n := len(srv.Requests()) - from; n != 0 {
		t.Errorf("%d requests sent for no ids, want none", n)
	}
	if got := nodesPerDoc(t, srv); len(got) != 2 {
		t.Errorf("nodes left per document: %v, want both documents", got)
	}
}

// TestDeleteDocsWithinScanReach deletes on an index whose key is not
// sortable, with the reach of paging by skip lowered to 1000 documents:
// documents that together are past it, but each within it, are deleted
// as Delete deletes each; a document past it fails as Delete fails, with
// Delete's error, and is left whole.
func TestDeleteDocsWithinScanReach(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2250 nodes")
	}
	s, srv := startLlamaIndexPython(t, searchtest.Options{SpecDir: noSpec}, ValidateIndex)
	s.maxSkip = 0 // a reach of one page
	ctx := context.Background()
	parts := smallDocs("part", 3, 400) // 1200 nodes in all
	addDocs(t, s, append([]storedDoc{{"big.md", 1001}, {"small.md", 50}}, parts...))

	if err := s.DeleteDocs(ctx, refsOf(parts)); err != nil {
		t.Fatalf("DeleteDocs of 3 documents of 400 nodes = %v, want them deleted as by Delete", err)
	}
	if got := nodesPerDoc(t, srv); !maps.Equal(got, map[string]int{"big.md": 1001, "small.md": 50}) {
		t.Errorf("nodes left per document: %v, want big.md and small.md whole", got)
	}

	want := s.Delete(ctx, "big.md")
	var wantSLE *ScanLimitError
	if !errors.As(want, &wantSLE) {
		t.Fatalf("Delete(big.md) = %v, want a *ScanLimitError", want)
	}
	err := s.DeleteDocs(ctx, []string{"small.md", "big.md"})
	var sle *ScanLimitError
	if !errors.As(err, &sle) || !errors.Is(err, ErrScanLimit) || !errors.Is(err, sink.ErrUnsupported) {
		t.Fatalf("DeleteDocs(small.md, big.md) = %v, want a *ScanLimitError", err)
	}
	if *sle != *wantSLE || err.Error() != want.Error() {
		t.Errorf("DeleteDocs's error\n%+v: %v\nwant Delete's\n%+v: %v", *sle, err, *wantSLE, want)
	}
	if got := nodesPerDoc(t, srv); !maps.Equal(got, map[string]int{"big.md": 1001}) {
		t.Errorf("nodes left per document: %v, want small.md deleted (before big.md) and big.md whole", got)
	}
	assertNoClientErrors(t, srv)
}

// TestDeleteDocsErrors: a search or a delete the service refuses fails
// DeleteDocs with the error Delete gets from the same answer (the same
// types and sentinels, the operation saying how many documents), and
// leaves what was not deleted.
func TestDeleteDocsErrors(t *testing.T) {
	refs := []string{"a.md", "b.md", "c.md"}
	fail := func(status int) func(srv *searchtest.Server) {
		// Every attempt of the first request: the retries too.
		return func(srv *searchtest.Server) { srv.FailNext(DefaultMaxRetries+1, status, 0) }
	}
	tests := []struct {
		name  string
		fault func(srv *searchtest.Server)
		is    []error // sentinels err wraps
		op    string  // the *ServiceError's Op, if one
		left  map[string]int
	}{
		{
			name:  "search answered 503",
			fault: fail(http.StatusServiceUnavailable),
			is:    []error{ErrThrottled},
			op:    "find nodes of 3 documents",
			left:  map[string]int{"a.md": 2, "b.md": 2, "c.md": 2, "kept.md": 2},
		},
		{
			name:  "search answered 500",
			fault: fail(http.StatusInternalServerError),
			is:    []error{ErrService},
			op:    "find nodes of 3 documents",
			left:  map[string]int{"a.md": 2, "b.md": 2, "c.md": 2, "kept.md": 2},
		},
		{
			name: "a node's delete refused",
			fault: func(srv *searchtest.Server) {
				srv.FailKeys(http.StatusBadRequest, 1, makeNodes("a.md", 1)[0].ID)
			},
			is:   []error{sink.ErrWrite},
			left: map[string]int{"a.md": 1, "kept.md": 2},
		},
	}
	sentinels := []error{ErrThrottled, ErrService, ErrConnection, ErrScanLimit, ErrIndexNotFound, ErrAuth, sink.ErrWrite, sink.ErrUnavailable}
	for _, kind := range keyKinds {
		for _, tt := range tests {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				// Delete of a.md on a store of its own, under the same fault.
				ds, dsrv := kind.start(t)
				addDocs(t, ds, []storedDoc{{"a.md", 2}})
				tt.fault(dsrv)
				want := ds.Delete(context.Background(), "a.md")

				s, srv := kind.start(t)
				addDocs(t, s, []storedDoc{{"a.md", 2}, {"b.md", 2}, {"c.md", 2}, {"kept.md", 2}})
				tt.fault(srv)
				err := s.DeleteDocs(context.Background(), refs)
				if err == nil || want == nil {
					t.Fatalf("DeleteDocs = %v, Delete = %v; want both to fail", err, want)
				}
				for _, sentinel := range sentinels {
					if errors.Is(err, sentinel) != errors.Is(want, sentinel) {
						t.Errorf("errors.Is(%v) = %v for DeleteDocs (%v), %v for Delete (%v)", sentinel, errors.Is(err, sentinel), err, errors.Is(want, sentinel), want)
					}
				}
				for _, sentinel := range tt.is {
					if !errors.Is(err, sentinel) {
						t.Errorf("DeleteDocs = %v, want it to wrap %v", err, sentinel)
					}
				}
				var se, wantSE *ServiceError
				if errors.As(err, &se) != errors.As(want, &wantSE) {
					t.Errorf("DeleteDocs = %T, Delete = %T; want both a *ServiceError or neither", err, want)
				}
				if se != nil && (se.Op != tt.op || se.StatusCode != wantSE.StatusCode || se.Index != "docs") {
					t.Errorf("DeleteDocs's *ServiceError: op %q, status %d, index %q; want %q, %d as Delete's, docs", se.Op, se.StatusCode, se.Index, tt.op, wantSE.StatusCode)
				}
				var we, wantWE *sink.WriteError
				if errors.As(err, &we) != errors.As(want, &wantWE) {
					t.Errorf("DeleteDocs = %T, Delete = %T; want both a *sink.WriteError or neither", err, want)
				}
				if got := nodesPerDoc(t, srv); !maps.Equal(got, tt.left) {
					t.Errorf("nodes left per document: %v, want %v", got, tt.left)
				}
			})
		}
	}
}

// TestDocIDGroups checks how ids are grouped: each group of several ids
// is one search.in, of at most 1000 ids and maxSearchInBytes of values,
// and every id is in exactly one group.
func TestDocIDGroups(t *testing.T) {
	// many is n ids of size bytes: i in decimal, then fill.
	many := func(n, size int, fill string) []string {
		out := make([]string, n)
		for i := range out {
			id := fmt.Sprint(i)
			out[i] = id + strings.Repeat(fill, max(0, size-len(id)))
		}
		return out
	}
	tests := []struct {
		name   string
		ids    []string
		groups []int // sizes, in order
	}{
		{"none", nil, nil},
		{"one", []string{"a.md"}, []int{1}},
		{"1000 per group", many(2500, 0, ""), []int{1000, 1000, 500}},
		// 40,001 bytes each with the delimiter: 26 in 1 MiB.
		{"1 MiB per group", many(60, 40000, "x"), []int{26, 26, 8}},
		// Quotes count twice, as quoteOData doubles them: an id of
		// 20,000 bytes, all quotes but its number, takes about 40,000
		// with the delimiter, 26 in 1 MiB (52 if quotes counted once).
		{"quotes doubled", many(60, 20000, "'"), []int{26, 26, 8}},
		{"an id larger than the bound alone", []string{"a", strings.Repeat("b", maxSearchInBytes+1), "c"}, []int{1, 1, 1}},
		// The ids no search.in lists first, one per group, then ',' ,
		// '|' and ';'.
		{"delimiters", []string{"a,b", "c", "d|e,f", "g,h", "i", "j,k|l;m~n^o\tp", " q", ""}, []int{1, 1, 1, 2, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups := docIDGroups(tt.ids)
			var sizes, all []string
			for _, g := range groups {
				sizes = append(sizes, fmt.Sprint(len(g)))
				all = append(all, g...)
				f := searchIn("doc_id", g)
				if len(g) > 1 && !strings.HasPrefix(f, "search.in(doc_id, '") {
					t.Errorf("group of %d ids is not one search.in: %.100s", len(g), f)
				}
				bytes := 0
				for _, id := range g {
					bytes += len(id) + strings.Count(id, "'") + 1
				}
				if len(g) > 1 && (len(g) > idsPerQuery || bytes > maxSearchInBytes) {
					t.Errorf("group of %d ids and %d bytes, above %d ids or %d bytes", len(g), bytes, idsPerQuery, maxSearchInBytes)
				}
			}
			if !slices.Equal(sorted(all), sorted(tt.ids)) {
				t.Errorf("groups hold %d ids, want each of the %d exactly once", len(all), len(tt.ids))
			}
			want := make([]string, len(tt.groups))
			for i, n := range tt.groups {
				want[i] = fmt.Sprint(n)
			}
			if !slices.Equal(sizes, want) {
				t.Errorf("group sizes %v, want %v", sizes, want)
			}
		})
	}
}
