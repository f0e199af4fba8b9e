package searchtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAnalyzerNames checks that field analyzers must be REST values of the
// LexicalAnalyzerName enum (or the index's own analyzers), on searchable
// string fields only, and that a refusal has the service's error shape.
func TestAnalyzerNames(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	tests := []struct {
		name string
		edit func(def map[string]any)
		want string // "" means accepted
	}{
		{"predefined", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "en.lucene" }, ""},
		{"predefined with region", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "zh-Hans.microsoft" }, ""},
		{"keyword", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "keyword" }, ""},
		{"null", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = nil }, ""},
		{"custom analyzer of the index", func(d map[string]any) {
			d["analyzers"] = []any{map[string]any{"@odata.type": "#Microsoft.Azure.Search.CustomAnalyzer", "name": "my_analyzer", "tokenizer": "standard_v2"}}
			fieldAt(d, 1)["analyzer"] = "my_analyzer"
		}, ""},
		{"SDK identifier", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "EnLucene" }, "analyzer 'EnLucene'"},
		{"unknown", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "english" }, "analyzer 'english'"},
		{"wrong case", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "EN.LUCENE" }, "analyzer 'EN.LUCENE'"},
		{"undefined custom analyzer", func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "my_analyzer" }, "analyzer 'my_analyzer'"},
		{"unknown search analyzer", func(d map[string]any) {
			fieldAt(d, 1)["searchAnalyzer"] = "nope"
			fieldAt(d, 1)["indexAnalyzer"] = "standard.lucene"
		}, "searchAnalyzer 'nope'"},
		{"not searchable", func(d map[string]any) { fieldAt(d, 3)["analyzer"] = "en.lucene" }, "analyzers apply only to searchable fields"},
		{"not a string", func(d map[string]any) { fieldAt(d, 6)["analyzer"] = "en.lucene" }, "analyzers apply only to searchable fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", withIndex(t, tt.edit))
			if tt.want == "" {
				if st != http.StatusCreated {
					t.Fatalf("got %d %s, want 201", st, b)
				}
				call(t, url, http.MethodDelete, "/indexes/sluice-test", nil)
				return
			}
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if st != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Code == "" ||
				!strings.HasPrefix(e.Error.Message, "The request is invalid. Details: ") || !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("got %d %s, want 400 {\"error\": {\"code\", \"message\"}} containing %q", st, b, tt.want)
			}
		})
	}
}

