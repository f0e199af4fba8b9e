package cloudsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// specDir is the official 2024-07-01 swagger, beside the repository.
const specDir = "../../../shared/azure-search-spec/2024-07-01"

// noSpec as Options.SpecDir turns schema validation off, for tests whose
// subject is volume rather than the contract.
const noSpec = "-"

const testKey = "test-admin-key-0123456789"

// haveSpec reports whether the official swagger is at specDir. Under CI
// (the CI variable set), which always has it, a missing spec fails the
// test rather than letting it run unchecked.
func haveSpec(t testing.TB) bool {
	t.Helper()
	var err error
	for _, f := range []string{"searchindex.json", "searchservice.json"} {
		if _, err = os.Stat(specDir + "/" + f); err != nil {
			break
		}
	}
	if err != nil && testenv.InCI() {
		t.Fatalf("official swagger not found at %s, and CI is set: CI must check out shared/ beside the repository: %v", specDir, err)
	}
	return err == nil
}

// specOrNone returns specDir when the official swagger is there, for the
// test server to validate request bodies against, and otherwise "": the
// test then runs without schema validation (outside CI; see haveSpec).
func specOrNone(t testing.TB) string {
	t.Helper()
	if haveSpec(t) {
		return specDir
	}
	return ""
}

// specOrSkip returns specDir for a test whose subject is the official
// schema, and skips the test when the swagger is missing (outside CI;
// see haveSpec).
func specOrSkip(t testing.TB) string {
	t.Helper()
	if !haveSpec(t) {
		t.Skipf("official swagger not found at %s (clone shared/ beside the repository)", specDir)
	}
	return specDir
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// testClient returns an HTTP client whose idle connections are closed at
// cleanup, so the goroutine-leak check sees no keep-alive goroutines.
func testClient(t testing.TB) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// testHTTP is the option sending requests with testClient.
func testHTTP(t testing.TB) Option { return WithHTTPClient(testClient(t)) }

// postJSON posts body to path of the test server as another client
// (LlamaIndex, say) would, and returns the status and body of the answer.
func postJSON(t *testing.T, url, path string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path+"?api-version="+DefaultAPIVersion, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("api-key", testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := testClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

const testDims = 8

func testConfig(endpoint string) Config {
	c := DefaultConfig()
	c.Endpoint = endpoint
	c.IndexName = "docs"
	c.EmbeddingDimensionality = testDims
	c.IndexManagement = CreateIfNotExists
	c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, {Key: "year", Type: Int32}, {Key: "tags", Type: StringCollection}}
	return c
}

// startStore runs a strict test server (schemas checked when the spec is
// present, see specOrNone) and a store on it. mutate adjusts the
// configuration.
func startStore(t testing.TB, opts searchtest.Options, mutate func(*Config), extra ...Option) (*Store, *searchtest.Server) {
	t.Helper()
	if opts.Key == "" && opts.BearerTokens == nil {
		opts.Key = testKey
	}
	switch opts.SpecDir {
	case "":
		opts.SpecDir = specOrNone(t)
	case noSpec:
		opts.SpecDir = ""
	}
	srv, url := searchtest.Start(t, opts)
	s, err := openStore(t, url, mutate, extra...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, srv
}

// openStore builds a store on the server at url from testConfig changed by
// mutate, with the test key in the environment and fast retries; the store
// is closed at cleanup.
func openStore(t testing.TB, url string, mutate func(*Config), extra ...Option) (*Store, error) {
	t.Helper()
	cfg := testConfig(url)
	if mutate != nil {
		mutate(&cfg)
	}
	all := append([]Option{testHTTP(t), WithGetenv(envOf(map[string]string{EnvKey: testKey})), WithRetryDelay(time.Millisecond)}, extra...)
	s, err := New(context.Background(), cfg, all...)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func vec(i int) []float32 {
	v := make([]float32, testDims)
	for j := range v {
		v[j] = float32(math.Sin(float64(i*testDims+j) + 1))
	}
	return v
}

func makeNodes(ref string, n int) []sink.Node {
	nodes := make([]sink.Node, n)
	for i := range nodes {
		text := fmt.Sprintf("chunk %d of %s about rivers", i, ref)
		nodes[i] = sink.Node{
			ID: sink.NodeID(ref, text, 0), RefDocID: ref, Text: text, Embedding: vec(i),
			Metadata:  map[string]any{"author": "Ada", "year": 2000 + i%3, "tags": []string{"water", fmt.Sprint("t", i%2)}, "file": ref},
			StartChar: i * 10, EndChar: i*10 + 9,
		}
	}
	return nodes
}

// assertNoClientErrors fails if any request the store sent was answered
// 400: with SpecDir set, that is a body the official schema rejects.
func assertNoClientErrors(t *testing.T, srv *searchtest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		if r.Status == http.StatusBadRequest {
			t.Errorf("%s %s answered 400 (schema or protocol violation): %.300s", r.Method, r.Path, r.Body)
		}
	}
}

func assertStored(t *testing.T, srv *searchtest.Server, nodes []sink.Node) {
	t.Helper()
	docs := srv.Documents("docs")
	have := map[string]int{}
	for _, d := range docs {
		have[d["id"].(string)]++
	}
	for _, n := range nodes {
		if have[n.ID] != 1 {
			t.Errorf("node %s stored %d times, want once", n.ID, have[n.ID])
		}
	}
	if len(docs) != len(nodes) {
		t.Errorf("%d documents stored, want %d", len(docs), len(nodes))
	}
}

func TestRoundTripContract(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := append(makeNodes("a.md", 5), makeNodes("b.md", 3)...)
	ids, err := s.Add(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(nodes) || ids[0] != nodes[0].ID {
		t.Errorf("Add returned %d ids, want %d in input order", len(ids), len(nodes))
	}
	assertStored(t, srv, nodes)

	n, err := s.Count(ctx)
	if err != nil || n != len(nodes) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(nodes))
	}
	got, err := s.GetNodes(ctx, []string{nodes[1].ID, nodes[6].ID, "missing"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]sink.Node{}
	for _, g := range got {
		byID[g.ID] = g
	}
	if len(got) != 2 {
		t.Fatalf("GetNodes by ids = %d nodes, want 2", len(got))
	}
	want := nodes[1]
	g := byID[want.ID]
	if g.Text != want.Text || g.RefDocID != want.RefDocID || g.StartChar != want.StartChar || g.EndChar != want.EndChar ||
		g.Metadata["author"] != "Ada" || g.Metadata["year"] != float64(2001) {
		t.Errorf("GetNodes node = %+v, want %+v", g, want)
	}
	filtered, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("file", "b.md")}}, 0)
	if err == nil {
		t.Errorf("filter on a key missing from filterableMetadataFieldKeys: got %d nodes, want an error", len(filtered))
	} else if !errors.Is(err, sink.ErrInvalidFilter) || !strings.Contains(err.Error(), `"file"`) {
		t.Errorf("err = %v, want sink.ErrInvalidFilter naming \"file\"", err)
	}
	year, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2000), in("tags", []string{"t0"})}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range year {
		md := map[string]any{"year": y.Metadata["year"], "tags": y.Metadata["tags"]}
		if !(&sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2000), in("tags", []string{"t0"})}}).Match(md) {
			t.Errorf("node %s does not match the filter: %v", y.ID, md)
		}
	}
	if len(year) == 0 {
		t.Error("filtered GetNodes found nothing")
	}
	if lim, _ := s.GetNodes(ctx, nil, nil, 3); len(lim) != 3 {
		t.Errorf("GetNodes limit 3 = %d nodes", len(lim))
	}
	res, err := s.Query(ctx, sink.Query{Embedding: nodes[2].Embedding, TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].ID != nodes[2].ID {
		t.Errorf("vector query best = %v, want %s first of 3", res, nodes[2].ID)
	}
	st, err := s.Stats(ctx)
	if err != nil || st.DocumentCount != int64(len(nodes)) {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	assertNoClientErrors(t, srv)
}

func TestQueryModes(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := makeNodes("a.md", 6)
	nodes[4].Text = "glaciers and ice sheets"
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		q          sink.Query
		wantFirst  string
		wantRerank bool
		wantVector bool
		wantSearch bool
	}{
		{"vector", sink.Query{Embedding: nodes[1].Embedding, TopK: 2}, nodes[1].ID, false, true, false},
		{"hybrid", sink.Query{Mode: sink.Hybrid, Embedding: nodes[4].Embedding, QueryStr: "glaciers", TopK: 2}, nodes[4].ID, false, true, true},
		{"semantic hybrid", sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[0].Embedding, QueryStr: "glaciers ice", TopK: 3}, nodes[4].ID, true, true, true},
		{"sparse", sink.Query{Mode: sink.Sparse, QueryStr: "glaciers", TopK: 2}, nodes[4].ID, false, false, true},
		{"filtered", sink.Query{Embedding: nodes[5].Embedding, TopK: 5, Filters: &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2002)}}}, nodes[5].ID, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			res, err := s.Query(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) == 0 || res[0].ID != tt.wantFirst {
				t.Fatalf("results %v, want %s first", ids(res), tt.wantFirst)
			}
			if (res[0].RerankerScore != nil) != tt.wantRerank {
				t.Errorf("RerankerScore = %v, want set: %v", res[0].RerankerScore, tt.wantRerank)
			}
			if len(res) > tt.q.K() {
				t.Errorf("%d results, want at most %d", len(res), tt.q.K())
			}
			reqs := srv.Requests()[before:]
			var body map[string]any
			if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
				t.Fatal(err)
			}
			if _, ok := body["vectorQueries"]; ok != tt.wantVector {
				t.Errorf("request has vectorQueries: %v, want %v", ok, tt.wantVector)
			}
			if _, ok := body["search"]; ok != tt.wantSearch {
				t.Errorf("request has search: %v, want %v", ok, tt.wantSearch)
			}
		})
	}
	for _, mode := range []sink.QueryMode{sink.Hybrid, sink.SemanticHybrid, sink.Sparse} {
		_, err := s.Query(ctx, sink.Query{Mode: mode, Embedding: nodes[0].Embedding})
		if !errors.Is(err, sink.ErrInvalidQuery) || !strings.Contains(err.Error(), "queryStr") {
			t.Errorf("%s without queryStr: err = %v, want sink.ErrInvalidQuery naming queryStr", mode, err)
		}
	}
	before := len(srv.Requests())
	_, err := s.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[0].Embedding, QueryStr: "ice", TopK: MaxSemanticResults + 1})
	if !errors.Is(err, sink.ErrInvalidQuery) || !strings.Contains(err.Error(), "at most 50 results") {
		t.Errorf("semantic hybrid with topK 51: err = %v, want sink.ErrInvalidQuery saying at most 50", err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("a refused query sent %d requests", n)
	}
	if _, err := s.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[0].Embedding, QueryStr: "ice", TopK: MaxSemanticResults}); err != nil {
		t.Errorf("semantic hybrid with topK 50: %v", err)
	}
	_, err = s.Query(ctx, sink.Query{Embedding: []float32{1, 2}})
	if !errors.Is(err, sink.ErrDimensionMismatch) {
		t.Errorf("short query vector: err = %v, want sink.ErrDimensionMismatch", err)
	}
	assertNoClientErrors(t, srv)
}

