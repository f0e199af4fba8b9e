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