// TestGetIndexAnswersLikeTheService checks the definition GET answers:
// every attribute filled in with the service's default (string fields
// searchable unless created otherwise) and unset analyzers null.
func TestGetIndexAnswersLikeTheService(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	def := withIndex(t, func(d map[string]any) { fieldAt(d, 1)["analyzer"] = "fr.lucene" })
	if st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", def); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	st, b := call(t, url, http.MethodGet, "/indexes/sluice-test", nil)
	if st != http.StatusOK {
		t.Fatalf("get: %d %s", st, b)
	}
	var got struct {
		Fields []map[string]any `json:"fields"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		field, attr string
		want        any
	}{
		{"id", "searchable", true}, // a string field left to the default
		{"id", "analyzer", nil},
		{"chunk", "analyzer", "fr.lucene"},
		{"chunk", "searchable", true},
		{"metadata", "searchable", false},
		{"doc_id", "searchable", false},
		{"year", "searchable", false},
		{"tags", "searchable", true},
		{"embedding", "dimensions", 3.0},
		{"embedding", "analyzer", nil},
		{"author", "dimensions", nil},
		{"author", "vectorSearchProfile", nil},
		{"author", "searchAnalyzer", nil},
		{"author", "indexAnalyzer", nil},
		{"author", "synonymMaps", []any{}},
	}
	byName := map[string]map[string]any{}
	for _, f := range got.Fields {
		byName[f["name"].(string)] = f
	}
	for _, tt := range tests {
		f := byName[tt.field]
		v, ok := f[tt.attr]
		if !ok {
			t.Errorf("field %s has no %s attribute", tt.field, tt.attr)
			continue
		}
		a, _ := json.Marshal(v)
		w, _ := json.Marshal(tt.want)
		if string(a) != string(w) {
			t.Errorf("field %s: %s = %s, want %s", tt.field, tt.attr, a, w)
		}
	}
}

// TestSearchOnlySearchableFields checks that search= matches only the
// searchable string fields: the fixture's doc_id is created searchable
// false, author is left searchable by default.
func TestSearchOnlySearchableFields(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	tests := []struct {
		word string
		want int
	}{
		{"river", 1},   // chunk of b2
		{"ann", 1},     // author of a1, searchable by default (and in doc_id doc-ann, which is not)
		{"doc", 0},     // only in doc_id values: searchable false
		{"animals", 2}, // chunk of c3, tags of a1: a searchable collection
	}
	for _, tt := range tests {
		keys, _ := searchKeys(t, url, map[string]any{"search": tt.word})
		if len(keys) != tt.want {
			t.Errorf("search %q: %v, want %d hits", tt.word, keys, tt.want)
		}
	}
}

// TestInjectedServerError checks FailNext with a 500: the service's error
// code, and no Retry-After unless one is given.
func TestInjectedServerError(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter time.Duration
		code       string
		header     string
	}{
		{"500", http.StatusInternalServerError, 0, "InternalServerError", ""},
		{"500 with hint", http.StatusInternalServerError, 2 * time.Second, "InternalServerError", "2"},
		{"503", http.StatusServiceUnavailable, time.Second, "ServiceUnavailable", "1"},
		{"502", http.StatusBadGateway, 0, "BadGateway", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := startWithIndex(t, Options{})
			s.FailNext(1, tt.status, tt.retryAfter)
			req, _ := http.NewRequest(http.MethodGet, url+"/indexes/sluice-test/docs/$count?api-version="+APIVersion, nil)
			req.Header.Set("api-key", testKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != tt.status || e.Error.Code != tt.code || resp.Header.Get("Retry-After") != tt.header {
				t.Errorf("got %d %q Retry-After %q, want %d %q %q", resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After"), tt.status, tt.code, tt.header)
			}
		})
	}
}

// TestTermTooLarge checks that a string longer than MaxTermBytes UTF-8
// bytes is refused, document by document in a 207 answer, in a field that
// is filterable, sortable or facetable (indexed whole, as one term), and
// accepted in a field that is only searchable.
func TestTermTooLarge(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	off := func(name string, attrs map[string]any) map[string]any {
		f := map[string]any{"name": name, "type": "Edm.String", "searchable": false, "filterable": false, "sortable": false, "facetable": false}
		for k, v := range attrs {
			f[k] = v
		}
		return f
	}
	def := map[string]any{"name": "terms", "fields": []any{
		map[string]any{"name": "id", "type": "Edm.String", "key": true},
		off("searchonly", map[string]any{"searchable": true}),
		off("filter", map[string]any{"filterable": true}),
		off("sort", map[string]any{"sortable": true}),
		off("facet", map[string]any{"facetable": true}),
		off("plain", nil),
		map[string]any{"name": "defaults", "type": "Edm.String"}, // sortable, facetable and filterable by default
		map[string]any{"name": "tags", "type": "Collection(Edm.String)", "filterable": true},
		map[string]any{"name": "searchtags", "type": "Collection(Edm.String)", "searchable": true, "filterable": false, "facetable": false},
	}}
	if st, b := call(t, url, http.MethodPost, "/indexes", def); st != http.StatusCreated {
		t.Fatalf("create index: %d %s", st, b)
	}
	limit := strings.Repeat("x", MaxTermBytes)
	over := limit + "x"
	overMultiByte := strings.Repeat("é", MaxTermBytes/2+1) // fewer characters than the limit, more bytes
	tests := []struct {
		key   string
		field string
		value any
		want  int // per-document status
	}{
		{"search-only", "searchonly", over, http.StatusCreated},
		{"plain", "plain", over, http.StatusCreated},
		{"search-only-collection", "searchtags", []string{"a", over}, http.StatusCreated},
		{"filterable-at-limit", "filter", limit, http.StatusCreated},
		{"filterable", "filter", over, http.StatusBadRequest},
		{"filterable-multibyte", "filter", overMultiByte, http.StatusBadRequest},
		{"sortable", "sort", over, http.StatusBadRequest},
		{"facetable", "facet", over, http.StatusBadRequest},
		{"defaults", "defaults", over, http.StatusBadRequest},
		{"collection-element", "tags", []string{"short", over}, http.StatusBadRequest},
	}
	var value []any
	for _, tt := range tests {
		value = append(value, map[string]any{"@search.action": "upload", "id": tt.key, tt.field: tt.value})
	}
	st, b := call(t, url, http.MethodPost, "/indexes/terms/docs/index", map[string]any{"value": value})
	if st != http.StatusMultiStatus {
		t.Fatalf("upload: %d %.300s, want 207", st, b)
	}
	var res struct {
		Value []struct {
			Key          string  `json:"key"`
			Status       bool    `json:"status"`
			ErrorMessage *string `json:"errorMessage"`
			StatusCode   int     `json:"statusCode"`
		} `json:"value"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Value) != len(tests) {
		t.Fatalf("%d results, want %d", len(res.Value), len(tests))
	}
	for i, tt := range tests {
		r := res.Value[i]
		if r.Key != tt.key || r.StatusCode != tt.want || r.Status != (tt.want == http.StatusCreated) {
			t.Errorf("%s: key %s status %v %d, want %d", tt.key, r.Key, r.Status, r.StatusCode, tt.want)
			continue
		}
		if tt.want == http.StatusBadRequest {
			want := "Field '" + tt.field + "' contains a term that is too large to process. The max length for UTF-8 encoded terms is 32766 bytes."
			if r.ErrorMessage == nil || !strings.HasPrefix(*r.ErrorMessage, want) {
				t.Errorf("%s: errorMessage %v, want it to start with %q", tt.key, r.ErrorMessage, want)
			}
		}
	}
	if st, b := call(t, url, http.MethodGet, "/indexes/terms/docs/$count", nil); st != http.StatusOK || !strings.HasSuffix(string(b), "4") {
		t.Errorf("count: %d %q, want the 4 accepted documents", st, b)
	}
}