func ids(res []sink.ScoredNode) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.ID
	}
	return out
}

// TestQuoteInDocumentID is the O'Brien test: a reference document id and a
// metadata value with a quote can be filtered on and deleted.
func TestQuoteInDocumentID(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	obrien := makeNodes("O'Brien.md", 4)
	for i := range obrien {
		obrien[i].Metadata["author"] = "O'Brien"
	}
	other := makeNodes("other.md", 3)
	if _, err := s.Add(ctx, append(obrien, other...)); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", "O'Brien")}}, 0)
	if err != nil || len(got) != len(obrien) {
		t.Fatalf("filter author eq O'Brien: %d nodes, %v; want %d", len(got), err, len(obrien))
	}
	got, err = s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{"O'Brien", "Ada"})}}, 0)
	if err != nil || len(got) != len(obrien)+len(other) {
		t.Fatalf("filter author in (O'Brien, Ada): %d nodes, %v", len(got), err)
	}
	if err := s.Delete(ctx, "O'Brien.md"); err != nil {
		t.Fatal(err)
	}
	assertStored(t, srv, other)
	if err := s.Delete(ctx, "absent.md"); err != nil {
		t.Errorf("Delete of an absent document: %v", err)
	}
	assertNoClientErrors(t, srv)
}

func TestDeleteNodes(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := makeNodes("a.md", 5)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNodes(ctx, []string{nodes[0].ID, nodes[3].ID, nodes[0].ID, "unknown", "_bad key"}); err != nil {
		t.Fatal(err)
	}
	assertStored(t, srv, []sink.Node{nodes[1], nodes[2], nodes[4]})
}

