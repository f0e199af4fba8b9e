package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
	"github.com/sluice-dev/sluice/sink/local"
)

// TestGetByDocument: `get --doc-id` lists exactly one document's nodes,
// with --limit, --ids and --filter narrowing them, and a --filter on
// doc_id that finds nothing says that doc_id is not metadata.
func TestGetByDocument(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/long.md":  strings.Repeat("A sentence about herons and their long legs. ", 60),
		"docs/other.md": strings.Repeat("Another sentence about pelicans. ", 60),
		"sluice.yaml":   "splitter: {chunkSize: 32, chunkOverlap: 0}\n",
	})
	if out, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, _ := sluice(t, dir, "get", "--json")
	byDoc := map[string][]string{}
	for _, n := range jsonLines(t, out) {
		doc := fmt.Sprint(n["doc_id"])
		byDoc[doc] = append(byDoc[doc], fmt.Sprint(n["id"]))
	}
	long := byDoc["long.md"]
	if len(long) < 5 || len(byDoc["other.md"]) < 5 {
		t.Fatalf("nodes per document %v; the test needs several of each", map[string]int{"long.md": len(long), "other.md": len(byDoc["other.md"])})
	}
	ids := func(out string) []string {
		var got []string
		for _, n := range jsonLines(t, out) {
			got = append(got, fmt.Sprint(n["id"]))
		}
		return got
	}
	tests := []struct {
		name string
		args []string
		want []string // node ids, any order; nil for none
	}{
		{"whole document", []string{"--doc-id", "long.md"}, long},
		{"unknown document", []string{"--doc-id", "nosuch.md"}, nil},
		{"with ids", []string{"--doc-id", "long.md", "--ids", long[1] + "," + byDoc["other.md"][0]}, long[1:2]},
		{"with a filter", []string{"--doc-id", "long.md", "--filter", "file_name=other.md"}, nil},
		{"with a matching filter", []string{"--doc-id", "long.md", "--filter", "file_name=long.md"}, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := sluice(t, dir, append([]string{"get", "--json"}, tt.args...)...)
			if got := ids(out); code != exitOK || !sameSet(got, tt.want) {
				t.Errorf("exit %d, stderr %q, ids %v; want %v", code, stderr, got, tt.want)
			}
		})
	}
	out, _, code := sluice(t, dir, "get", "--json", "--doc-id", "long.md", "--limit", "3")
	if got := ids(out); code != exitOK || len(got) != 3 || !slices.Contains(long, got[0]) {
		t.Errorf("--limit 3: exit %d, ids %v; want 3 of long.md's", code, got)
	}
	out, stderr, code := sluice(t, dir, "get", "--doc-id", "long.md")
	if code != exitOK || !strings.HasSuffix(out, fmt.Sprintf("%d nodes\n", len(long))) || !strings.HasPrefix(out, " 1. long.md") || stderr != "" {
		t.Errorf("text output: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, stderr, code := sluice(t, dir, "get", "--doc-id", ""); code != exitUsage || !strings.Contains(stderr, "--doc-id is empty") {
		t.Errorf("empty --doc-id: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
	for _, args := range [][]string{{"get"}, {"query", "herons", "--mode", "sparse"}} {
		_, stderr, code := sluice(t, dir, append(args, "--filter", "doc_id=long.md")...)
		if code != exitOK || !strings.Contains(stderr, "sluice get --doc-id ID") {
			t.Errorf("%s --filter doc_id=long.md: exit %d, stderr %q; want a hint to use --doc-id", args[0], code, stderr)
		}
	}
	if _, stderr, _ := sluice(t, dir, "get", "--filter", "file_name=nosuch.md"); stderr != "" {
		t.Errorf("an empty result without a doc_id filter printed %q to stderr; want nothing", stderr)
	}
}

// TestGetIDsAndEmptyQueries: --ids trims each id, an --ids with no id is a
// usage error (an empty $IDS must not list the whole index), ids that match
// nothing get a hint about shortened ids, and an empty query text is a
// usage error in every mode.
func TestGetIDsAndEmptyQueries(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n", "docs/b.md": "Bravo document about herons.\n"})
	if out, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, _ := sluice(t, dir, "get", "--json")
	all := jsonLines(t, out)
	if len(all) != 2 {
		t.Fatalf("%d nodes, want 2", len(all))
	}
	id := fmt.Sprint(all[0]["id"])
	if out, stderr, code := sluice(t, dir, "get", "--json", "--ids", " "+id+" ,"); code != exitOK || len(jsonLines(t, out)) != 1 {
		t.Errorf("--ids with spaces: exit %d, %q %q; want the one node", code, out, stderr)
	}
	for _, ids := range []string{"", " , "} {
		if out, stderr, code := sluice(t, dir, "get", "--ids", ids); code != exitUsage || !strings.Contains(stderr, "--ids is empty") {
			t.Errorf("--ids %q: exit %d, %q %q; want 2 and --ids named", ids, code, out, stderr)
		}
	}
	if out, stderr, code := sluice(t, dir, "get", "--ids", id[:12]); code != exitOK || !strings.Contains(out, "0 nodes") || !strings.Contains(stderr, "whole node ids") {
		t.Errorf("--ids with a shortened id: exit %d, %q %q; want 0 nodes and the hint", code, out, stderr)
	}
	for _, mode := range []string{"vector", "hybrid", "sparse"} {
		if out, stderr, code := sluice(t, dir, "query", "  ", "--mode", mode); code != exitUsage || !strings.Contains(stderr, "query text is empty") {
			t.Errorf("empty %s query: exit %d, %q %q; want 2", mode, code, out, stderr)
		}
	}
}

// TestQueryWithAnotherModel: a vector query embedded by another model than
// the one the manifest says built the index (same dimensions) is refused
// as a configuration error naming both, instead of returning arbitrary
// nodes; sparse queries, which embed nothing, still run.
func TestQueryWithAnotherModel(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n", "instant.yaml": "embedder: {provider: instant}\n"})
	if out, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	if out, stderr, code := sluice(t, dir, "query", "pelicans"); code != exitOK || !strings.Contains(out, "a.md") {
		t.Errorf("query with the index's embedder: exit %d, %q %q", code, out, stderr)
	}
	out, stderr, code := sluice(t, dir, "query", "pelicans", "--config", "instant.yaml")
	if code != exitUsage || !strings.Contains(stderr, "was built with hash") || !strings.Contains(stderr, "instant") || out != "" {
		t.Errorf("query with another model: exit %d, %q %q; want 2 naming both embedders", code, out, stderr)
	}
	if out, stderr, code := sluice(t, dir, "query", "pelicans", "--mode", "sparse", "--config", "instant.yaml"); code != exitOK || !strings.Contains(out, "a.md") {
		t.Errorf("sparse query with another embedder configured: exit %d, %q %q; want results", code, out, stderr)
	}
}

// pageSpy is a local store that records the ids each GetNodes call asks
// for.
type pageSpy struct {
	*local.Store
	calls [][]string
}

func (s *pageSpy) GetNodes(ctx context.Context, ids []string, f *sink.MetadataFilters, limit int) ([]sink.Node, error) {
	s.calls = append(s.calls, ids)
	return s.Store.GetNodes(ctx, ids, f, limit)
}

// TestGetAllPageByPage: get without ids or a document lists the nodes of a
// store that can list them a page at a time, never asking for all of them
// at once (an index of any size is never held whole), and stops at
// --limit.
func TestGetAllPageByPage(t *testing.T) {
	store, err := local.Open(t.Context(), local.Config{Path: filepath.Join(t.TempDir(), "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const n = 2500
	nodes := make([]sink.Node, n)
	for i := range nodes {
		nodes[i] = sink.Node{ID: fmt.Sprintf("n%04d", i), RefDocID: fmt.Sprintf("d%02d.md", i%40), Text: "A note about herons.", Embedding: []float32{1, float32(i)}}
	}
	if _, err := store.Add(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 7} {
		spy := &pageSpy{Store: store}
		var seen []string
		g := getter{store: spy, limit: limit, print: func(_ int, n sink.Node) error {
			seen = append(seen, n.ID)
			return nil
		}}
		if err := g.all(t.Context()); err != nil {
			t.Fatal(err)
		}
		want := n
		if limit > 0 {
			want = limit
		}
		if len(seen) != want || len(slices.Compact(slices.Sorted(slices.Values(seen)))) != want {
			t.Errorf("limit %d: printed %d distinct of %d nodes, want %d", limit, len(slices.Compact(slices.Sorted(slices.Values(seen)))), len(seen), want)
		}
		for _, ids := range spy.calls {
			if len(ids) == 0 || len(ids) >= n {
				t.Errorf("limit %d: GetNodes asked for %d ids, want a page (never all at once)", limit, len(ids))
			}
		}
		if limit > 0 && len(spy.calls) != 1 {
			t.Errorf("limit %d: %d pages read, want 1", limit, len(spy.calls))
		}
	}
}

// TestGetWithHiddenDocIDField: on a Cloud AI Search index whose doc_id
// field is in hiddenFieldKeys, `get` without --ids lists the nodes, as
// the store's GetNodes (the seed's getNodes(undefined, filters, limit))
// reads them; it used to fail, since the listing it pages with reads the
// doc_id field.
func TestGetWithHiddenDocIDField(t *testing.T) {
	_, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha document about pelicans.\n",
		"docs/b.md": "Bravo document about herons.\n",
		"sluice.yaml": `embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch:
    endpoint: ` + endpoint + `
    indexName: hidden-doc-id
    indexManagement: CreateIfNotExists
    embeddingDimensionality: 16
    hiddenFieldKeys: [doc_id]
    filterableMetadataFieldKeys: [file_name]
`,
	})
	if out, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	tests := []struct {
		args []string
		want []string // doc_id of the nodes, sorted
	}{
		{nil, []string{"a.md", "b.md"}},
		{[]string{"--limit", "1"}, nil}, // one node, either
		{[]string{"--filter", "file_name=b.md"}, []string{"b.md"}},
	}
	for _, tt := range tests {
		out, stderr, code := sluice(t, dir, append([]string{"get", "--json"}, tt.args...)...)
		var docs []string
		for _, n := range jsonLines(t, out) {
			docs = append(docs, fmt.Sprint(n["doc_id"]))
		}
		slices.Sort(docs)
		if code != exitOK || (tt.want != nil && !slices.Equal(docs, tt.want)) || (tt.want == nil && len(docs) != 1) {
			t.Errorf("get %v: exit %d, stderr %q, documents %v; want %v", tt.args, code, stderr, docs, tt.want)
		}
	}
}

// searchCounter is a writer for `get --json`'s output that records how
// many docs/search requests the server had answered when the first and
// the last node of each thousand were printed (one JSON line per Write):
// as that number never decreases, these bound it for every node.
type searchCounter struct {
	srv      *searchtest.Server
	from     int         // the length of the server's request log when get started
	printed  int         // nodes printed
	searches map[int]int // per node printed (from 0), at 1000k and 1000k+999
	out      strings.Builder
}

func (w *searchCounter) Write(p []byte) (int, error) {
	for range strings.Count(string(p), "\n") {
		if k := w.printed; k%1000 == 0 || k%1000 == 999 {
			w.searches[k] = w.searchesSoFar()
		}
		w.printed++
	}
	return w.out.Write(p)
}

// searchesSoFar counts the docs/search requests since w.from.
func (w *searchCounter) searchesSoFar() int {
	n := 0
	for _, r := range w.srv.Requests()[w.from:] {
		if strings.HasSuffix(r.Path, "/docs/search") {
			n++
		}
	}
	return n
}

// TestGetWithHiddenDocIDFieldPageByPage: on a Cloud AI Search index whose
// doc_id field is in hiddenFieldKeys, `get` without --ids reads the nodes
// it prints a page of 1000 at a time, each page printed before the next
// is asked for (it used to read every matching node before printing the
// first), and prints what it prints when doc_id can be read: the same
// nodes in the same order (key order), with --limit and --filter too.
func TestGetWithHiddenDocIDFieldPageByPage(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2500 nodes")
	}
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	// The index is created with doc_id retrievable, so that the same
	// nodes can be listed with doc_id read and with it hidden.
	cfg := cloudsearch.Config{Endpoint: endpoint, IndexName: "hidden-paged", IndexManagement: cloudsearch.CreateIfNotExists,
		EmbeddingDimensionality: 4, FilterableMetadataFieldKeys: cloudsearch.FilterableFields{{Key: "file_name"}}}
	store, err := cloudsearch.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []sink.Node
	for d, count := range []int{1200, 325, 325, 325, 325} {
		ref := fmt.Sprintf("d%d.md", d)
		for i := range count {
			text := fmt.Sprintf("Note %d of %s about herons.", i, ref)
			nodes = append(nodes, sink.Node{ID: sink.NodeID(ref, text, 0), RefDocID: ref, Text: text,
				Embedding: []float32{1, float32(i), 0, 1}, Metadata: map[string]any{"file_name": ref}})
		}
	}
	if _, err := store.Add(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	store.Close()
	config := `embedder: {dimensions: 4}
sink:
  type: cloudsearch
  cloudsearch:
    endpoint: ` + endpoint + `
    indexName: hidden-paged
    indexManagement: ValidateIndex
    embeddingDimensionality: 4
    filterableMetadataFieldKeys: [file_name]
`
	readable, hidden := t.TempDir(), t.TempDir()
	writeFiles(t, readable, map[string]string{"sluice.yaml": config})
	writeFiles(t, hidden, map[string]string{"sluice.yaml": config + "    hiddenFieldKeys: [doc_id]\n"})

	tests := []struct {
		args []string
		want int
	}{
		{nil, 2500},
		{[]string{"--limit", "1500"}, 1500},
		{[]string{"--filter", "file_name=d0.md"}, 1200},
		{[]string{"--filter", "file_name=d1.md"}, 325},
	}
	for _, tt := range tests {
		for _, format := range [][]string{{"--json"}, nil} {
			args := append(append([]string{"get"}, format...), tt.args...)
			want, stderr, code := sluice(t, readable, args...)
			if code != exitOK {
				t.Fatalf("%v with doc_id readable: exit %d, %s", args, code, stderr)
			}
			t.Chdir(hidden)
			w := &searchCounter{srv: srv, from: len(srv.Requests()), searches: map[int]int{}}
			var errb strings.Builder
			if code := execute(context.Background(), args, w, &errb); code != exitOK {
				t.Fatalf("%v with doc_id hidden: exit %d, %s", args, code, errb.String())
			}
			if got := w.out.String(); got != want {
				t.Errorf("%v with doc_id hidden printed\n%.300s…\nwant what it prints with doc_id readable:\n%.300s…", args, got, want)
			}
			if format == nil {
				continue
			}
			if w.printed != tt.want {
				t.Fatalf("%v with doc_id hidden printed %d nodes, want %d", args, w.printed, tt.want)
			}
			// Node k (from 0) is printed once page k/1000 is read, and
			// before the next page is asked for: at most 1000 nodes are
			// held, however many match.
			for k, n := range w.searches {
				if page := k/1000 + 1; n != page {
					t.Errorf("%v with doc_id hidden: node %d printed after %d search requests, want %d (a page of 1000 nodes a request, each printed before the next is read)", args, k+1, n, page)
				}
			}
			if n, pages := w.searchesSoFar(), (tt.want+999)/1000; n != pages {
				t.Errorf("%v with doc_id hidden: %d search requests for %d nodes, want %d", args, n, tt.want, pages)
			}
		}
	}
}
