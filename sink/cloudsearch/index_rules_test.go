package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// startRulesServer runs the strict test server, validating request bodies
// against the official definitions when they are present (the rules these
// tests are about do not depend on them).
func startRulesServer(t *testing.T) (*searchtest.Server, string) {
	t.Helper()
	return searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrNone(t)})
}

// TestDefinitionOnlyChunkSearchable checks that every string field but
// the chunk is created with searchable false, explicitly (the service's
// default for string fields is searchable).
func TestDefinitionOnlyChunkSearchable(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"default", func(*Config) {}},
		{"filterable fields of every type", func(c *Config) {
			c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, {Key: "tags", Type: "COLLECTION"}, {Key: "year", Type: "INT32"},
				{Key: "big", Type: "INT64"}, {Key: "score", Type: "DOUBLE"}, {Key: "ok", Type: "BOOLEAN"}, {Key: "when", Type: "DATETIME"}}
		}},
		{"hidden fields", func(c *Config) {
			c.HiddenFieldKeys = []string{"secret", "author", "metadata", "doc_id"}
			c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}}
		}},
		{"custom keys and analyzer", func(c *Config) {
			c.IDFieldKey, c.ChunkFieldKey, c.MetadataStringFieldKey, c.DocIDFieldKey = "key", "text", "meta", "ref"
			c.LanguageAnalyzer = "EnLucene"
			c.VectorAlgorithmType = HNSW
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t, tt.mutate)
			n := c.normalize()
			for _, f := range c.Definition().Fields {
				switch {
				case f.Name == n.ChunkFieldKey:
					if f.Searchable == nil || !*f.Searchable {
						t.Errorf("chunk field %s is not searchable", f.Name)
					}
				case f.Name == n.EmbeddingFieldKey:
					if f.Searchable == nil || !*f.Searchable {
						t.Errorf("vector field %s is not searchable", f.Name)
					}
				case f.Searchable == nil || *f.Searchable:
					t.Errorf("field %s (%s) has searchable %v, want false set explicitly", f.Name, f.Type, f.Searchable)
				}
			}
		})
	}
}

// TestSparseQueryMatchesOnlyChunk checks, against the server, that a text
// query matches the chunk only: words found only in the key, the doc_id, a
// filterable metadata field (string or collection) or a hidden field find
// nothing.
func TestSparseQueryMatchesOnlyChunk(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) {
		c.HiddenFieldKeys = []string{"secret"}
		c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, {Key: "tags", Type: StringCollection}, {Key: "secret"}}
	})
	ctx := context.Background()
	node := sink.Node{ID: "kumquat-1", RefDocID: "zanzibar.md", Text: "rivers and lakes", Embedding: vec(1),
		Metadata: map[string]any{"author": "Quixote", "tags": []string{"walrus"}, "secret": "marmalade"}}
	if _, err := s.Add(ctx, []sink.Node{node}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		word  string
		where string
		want  int
	}{
		{"rivers", "the chunk", 1},
		{"kumquat", "the key field", 0},
		{"zanzibar", "the doc_id field", 0},
		{"quixote", "a filterable string field", 0},
		{"walrus", "a filterable collection field", 0},
		{"marmalade", "a hidden filterable field", 0},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: tt.word, TopK: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != tt.want {
				t.Errorf("sparse query %q (a word of %s) found %d nodes %v, want %d", tt.word, tt.where, len(res), ids(res), tt.want)
			}
		})
	}
	assertNoClientErrors(t, srv)
}

