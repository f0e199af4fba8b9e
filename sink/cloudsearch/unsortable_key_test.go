package cloudsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// startLlamaIndexPython runs the test server with the index LlamaIndex's
// Python store creates for testConfig's fields
// (testdata/llamaindex_python_index.json: its key is a SimpleField, whose
// sortable the Python SDK sends as false, and no field is sortable), and
// opens a store on it with the given index management. opts.SpecDir is
// noSpec or left empty (schemas checked when the spec is present).
func startLlamaIndexPython(t *testing.T, opts searchtest.Options, mode IndexManagement, extra ...Option) (*Store, *searchtest.Server) {
	t.Helper()
	opts.Key = testKey
	if opts.SpecDir == noSpec {
		opts.SpecDir = ""
	} else {
		opts.SpecDir = specOrNone(t)
	}
	srv, url := searchtest.Start(t, opts)
	raw, err := os.ReadFile("testdata/llamaindex_python_index.json")
	if err != nil {
		t.Fatal(err)
	}
	if st, b := postIndexJSON(t, url, raw); st != http.StatusCreated {
		t.Fatalf("create LlamaIndex's index: %d %s", st, b)
	}
	s, err := openStore(t, url, func(c *Config) { c.IndexManagement = mode }, extra...)
	if err != nil {
		t.Fatalf("New with %s on LlamaIndex's index = %v, want the index accepted", mode, err)
	}
	return s, srv
}

// startUnvalidated opens a store with indexManagement NoValidation on
// LlamaIndex's index (llama) or on Sluice's, created beforehand.
func startUnvalidated(t *testing.T, llama bool, extra ...Option) (*Store, *searchtest.Server) {
	t.Helper()
	if llama {
		return startLlamaIndexPython(t, searchtest.Options{}, NoValidation, extra...)
	}
	srv, url := startRulesServer(t)
	if st, b := postIndex(t, url, testConfig(url).Definition()); st != http.StatusCreated {
		t.Fatalf("create the index: %d %s", st, b)
	}
	s, err := openStore(t, url, func(c *Config) { c.IndexManagement = NoValidation }, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

// indexGets counts the GET requests for the index definition.
func indexGets(srv *searchtest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && r.Path == "/indexes/docs" {
			n++
		}
	}
	return n
}

// TestLlamaIndexPythonIndex opens the index LlamaIndex's Python store
// creates, whose key is not sortable, with every index management mode:
// the index is accepted, and documents written by Sluice and by
// LlamaIndex are read and deleted without $orderby (the service refuses
// it on a field that is not sortable). The store learns that the key is
// not sortable from one read of the definition: New's with ValidateIndex
// and CreateIfNotExists, the first read's with NoValidation.
func TestLlamaIndexPythonIndex(t *testing.T) {
	py := llamaIndexUpload(t, "llamaindex_python_doc.json")
	for _, mode := range []IndexManagement{ValidateIndex, CreateIfNotExists, NoValidation} {
		t.Run(string(mode), func(t *testing.T) {
			s, srv := startLlamaIndexPython(t, searchtest.Options{}, mode)
			ctx := context.Background()
			nodes := makeNodes("a.md", 5)
			if _, err := s.Add(ctx, nodes); err != nil {
				t.Fatal(err)
			}
			uploadRaw(t, s.Config().Endpoint, py)

			got, err := s.GetNodes(ctx, nil, nil, 0)
			if err != nil {
				t.Fatalf("GetNodes = %v", err)
			}
			if len(got) != 6 {
				t.Fatalf("GetNodes = %v, want the 5 nodes of a.md and LlamaIndex's", sortedIDs(got))
			}
			for _, n := range got {
				if n.ID == py["id"] && (n.RefDocID != "doc-rivers" || n.Text != py["chunk"]) {
					t.Errorf("LlamaIndex's node read back as %+v", n)
				}
			}
			year, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2001)}}, 0)
			if err != nil || len(year) != 2 {
				t.Errorf("GetNodes year 2001 = %v, %v; want nodes 1 and 4", sortedIDs(year), err)
			}
			if lim, err := s.GetNodes(ctx, nil, nil, 4); err != nil || len(lim) != 4 {
				t.Errorf("GetNodes limit 4 = %d nodes, %v", len(lim), err)
			}
			if err := s.Delete(ctx, "doc-rivers"); err != nil {
				t.Fatal(err)
			}
			assertStored(t, srv, nodes)
			if err := s.Delete(ctx, "a.md"); err != nil {
				t.Fatal(err)
			}
			if docs := srv.Documents("docs"); len(docs) != 0 {
				t.Errorf("%d documents left after deleting both documents", len(docs))
			}

			for i, b := range searchBodies(t, srv, 0) {
				if b["orderby"] != nil {
					t.Errorf("search %d orders by %v, on an index without a sortable field", i, b["orderby"])
				}
			}
			if n := indexGets(srv); n != 1 {
				t.Errorf("the index definition was read %d times, want once", n)
			}
			assertNoClientErrors(t, srv)
		})
	}
}