// storeOfBigDoc starts a store holding 2100 nodes of one document
// "big.md", more than one page of the service's answers; the test is
// skipped with -short.
func storeOfBigDoc(t *testing.T) (*Store, *searchtest.Server, []sink.Node) {
	t.Helper()
	if testing.Short() {
		t.Skip("uploads 2100 nodes")
	}
	s, srv := startStore(t, searchtest.Options{SpecDir: noSpec}, nil)
	nodes := makeNodes("big.md", 2100)
	if _, err := s.Add(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	return s, srv, nodes
}

func TestGetNodesPagesPast1000(t *testing.T) {
	s, srv, nodes := storeOfBigDoc(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		ids   []string
		limit int
		want  int
	}{
		{"all", nil, 0, 2100},
		{"limit", nil, 1500, 1500},
		{"limit at page size", nil, 1000, 1000},
		{"ids", nodeIDs(nodes[100:1300]), 0, 1200},
		{"ids and limit", nodeIDs(nodes[:2050]), 2020, 2020},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GetNodes(ctx, tt.ids, nil, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, n := range got {
				seen[n.ID] = true
			}
			if len(got) != tt.want || len(seen) != tt.want {
				t.Errorf("got %d nodes (%d distinct), want %d", len(got), len(seen), tt.want)
			}
		})
	}
	if err := s.Delete(ctx, "big.md"); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Documents("docs")); n != 0 {
		t.Errorf("%d documents left after Delete, want 0", n)
	}
}