// TestValidateIndexSettings creates an index with one configuration and
// opens it with another, through GET /indexes/NAME as the service answers
// it: every configured setting that the index contradicts is a
// *MismatchError naming it, and equivalent spellings are not.
func TestValidateIndexSettings(t *testing.T) {
	hnsw := func(comp Compression) func(*Config) {
		return func(c *Config) { c.VectorAlgorithmType, c.CompressionType = HNSW, comp }
	}
	analyzer := func(a string) func(*Config) { return func(c *Config) { c.LanguageAnalyzer = a } }
	fieldType := func(key string, ft FieldType) func(*Config) {
		return func(c *Config) {
			for i := range c.FilterableMetadataFieldKeys {
				if c.FilterableMetadataFieldKeys[i].Key == key {
					c.FilterableMetadataFieldKeys[i].Type = ft
				}
			}
		}
	}
	tests := []struct {
		name       string
		existing   func(*Config) // the configuration that created the index
		configured func(*Config) // the configuration that opens it
		setting    string        // "" means no mismatch
	}{
		{"same", nil, nil, ""},
		{"hnsw index, exhaustiveKnn configured", hnsw(NoCompression), nil, "vectorAlgorithmType"},
		{"exhaustiveKnn index, hnsw configured", nil, hnsw(NoCompression), "vectorAlgorithmType"},
		{"no compression in index", hnsw(NoCompression), hnsw(ScalarQuantization), "compressionType"},
		{"compression not configured", hnsw(BinaryQuantization), hnsw(NoCompression), "compressionType"},
		{"other compression", hnsw(BinaryQuantization), hnsw(ScalarQuantization), "compressionType"},
		{"same compression", hnsw(ScalarQuantization), hnsw("scalarquantization"), ""},
		{"analyzer configured, index has none", nil, analyzer("en.lucene"), "languageAnalyzer"},
		{"other analyzer", analyzer("en.lucene"), analyzer("fr.lucene"), "languageAnalyzer"},
		{"analyzer identifier of the index's", analyzer("en.lucene"), analyzer("EnLucene"), ""},
		{"unset analyzer, index has none", nil, nil, ""},
		{"unset analyzer, index has standard.lucene", analyzer("standard.lucene"), nil, ""},
		{"standard analyzer, index has none", nil, analyzer("StandardLucene"), ""},
		{"unset analyzer accepts the index's", analyzer("en.microsoft"), nil, ""},
		{"string field configured as INT32", fieldType("year", String), nil, "filterableMetadataFieldKeys.year"},
		{"collection field configured as string", nil, fieldType("tags", String), "filterableMetadataFieldKeys.tags"},
	}
	for _, tt := range tests {
		for _, mode := range []IndexManagement{ValidateIndex, CreateIfNotExists} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				srv, url := startRulesServer(t)
				if _, err := openStore(t, url, tt.existing); err != nil {
					t.Fatalf("create the index: %v", err)
				}
				_, err := openStore(t, url, func(c *Config) {
					if tt.configured != nil {
						tt.configured(c)
					}
					c.IndexManagement = mode
				})
				if tt.setting == "" {
					if err != nil {
						t.Fatalf("New = %v, want nil", err)
					}
					return
				}
				var me *MismatchError
				if !errors.As(err, &me) || !errors.Is(err, ErrIndexMismatch) {
					t.Fatalf("New = %v, want a *MismatchError", err)
				}
				if me.Setting != settingPrefix+tt.setting {
					t.Errorf("Setting = %s, want %s%s (%v)", me.Setting, settingPrefix, tt.setting, err)
				}
				if me.Want == "" || me.Got == "" || me.Want == me.Got || !strings.Contains(me.Hint, "sluice index delete") {
					t.Errorf("Want %q, Got %q, Hint %q: want both sides and a hint to recreate the index", me.Want, me.Got, me.Hint)
				}
				if strings.Contains(me.Hint, "sluice index create") && !strings.Contains(me.Hint, "with this command's --config if it has one") {
					t.Errorf("Hint %q: want the commands run with this command's --config, not another configuration's", me.Hint)
				}
				assertNoClientErrors(t, srv)
			})
		}
	}
}

// hookTransport calls after once a request got its answer, before the
// store sees it.
type hookTransport struct {
	next  policy.Transporter
	after func(*http.Request, *http.Response)
}

func (h *hookTransport) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.next.Do(req)
	if err == nil {
		h.after(req, resp)
	}
	return resp, err
}