// TestKeyOrderLearntOnce starts concurrent reads on a store that has not
// validated the index (NoValidation): the definition is read once, and
// each read pages as the key allows, by skip or by key.
func TestKeyOrderLearntOnce(t *testing.T) {
	tests := []struct {
		name     string
		llama    bool // LlamaIndex's index; Sluice's otherwise
		wantSort bool
	}{
		{"LlamaIndex's index", true, false},
		{"Sluice's index", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := startUnvalidated(t, tt.llama)
			ctx := context.Background()
			if _, err := s.Add(ctx, makeNodes("a.md", 30)); err != nil {
				t.Fatal(err)
			}
			if n := indexGets(srv); n != 0 {
				t.Fatalf("the definition was read %d times before any read of documents", n)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 8 {
				wg.Go(func() {
					<-start
					if got, err := s.GetNodes(ctx, nil, nil, 0); err != nil || len(got) != 30 {
						t.Errorf("GetNodes = %d nodes, %v; want 30", len(got), err)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := indexGets(srv); n != 1 {
				t.Errorf("the definition was read %d times, want once", n)
			}
			for i, b := range searchBodies(t, srv, 0) {
				if sorted := b["orderby"] == "id asc"; sorted != tt.wantSort {
					t.Errorf("search %d orderby = %v, want by key: %v", i, b["orderby"], tt.wantSort)
				}
			}
			assertNoClientErrors(t, srv)
		})
	}
}

// TestLlamaIndexPythonIndexPaging reads past the 1000 results of one
// response on LlamaIndex's index, served by three replicas that each
// order documents of equal score their own way: pages go by skip, and
// the pages of one read carry one sessionId, so one replica answers them
// all and they line up. Delete reads every key before deleting any, since
// deleting would shift the pages.
func TestLlamaIndexPythonIndexPaging(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2500 nodes")
	}
	s, srv := startLlamaIndexPython(t, searchtest.Options{Replicas: 3}, ValidateIndex)
	ctx := context.Background()
	big, small := addBigAndSmall(t, s)
	tests := []struct {
		name     string
		ids      []string
		filters  *sink.MetadataFilters
		limit    int
		want     int
		searches int // one per page of 1000
		sessions int // one per scan: per group of 1000 ids
	}{
		{"all", nil, nil, 0, 2500, 3, 1},
		{"limit across pages", nil, nil, 2100, 2100, 3, 1},
		{"limit at page size", nil, nil, 1000, 1000, 1, 1},
		{"filter", nil, earlyYears, 0, 1534 + 134, 2, 1},
		{"ids and filter", nodeIDs(big[:2100]), earlyYears, 0, 1400, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bodies := getPagedNodes(t, s, srv, tt.ids, tt.filters, tt.limit, tt.want)
			if len(bodies) != tt.searches {
				t.Errorf("%d search requests, want %d (one per page)", len(bodies), tt.searches)
			}
			sessions := map[any]bool{}
			for i, b := range bodies {
				if b["orderby"] != nil {
					t.Errorf("request %d orders by %v", i, b["orderby"])
				}
				skip, _ := b["skip"].(float64)
				if int(skip)%maxPageSize != 0 || (skip == 0) != (b["count"] == true) {
					t.Errorf("request %d: skip %v, count %v; want pages of %d, the first counting the matches", i, b["skip"], b["count"], maxPageSize)
				}
				if id, _ := b["sessionId"].(string); !strings.HasPrefix(id, "sluice-") {
					t.Errorf("request %d sessionId = %v, want one per read", i, b["sessionId"])
				}
				sessions[b["sessionId"]] = true
			}
			if len(sessions) != tt.sessions {
				t.Errorf("%d sessionIds, want %d (one per read)", len(sessions), tt.sessions)
			}
		})
	}

	from := len(srv.Requests())
	if err := s.Delete(ctx, "big.md"); err != nil {
		t.Fatal(err)
	}
	assertStored(t, srv, small)
	if got := docsTrace(srv, from); !strings.HasPrefix(got, "search search search index") || strings.Contains(got, "index search") {
		t.Errorf("Delete sent %q; want every key read (3 pages) before any is deleted", got)
	}
	assertNoClientErrors(t, srv)
}

// TestScanLimitWithoutSortableKey lowers the largest skip to 1000, so
// that reads by skip reach 2000 documents: a read of more fails with a
// *ScanLimitError saying why and what to do, before reading or deleting
// anything; reads within the reach succeed.
func TestScanLimitWithoutSortableKey(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 2500 nodes")
	}
	s, srv := startLlamaIndexPython(t, searchtest.Options{}, ValidateIndex)
	s.maxSkip = 1000
	ctx := context.Background()
	big, _ := addBigAndSmall(t, s)
	year2000 := &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2000)}}
	tests := []struct {
		name    string
		read    func() (int, error)
		want    int // documents read
		matches int // the error's Matches; 0 for no error
	}{
		{"all", func() (int, error) { n, err := s.GetNodes(ctx, nil, nil, 0); return len(n), err }, 0, 2500},
		{"limit at the reach", func() (int, error) { n, err := s.GetNodes(ctx, nil, nil, 2000); return len(n), err }, 2000, 0},
		{"limit past the reach", func() (int, error) { n, err := s.GetNodes(ctx, nil, nil, 2001); return len(n), err }, 0, 2500},
		{"filter within the reach", func() (int, error) { n, err := s.GetNodes(ctx, nil, year2000, 0); return len(n), err }, 767 + 67, 0},
		{"delete past the reach", func() (int, error) { return 0, s.Delete(ctx, "big.md") }, 0, 2300},
		{"delete within the reach", func() (int, error) { return 0, s.Delete(ctx, "small.md") }, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := len(srv.Requests())
			n, err := tt.read()
			if tt.matches == 0 {
				if err != nil || n != tt.want {
					t.Fatalf("read %d documents, %v; want %d", n, err, tt.want)
				}
				return
			}
			var sle *ScanLimitError
			if !errors.As(err, &sle) || !errors.Is(err, ErrScanLimit) || !errors.Is(err, sink.ErrUnsupported) {
				t.Fatalf("err = %v, want a *ScanLimitError (ErrScanLimit, sink.ErrUnsupported)", err)
			}
			if sle.Matches != tt.matches || sle.Reach != 2000 || sle.KeyField != "id" || sle.Index != "docs" || sle.Passes != 0 {
				t.Errorf("error = %+v, want %d matches and a reach of 2000", *sle, tt.matches)
			}
			for _, w := range []string{`key field "id" is not sortable`, "sluice index delete", "sluice index create", "filters", "skip above 1000"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			if reqs := srv.Requests()[from:]; len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, "/docs/search") {
				t.Errorf("%d requests sent, want only the first page, which counts the matches", len(reqs))
			}
		})
	}
	assertStored(t, srv, big) // small.md deleted, big.md left whole
	assertNoClientErrors(t, srv)
}