// TestFailAfterApply checks that a write injected with FailAfterApply is
// carried out and answered with the failure, that reads and refused writes
// do not use the injection up, and that a retry meets what was done.
func TestFailAfterApply(t *testing.T) {
	s, url := Start(t, Options{Key: testKey})
	s.FailAfterApply(1, http.StatusInternalServerError)
	def := readTestdata(t, "index.json")
	steps := []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodGet, "/indexes/sluice-test", nil, http.StatusNotFound}, // a read: not injected
		{http.MethodPost, "/indexes", def, http.StatusInternalServerError}, // created, answer lost
		{http.MethodGet, "/indexes/sluice-test", nil, http.StatusOK},
		{http.MethodPost, "/indexes", def, http.StatusConflict}, // the retry
	}
	for i, st := range steps {
		if got, b := call(t, url, st.method, st.path, st.body); got != st.want {
			t.Fatalf("step %d: %s %s = %d %s, want %d", i, st.method, st.path, got, b, st.want)
		}
	}
	s.FailAfterApply(1, http.StatusServiceUnavailable)
	if got, _ := call(t, url, http.MethodPost, "/indexes", def); got != http.StatusConflict {
		t.Fatalf("a refused write = %d, want 409", got)
	}
	batch := map[string]any{"value": []any{map[string]any{"@search.action": "upload", "id": "a1", "chunk": "text"}}}
	if got, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batch); got != http.StatusServiceUnavailable {
		t.Fatalf("upload = %d %s, want the injected 503", got, b)
	}
	if docs := s.Documents("sluice-test"); len(docs) != 1 {
		t.Errorf("%d documents stored, want the upload applied", len(docs))
	}
	if got, _ := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batch); got != http.StatusOK {
		t.Errorf("upload after the injection = %d, want 200", got)
	}
}
