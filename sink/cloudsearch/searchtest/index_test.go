package searchtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// withIndex returns the test index definition changed by edit.
func withIndex(t *testing.T, edit func(def map[string]any)) map[string]any {
	t.Helper()
	var def map[string]any
	if err := json.Unmarshal(readTestdata(t, "index.json"), &def); err != nil {
		t.Fatal(err)
	}
	edit(def)
	return def
}

func fieldAt(def map[string]any, i int) map[string]any {
	return def["fields"].([]any)[i].(map[string]any)
}

func TestIndexDefinitionRules(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	vs := func(def map[string]any) map[string]any { return def["vectorSearch"].(map[string]any) }
	tests := []struct {
		name string
		edit func(def map[string]any)
		want string
	}{
		{"upper-case index name", func(d map[string]any) { d["name"] = "Sluice" }, "index name 'Sluice' is invalid"},
		{"double dash", func(d map[string]any) { d["name"] = "a--b" }, "index name 'a--b' is invalid"},
		{"field name", func(d map[string]any) { fieldAt(d, 1)["name"] = "1chunk" }, "field name '1chunk' is invalid"},
		{"duplicate field", func(d map[string]any) { fieldAt(d, 1)["name"] = "id" }, "'id' is used more than once"},
		{"two keys", func(d map[string]any) { fieldAt(d, 4)["key"] = true }, "both marked key"},
		{"no key", func(d map[string]any) { fieldAt(d, 0)["key"] = false }, "has no key field"},
		{"key type", func(d map[string]any) { fieldAt(d, 6)["key"] = true; fieldAt(d, 0)["key"] = false }, "must be of type Edm.String"},
		{"vector without dimensions", func(d map[string]any) { delete(fieldAt(d, 2), "dimensions") }, "must set dimensions"},
		{"filterable vector", func(d map[string]any) { fieldAt(d, 2)["filterable"] = true }, "cannot be filterable"},
		{"unknown profile", func(d map[string]any) { fieldAt(d, 2)["vectorSearchProfile"] = "nope" }, "vector profile 'nope'"},
		{"unknown type", func(d map[string]any) { fieldAt(d, 1)["type"] = "Edm.Text" }, "unknown type 'Edm.Text'"},
		{"unknown metric", func(d map[string]any) {
			vs(d)["algorithms"].([]any)[0].(map[string]any)["exhaustiveKnnParameters"] = map[string]any{"metric": "manhattan"}
		}, "unknown metric 'manhattan'"},
		{"hamming metric", func(d map[string]any) {
			vs(d)["algorithms"].([]any)[0].(map[string]any)["exhaustiveKnnParameters"] = map[string]any{"metric": "hamming"}
		}, "hamming metric applies only to packed binary"},
		{"retrievable but not stored", func(d map[string]any) { fieldAt(d, 2)["stored"] = false }, "not stored, so it cannot be retrievable"},
		{"compression with exhaustiveKnn", func(d map[string]any) {
			vs(d)["compressions"] = []any{map[string]any{"name": "sq", "kind": "scalarQuantization"}}
			vs(d)["profiles"].([]any)[0].(map[string]any)["compression"] = "sq"
		}, "compression (scalar or binary quantization) applies to hnsw algorithms only"},
		{"semantic field", func(d map[string]any) {
			cfg := d["semantic"].(map[string]any)["configurations"].([]any)[0].(map[string]any)
			cfg["prioritizedFields"] = map[string]any{"prioritizedContentFields": []any{map[string]any{"fieldName": "year"}}}
		}, "names field 'year'"},
		{"semantic field not retrievable", func(d map[string]any) { fieldAt(d, 1)["retrievable"] = false }, "must be searchable and retrievable"},
		{"semantic field not searchable", func(d map[string]any) { fieldAt(d, 1)["searchable"] = false }, "must be searchable and retrievable"},
		{"sortable collection", func(d map[string]any) { fieldAt(d, 7)["sortable"] = true }, "collections are not sortable"},
		{"name differs from URL", func(d map[string]any) { d["name"] = "other" }, "differs from the name 'sluice-test' in the URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", withIndex(t, tt.edit))
			if st != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
				t.Errorf("got %d %s, want 400 containing %q", st, b, tt.want)
			}
		})
	}
}

func TestIndexUpdate(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	added := withIndex(t, func(d map[string]any) {
		d["fields"] = append(d["fields"].([]any), map[string]any{"name": "extra", "type": "Edm.String"})
	})
	if st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", added); st != http.StatusOK {
		t.Errorf("adding a field: %d %s", st, b)
	}
	changed := withIndex(t, func(d map[string]any) { fieldAt(d, 5)["filterable"] = false })
	if st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", changed); st != http.StatusBadRequest || !strings.Contains(string(b), "existing field 'author' cannot be changed") {
		t.Errorf("changing a field: %d %s", st, b)
	}
}

func TestRequestsAreRecordedWithoutSecrets(t *testing.T) {
	s, url := startWithIndex(t, Options{BearerTokens: []string{"tok-1"}})
	callWith(t, url, http.MethodGet, "/indexes/sluice-test/docs/$count?api-version="+APIVersion, nil, map[string]string{"Authorization": "Bearer tok-1"})
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	if r := reqs[0]; r.Method != http.MethodPut || r.Status != http.StatusCreated || r.Auth != "api-key" || !strings.Contains(string(r.Body), `"sluice-test"`) {
		t.Errorf("first request %+v", r)
	}
	if r := reqs[1]; r.Path != "/indexes/sluice-test/docs/$count" || r.Query != "api-version="+APIVersion || r.Auth != "bearer" || r.Status != http.StatusOK {
		t.Errorf("second request %+v", r)
	}
}

func TestRecordLimit(t *testing.T) {
	tests := []struct {
		limit, want int
	}{{0, 5}, {2, 2}, {-1, 0}}
	for _, tt := range tests {
		s, url := Start(t, Options{RecordLimit: tt.limit})
		for range 5 {
			call(t, url, http.MethodGet, "/indexes", nil)
		}
		if got := len(s.Requests()); got != tt.want {
			t.Errorf("RecordLimit %d: %d requests kept, want %d", tt.limit, got, tt.want)
		}
	}
}