// editTransport sends requests on with next, after edit has changed the
// JSON body of each docs/search request; when answer returns a response,
// that is the answer instead.
type editTransport struct {
	next   policy.Transporter
	edit   func(body map[string]any)
	answer func(*http.Request) *http.Response
}

func (e *editTransport) Do(req *http.Request) (*http.Response, error) {
	if e.answer != nil {
		if resp := e.answer(req); resp != nil {
			return resp, nil
		}
	}
	if e.edit != nil && req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/docs/search") {
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, err
		}
		e.edit(body)
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	}
	return e.next.Do(req)
}

// TestScanBySkipChecksPages has reads by skip meet pages that do not line
// up: replicas ordering ties differently, answering turn by turn because
// the sessionId is dropped on the way, make the first pass through the
// pages miss documents, which a second pass finds; a service that ignored
// skip would answer the first page every time, and the read fails after
// three passes rather than return part of the documents.
func TestScanBySkipChecksPages(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 1500 nodes")
	}
	tests := []struct {
		name     string
		drop     string // the search request property dropped on the way
		searches int
		passes   int // the error's Passes; 0 for success
	}{
		{"replicas without sessions", "sessionId", 4, 0},
		{"skip ignored", "skip", 6, maxScanPasses},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &editTransport{next: testClient(t), edit: func(b map[string]any) { delete(b, tt.drop) }}
			s, srv := startLlamaIndexPython(t, searchtest.Options{Replicas: 3, SpecDir: noSpec}, ValidateIndex, WithTransport(tr))
			ctx := context.Background()
			if _, err := s.Add(ctx, makeNodes("a.md", 1500)); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetNodes(ctx, nil, nil, 0)
			if n := len(searchBodies(t, srv, 0)); n != tt.searches {
				t.Errorf("%d search requests, want %d", n, tt.searches)
			}
			if tt.passes == 0 {
				seen := map[string]bool{}
				for _, n := range got {
					seen[n.ID] = true
				}
				if err != nil || len(got) != 1500 || len(seen) != 1500 {
					t.Fatalf("GetNodes = %d nodes (%d distinct), %v; want all 1500", len(got), len(seen), err)
				}
				return
			}
			var sle *ScanLimitError
			if !errors.As(err, &sle) || sle.Passes != tt.passes || sle.Matches != 1500 {
				t.Fatalf("GetNodes = %d nodes, %v; want a *ScanLimitError after %d passes", len(got), err, tt.passes)
			}
			if !strings.Contains(err.Error(), "different order") || !strings.Contains(err.Error(), "not sortable") {
				t.Errorf("message %q does not say the pages did not line up because the key is not sortable", err)
			}
		})
	}
}