// TestCreateIfNotExistsRace has another process create the index between
// the store's GET (404) and its POST (then 409): the store validates the
// index the other made instead of failing.
func TestCreateIfNotExistsRace(t *testing.T) {
	tests := []struct {
		name    string
		other   func(*Config) // the other process's configuration
		wantErr error
		setting string
	}{
		{"same definition", nil, nil, ""},
		{"other dimensions", func(c *Config) { c.EmbeddingDimensionality = 16 }, sink.ErrDimensionMismatch, "embeddingDimensionality"},
		{"other algorithm", func(c *Config) { c.VectorAlgorithmType = HNSW }, ErrIndexMismatch, "vectorAlgorithmType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := startRulesServer(t)
			other, err := openStore(t, url, func(c *Config) {
				c.IndexManagement = NoValidation
				if tt.other != nil {
					tt.other(c)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			hook := &hookTransport{next: testClient(t), after: func(req *http.Request, resp *http.Response) {
				if req.Method == http.MethodGet && req.URL.Path == "/indexes/docs" && resp.StatusCode == http.StatusNotFound {
					once.Do(func() {
						if err := other.CreateIndex(req.Context()); err != nil {
							t.Errorf("the other process's CreateIndex: %v", err)
						}
					})
				}
			}}
			_, err = openStore(t, url, nil, WithTransport(hook))
			if tt.wantErr == nil && err != nil {
				t.Fatalf("New = %v, want nil", err)
			}
			if tt.wantErr != nil {
				var me *MismatchError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &me) || me.Setting != settingPrefix+tt.setting {
					t.Fatalf("New = %v, want a *MismatchError on %s", err, tt.setting)
				}
			}
			var got []string
			for _, r := range srv.Requests() {
				if r.Path == "/indexes" || r.Path == "/indexes/docs" {
					got = append(got, fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status))
				}
			}
			want := []string{"GET /indexes/docs 404", "POST /indexes 201", "POST /indexes 409", "GET /indexes/docs 200"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("index requests:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestRetryServerError checks the retry of an HTTP 500: a transient one is
// retried until the request succeeds; a persistent one ends, after
// maxRetries retries, with an error that names the status and the setting.
func TestRetryServerError(t *testing.T) {
	const maxRetries = 3
	ops := []struct {
		name, path string
		run        func(context.Context, *Store) error
	}{
		{"upload", "/indexes/docs/docs/index", func(ctx context.Context, s *Store) error {
			_, err := s.Add(ctx, makeNodes("b.md", 2))
			return err
		}},
		{"query", "/indexes/docs/docs/search", func(ctx context.Context, s *Store) error {
			_, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "rivers", TopK: 3})
			return err
		}},
		{"count", "/indexes/docs/docs/$count", func(ctx context.Context, s *Store) error {
			_, err := s.Count(ctx)
			return err
		}},
	}
	tests := []struct {
		name     string
		failures int
		wantOK   bool
		tries    int
	}{
		{"transient", 2, true, 3},
		{"persistent", 100, false, maxRetries + 1},
	}
	for _, op := range ops {
		for _, tt := range tests {
			t.Run(op.name+"/"+tt.name, func(t *testing.T) {
				s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.MaxRetries = maxRetries })
				ctx := context.Background()
				if _, err := s.Add(ctx, makeNodes("a.md", 3)); err != nil {
					t.Fatal(err)
				}
				before := len(srv.Requests())
				srv.FailNext(tt.failures, http.StatusInternalServerError, 0)
				err := op.run(ctx, s)
				var statuses []int
				for _, r := range srv.Requests()[before:] {
					if r.Path == op.path {
						statuses = append(statuses, r.Status)
					}
				}
				if len(statuses) != tt.tries {
					t.Errorf("%d requests (statuses %v), want %d", len(statuses), statuses, tt.tries)
				}
				for i, st := range statuses {
					want := http.StatusInternalServerError
					if tt.wantOK && i == len(statuses)-1 {
						want = http.StatusOK
					}
					if st != want {
						t.Errorf("request %d answered %d, want %d", i, st, want)
					}
				}
				if tt.wantOK {
					if err != nil {
						t.Fatalf("err = %v, want success after the retries", err)
					}
					return
				}
				var se *ServiceError
				if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError || !errors.Is(err, ErrService) {
					t.Fatalf("err = %v, want a *ServiceError with status 500", err)
				}
				for _, w := range []string{"500 Internal Server Error", "sink.cloudsearch.maxRetries"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q lacks %q", err, w)
					}
				}
				if op.name == "upload" && !errors.Is(err, sink.ErrWrite) {
					t.Errorf("err = %v, want sink.ErrWrite too", err)
				}
			})
		}
	}
}

// TestLongValuesStored checks, against the server, that a chunk and a
// metadata string longer than the service's largest term (32,766 UTF-8
// bytes) are stored: only the key is sortable and no field facetable, so
// neither is indexed as one term. A filterable metadata field keeps the
// limit, and a node over it is reported alone.
func TestLongValuesStored(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	long := strings.Repeat("meander ", searchtest.MaxTermBytes/8+1)
	nodes := makeNodes("long.md", 3)
	nodes[0].Text = long
	nodes[1].Metadata["summary"] = long // only in the metadata string
	nodes[2].Metadata["author"] = long  // a filterable field: one term
	ids, err := s.Add(ctx, nodes)
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed[nodes[2].ID] == nil {
		t.Fatalf("Add = %v, want only node 2 (long filterable author) reported", err)
	}
	var de *DocumentError
	if !errors.As(we.Failed[nodes[2].ID], &de) || de.StatusCode != http.StatusBadRequest || !strings.Contains(de.Message, "term that is too large") ||
		!strings.Contains(de.Error(), "filterableMetadataFieldKeys") {
		t.Errorf("node 2: %v, want a 400 DocumentError about the term's size, with a hint", we.Failed[nodes[2].ID])
	}
	if len(ids) != 2 {
		t.Errorf("acknowledged %v, want nodes 0 and 1", ids)
	}
	got, err := s.GetNodes(ctx, []string{nodes[0].ID, nodes[1].ID}, nil, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("GetNodes = %d nodes, %v; want 2", len(got), err)
	}
	for _, n := range got {
		if n.ID == nodes[0].ID && n.Text != long {
			t.Errorf("chunk read back with %d bytes, want %d", len(n.Text), len(long))
		}
		if n.ID == nodes[1].ID && n.Metadata["summary"] != long {
			t.Errorf("metadata summary read back with %d bytes, want %d", len(fmt.Sprint(n.Metadata["summary"])), len(long))
		}
	}
	assertNoClientErrors(t, srv)
}

// TestValidateToleratesSortAndFacet checks that ValidateIndex accepts
// indexes whose fields differ only in sortable and facetable, as indexes
// made by older Sluice versions (attributes left to the service's
// defaults, filterable metadata facetable) and by LlamaIndex (false, the
// key included: SimpleField's sortable defaults to false in the Python
// SDK) do. A key that cannot be sorted is accepted too: documents are then
// read with skip (see TestLlamaIndexPythonIndex).
func TestValidateToleratesSortAndFacet(t *testing.T) {
	withAttrs := func(sortable, facetable func(Field) *bool) func(*IndexDefinition) {
		return func(d *IndexDefinition) {
			for i, f := range d.Fields {
				d.Fields[i].Sortable, d.Fields[i].Facetable = sortable(f), facetable(f)
			}
		}
	}
	unset := func(Field) *bool { return nil }
	tests := []struct {
		name    string
		edit    func(*IndexDefinition)
		setting string // "" means valid
	}{
		{"this version", func(*IndexDefinition) {}, ""},
		{"older Sluice: defaults", withAttrs(unset, func(f Field) *bool {
			if f.Filterable != nil && *f.Filterable && !f.Key && f.Name != "doc_id" {
				return ptr(true) // filterable metadata fields were created facetable
			}
			return nil
		}), ""},
		{"every field sortable and facetable where allowed", withAttrs(
			func(f Field) *bool { return ptr(!strings.HasPrefix(f.Type, "Collection(")) },
			func(f Field) *bool { return ptr(f.Type != "Collection(Edm.Single)") }), ""},
		{"all false but the key's default", withAttrs(
			func(f Field) *bool {
				if f.Key {
					return nil
				}
				return ptr(false)
			},
			func(Field) *bool { return ptr(false) }), ""},
		{"LlamaIndex Python: all false, key not sortable", withAttrs(func(Field) *bool { return ptr(false) }, func(Field) *bool { return ptr(false) }), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := startRulesServer(t)
			def := testConfig(url).Definition()
			tt.edit(&def)
			if st, b := postIndex(t, url, def); st != http.StatusCreated {
				t.Fatalf("create the index: %d %s", st, b)
			}
			_, err := openStore(t, url, func(c *Config) { c.IndexManagement = ValidateIndex })
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("New = %v, want the index accepted", err)
				}
				assertNoClientErrors(t, srv)
				return
			}
			var me *MismatchError
			if !errors.As(err, &me) || me.Setting != settingPrefix+tt.setting {
				t.Fatalf("New = %v, want a *MismatchError on %s", err, tt.setting)
			}
		})
	}
}