func nodeIDs(nodes []sink.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

func TestDimensionMismatchCaughtBeforeUpload(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	nodes := makeNodes("a.md", 3)
	nodes[1].Embedding = nodes[1].Embedding[:5]
	_, err := s.Add(context.Background(), nodes)
	var de *sink.DimensionError
	if !errors.As(err, &de) || de.Want != testDims || de.Got != 5 || !strings.Contains(err.Error(), "embeddingDimensionality") {
		t.Fatalf("err = %v, want *sink.DimensionError 8 vs 5", err)
	}
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/docs/index") {
			t.Errorf("a document was uploaded despite the mismatch")
		}
	}
}

// TestEmpty checks the pipeline's EmptyReporter capability: an index is
// empty until a node is added, and again once its nodes are deleted.
func TestEmpty(t *testing.T) {
	s, _ := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	check := func(want bool) {
		t.Helper()
		got, err := s.Empty(ctx)
		if err != nil || got != want {
			t.Fatalf("Empty() = %v, %v; want %v", got, err, want)
		}
	}
	check(true)
	nodes := makeNodes("a.md", 3)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	check(false)
	if err := s.Delete(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	check(true)
}

// TestExistingIDs finds exactly the stored ids among 2100 stored and 50
// unknown ones, and asks for the keys alone, at most 1000 ids a request.
func TestExistingIDs(t *testing.T) {
	s, srv, nodes := storeOfBigDoc(t)
	ctx := context.Background()
	ids := nodeIDs(nodes)
	for i := range 50 {
		ids = append(ids, fmt.Sprintf("unknown-%d", i))
	}
	ids = append(ids, ids[0]) // asked twice: looked up once
	before := len(srv.Requests())
	got, err := s.ExistingIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(nodes) {
		t.Errorf("ExistingIDs found %d ids, want %d", len(got), len(nodes))
	}
	for _, n := range nodes {
		if !got[n.ID] {
			t.Fatalf("stored node %s not found", n.ID)
		}
	}
	searches := 0
	for _, r := range srv.Requests()[before:] {
		var body struct {
			Select string `json:"select"`
			Filter string `json:"filter"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("%s %s: %v", r.Method, r.Path, err)
		}
		searches++
		if body.Select != "id" {
			t.Errorf("select %q, want the key alone", body.Select)
		}
		list, _, _ := strings.Cut(strings.TrimPrefix(body.Filter, "search.in(id, '"), "'")
		if n := strings.Count(list, ",") + 1; n > 1000 || strings.Contains(body.Filter, " gt ") {
			t.Errorf("a filter of %d ids, or a second page: %.100s", n, body.Filter)
		}
	}
	if searches != 3 { // 2150 distinct ids: 1000 + 1000 + 150
		t.Errorf("%d search requests, want 3", searches)
	}
	if got, err := s.ExistingIDs(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("ExistingIDs(nil) = %v, %v; want an empty set", got, err)
	}
}

// TestGetNodesKeyOrder checks the order GetNodes documents on an index
// Sluice creates: by node id, whatever the order of writing, of the ids
// asked for or of the documents, so that a limit keeps the smallest ids.
func TestGetNodesKeyOrder(t *testing.T) {
	s, _ := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := append(makeNodes("b.md", 4), makeNodes("a.md", 4)...)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	sorted := slices.Sorted(slices.Values(ids))
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	tests := []struct {
		name  string
		ids   []string
		limit int
		want  []string
	}{
		{"all", nil, 0, sorted},
		{"limit", nil, 3, sorted[:3]},
		{"ids in reverse", reversed, 0, sorted},
		{"ids in reverse with a limit", reversed, 2, sorted[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GetNodes(ctx, tt.ids, nil, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			gotIDs := make([]string, len(got))
			for i, n := range got {
				gotIDs[i] = n.ID
			}
			if !slices.Equal(gotIDs, tt.want) {
				t.Errorf("GetNodes ids = %v\nwant %v", gotIDs, tt.want)
			}
		})
	}
}