// TestKeyOrderProbedWithoutIndexRead gives the store an identity that may
// query documents but not read index definitions (answered 403, as the
// Search Index Data Contributor role alone is): it learns whether the key
// is sortable from a search ordered by the key instead, once.
func TestKeyOrderProbedWithoutIndexRead(t *testing.T) {
	forbidden := func(req *http.Request) *http.Response {
		if req.Method != http.MethodGet || req.URL.Path != "/indexes/docs" {
			return nil
		}
		return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(`{"error":{"code":"","message":"Authorization failed."}}`))}
	}
	tests := []struct {
		name   string
		llama  bool
		probes string // the probe searches' statuses
		order  any    // the orderby of the reads
	}{
		{"LlamaIndex's index", true, "400 200", nil},
		{"Sluice's index", false, "200", "id asc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := WithTransport(&editTransport{next: testClient(t), answer: forbidden})
			s, srv := startUnvalidated(t, tt.llama, tr)
			if _, err := s.GetIndex(context.Background()); !errors.Is(err, ErrAuth) {
				t.Fatalf("GetIndex = %v, want the 403 of an identity without index read", err)
			}
			ctx := context.Background()
			nodes := makeNodes("a.md", 5)
			if _, err := s.Add(ctx, nodes); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if got, err := s.GetNodes(ctx, nil, nil, 0); err != nil || len(got) != 5 {
					t.Fatalf("GetNodes = %d nodes, %v; want 5", len(got), err)
				}
			}
			if err := s.Delete(ctx, "a.md"); err != nil {
				t.Fatal(err)
			}
			if docs := srv.Documents("docs"); len(docs) != 0 {
				t.Errorf("%d documents left after Delete", len(docs))
			}
			var probes []string
			reads := 0
			for _, r := range srv.Requests() {
				if !strings.HasSuffix(r.Path, "/docs/search") {
					continue
				}
				var b map[string]any
				if err := json.Unmarshal(r.Body, &b); err != nil {
					t.Fatal(err)
				}
				if b["top"] == float64(0) {
					probes = append(probes, strconv.Itoa(r.Status))
					continue
				}
				reads++
				if b["orderby"] != tt.order {
					t.Errorf("read orderby = %v, want %v", b["orderby"], tt.order)
				}
			}
			if got := strings.Join(probes, " "); got != tt.probes {
				t.Errorf("probe searches answered %q, want %q (once, not per read)", got, tt.probes)
			}
			if reads != 3 {
				t.Errorf("%d reads of documents, want 3 (two GetNodes, one Delete)", reads)
			}
		})
	}
}

// TestScanLimitErrorMessages checks what each kind of *ScanLimitError
// says: why the read failed, that the key is not sortable, and what to do.
func TestScanLimitErrorMessages(t *testing.T) {
	base := ScanLimitError{Op: "get nodes", Index: "docs", KeyField: "id", Reach: maxSkip + maxPageSize}
	tests := []struct {
		name  string
		edit  func(*ScanLimitError)
		words []string
	}{
		{"too many", func(e *ScanLimitError) { e.Matches = 250000 },
			[]string{"250000 documents match, more than the 101000", "skip above 100000"}},
		{"count unknown", func(e *ScanLimitError) { e.Matches = -1 },
			[]string{"more documents match than the 101000", "skip above 100000"}},
		{"pages not lined up", func(e *ScanLimitError) { e.Matches, e.Passes = 5000, 3 },
			[]string{"5000 documents match, but 3 passes", "different order"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			tt.edit(&e)
			var err error = &e
			if !errors.Is(err, ErrScanLimit) || !errors.Is(err, sink.ErrUnsupported) {
				t.Errorf("%v is not ErrScanLimit and sink.ErrUnsupported", err)
			}
			words := append(tt.words, `cloudsearch: get nodes: index "docs"`, `key field "id" is not sortable`, "sluice index create", "narrow the request")
			for _, w := range words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}