// TestCreateIndexRetriedAfterCreated has the service create the index and
// then answer 500, so the pipeline's retry of the POST is answered 409:
// the store validates the index it finds instead of failing, and fails
// only if that index is not the configured one. A 409 to a first attempt
// still means the index already existed.
func TestCreateIndexRetriedAfterCreated(t *testing.T) {
	indexRequests := func(srv *searchtest.Server) string {
		var got []string
		for _, r := range srv.Requests() {
			if r.Path == "/indexes" || r.Path == "/indexes/docs" {
				got = append(got, fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status))
			}
		}
		return strings.Join(got, "; ")
	}
	tests := []struct {
		name     string
		mode     IndexManagement // NoValidation: call CreateIndex after New
		existing bool            // the index exists before
		replace  func(*Config)   // another process replaces the index after the first POST
		wantErr  []error
		want     string // the index requests
	}{
		{"CreateIndex", NoValidation, false, nil, nil,
			"POST /indexes 500; POST /indexes 409; GET /indexes/docs 200"},
		{"CreateIfNotExists", CreateIfNotExists, false, nil, nil,
			"GET /indexes/docs 404; POST /indexes 500; POST /indexes 409; GET /indexes/docs 200"},
		{"CreateIndex of an existing index", NoValidation, true, nil, []error{ErrService},
			"POST /indexes 201; POST /indexes 409"},
		{"CreateIndex, another index found", NoValidation, false, func(c *Config) { c.EmbeddingDimensionality = 16 }, []error{ErrService, ErrIndexMismatch, sink.ErrDimensionMismatch},
			"POST /indexes 500; DELETE /indexes/docs 204; POST /indexes 201; POST /indexes 409; GET /indexes/docs 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := startRulesServer(t)
			other, err := openStore(t, url, func(c *Config) {
				c.IndexManagement = NoValidation
				if tt.replace != nil {
					tt.replace(c)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.existing {
				if err := other.CreateIndex(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			srv.FailAfterApply(1, http.StatusInternalServerError)
			var once sync.Once
			hook := &hookTransport{next: testClient(t), after: func(req *http.Request, resp *http.Response) {
				if tt.replace != nil && req.Method == http.MethodPost && req.URL.Path == "/indexes" && resp.StatusCode == http.StatusInternalServerError {
					once.Do(func() {
						if err := other.DeleteIndex(req.Context()); err != nil {
							t.Errorf("the other process's DeleteIndex: %v", err)
						}
						if err := other.CreateIndex(req.Context()); err != nil {
							t.Errorf("the other process's CreateIndex: %v", err)
						}
					})
				}
			}}
			s, err := openStore(t, url, func(c *Config) { c.IndexManagement = tt.mode }, WithTransport(hook))
			if err == nil && tt.mode == NoValidation {
				err = s.CreateIndex(context.Background())
			}
			if tt.wantErr == nil && err != nil {
				t.Fatalf("err = %v, want success", err)
			}
			for _, target := range tt.wantErr {
				if !errors.Is(err, target) {
					t.Errorf("err = %v, want errors.Is %v", err, target)
				}
			}
			if len(tt.wantErr) > 0 && statusOf(err) != http.StatusConflict {
				t.Errorf("err = %v, want the 409 in it", err)
			}
			if got := indexRequests(srv); got != tt.want {
				t.Errorf("index requests:\n got %s\nwant %s", got, tt.want)
			}
			if _, ok := srv.Index("docs"); !ok {
				t.Error("no index docs")
			}
		})
	}
}

// TestLongChunkInOlderIndex opens an index made by an older Sluice (sort
// and facet attributes left to the service, so the chunk is sortable and
// facetable): ValidateIndex accepts it, and a chunk longer than the
// largest term is reported alone, saying how to fix the index.
func TestLongChunkInOlderIndex(t *testing.T) {
	srv, url := startRulesServer(t)
	def := testConfig(url).Definition()
	for i := range def.Fields {
		if !def.Fields[i].Key {
			def.Fields[i].Sortable, def.Fields[i].Facetable = nil, nil
		}
	}
	if st, b := postIndex(t, url, def); st != http.StatusCreated {
		t.Fatalf("create the index: %d %s", st, b)
	}
	s, err := openStore(t, url, func(c *Config) { c.IndexManagement = ValidateIndex })
	if err != nil {
		t.Fatalf("New = %v, want the older index accepted", err)
	}
	nodes := makeNodes("long.md", 2)
	nodes[1].Text = strings.Repeat("meander ", searchtest.MaxTermBytes/8+1)
	_, err = s.Add(context.Background(), nodes)
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed[nodes[1].ID] == nil {
		t.Fatalf("Add = %v, want node 1 (long chunk) reported", err)
	}
	for _, w := range []string{"Field 'chunk' contains a term that is too large", "sortable or facetable", "sluice index delete", "splitter.chunkSize"} {
		if msg := we.Failed[nodes[1].ID].Error(); !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	assertNoClientErrors(t, srv)
}

// TestRetriedStatuses pins the statuses the package documentation says
// are retried (408, 429, 500, 502, 503, 504) and checks that others are
// not.
func TestRetriedStatuses(t *testing.T) {
	tests := []struct {
		status  int
		retried bool
	}{
		{http.StatusRequestTimeout, true},
		{http.StatusTooManyRequests, true},
		{http.StatusInternalServerError, true},
		{http.StatusBadGateway, true},
		{http.StatusServiceUnavailable, true},
		{http.StatusGatewayTimeout, true},
		{http.StatusNotImplemented, false},
		{http.StatusConflict, false},
		{http.StatusBadRequest, false},
	}
	s, srv := startStore(t, searchtest.Options{SpecDir: noSpec}, nil)
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			before := len(srv.Requests())
			srv.FailNext(1, tt.status, 0)
			_, err := s.Count(context.Background())
			if tt.retried != (err == nil) {
				t.Errorf("Count after one %d = %v, want retried: %v", tt.status, err, tt.retried)
			}
			want := 1
			if tt.retried {
				want = 2
			}
			if n := len(srv.Requests()) - before; n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
		})
	}
}

// TestHiddenChunkHasNoSemanticRanking hides the chunk field: the service's
// semantic ranker reads only searchable, retrievable fields, so the index
// is created without a semantic configuration (the strict server refuses
// one naming a non-retrievable field), and a semantic_hybrid query is
// refused before any request, naming hiddenFieldKeys, while hybrid works.
func TestHiddenChunkHasNoSemanticRanking(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.HiddenFieldKeys = []string{"chunk"} })
	ctx := context.Background()
	if def := s.cfg.Definition(); def.Semantic != nil {
		t.Errorf("definition has semantic configurations %+v, want none with the chunk hidden", def.Semantic.Configurations)
	}
	nodes := makeNodes("a.md", 2)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	_, err := s.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[0].Embedding, QueryStr: "rivers", TopK: 2})
	if !errors.Is(err, sink.ErrInvalidQuery) || !strings.Contains(err.Error(), "hiddenFieldKeys") {
		t.Errorf("semantic_hybrid with the chunk hidden: err = %v, want sink.ErrInvalidQuery naming hiddenFieldKeys", err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("the refused query sent %d requests", n)
	}
	res, err := s.Query(ctx, sink.Query{Mode: sink.Hybrid, Embedding: nodes[0].Embedding, QueryStr: "rivers", TopK: 2})
	if err != nil || len(res) != 2 {
		t.Errorf("hybrid with the chunk hidden: %d results, %v; want 2", len(res), err)
	}
	assertNoClientErrors(t, srv)
}
