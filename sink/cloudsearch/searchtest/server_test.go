package searchtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestIndexLifecycle(t *testing.T) {
	s, url := startWithIndex(t, Options{})
	st, b := call(t, url, http.MethodGet, "/indexes/sluice-test", nil)
	if st != http.StatusOK {
		t.Fatalf("get: %d %s", st, b)
	}
	var def map[string]any
	if err := json.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	fields := def["fields"].([]any)
	chunk := fields[1].(map[string]any)
	if chunk["retrievable"] != true || chunk["sortable"] != true || chunk["filterable"] != false {
		t.Errorf("defaults not filled: %v", chunk)
	}
	if raw, ok := s.Index("sluice-test"); !ok || !bytes.Contains(raw, []byte(`"sluice-test"`)) {
		t.Errorf("Index() = %s, %v", raw, ok)
	}
	st, b = call(t, url, http.MethodGet, "/indexes", nil)
	if st != http.StatusOK || !bytes.Contains(b, []byte(`"value":[{`)) {
		t.Errorf("list: %d %s", st, b)
	}
	if st, b = call(t, url, http.MethodPost, "/indexes", readTestdata(t, "index.json")); st != http.StatusConflict {
		t.Errorf("create twice: %d %s", st, b)
	}
	if st, _ = call(t, url, http.MethodPut, "/indexes/sluice-test", readTestdata(t, "index.json")); st != http.StatusOK {
		t.Errorf("put again: %d", st)
	}
	if st, _ = call(t, url, http.MethodDelete, "/indexes('sluice-test')", nil); st != http.StatusNoContent {
		t.Errorf("delete: %d", st)
	}
	if st, b = call(t, url, http.MethodGet, "/indexes/sluice-test/docs/$count", nil); st != http.StatusNotFound || !strings.Contains(string(b), `"code":"ResourceNotFound"`) {
		t.Errorf("count after delete: %d %s", st, b)
	}
}

func TestCountHasBOM(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	st, b := call(t, url, http.MethodGet, "/indexes/sluice-test/docs/$count", nil)
	if st != http.StatusOK || string(b) != "\ufeff4" {
		t.Fatalf("count = %d %q, want 200 \"\\ufeff4\"", st, b)
	}
}

func TestLookupHidesNonRetrievable(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	for _, path := range []string{"/indexes/sluice-test/docs/a1", "/indexes('sluice-test')/docs('a1')"} {
		st, b := call(t, url, http.MethodGet, path, nil)
		if st != http.StatusOK {
			t.Fatalf("%s: %d %s", path, st, b)
		}
		var d map[string]any
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if d["id"] != "a1" || d["author"] != "ann" {
			t.Errorf("%s: got %v", path, d)
		}
		if _, ok := d["secret"]; ok {
			t.Errorf("%s: non-retrievable field returned", path)
		}
	}
	if st, _ := call(t, url, http.MethodGet, "/indexes/sluice-test/docs/zz", nil); st != http.StatusNotFound {
		t.Errorf("missing doc: %d", st)
	}
}

func TestSearchModes(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	tests := []struct {
		name string
		req  map[string]any
		want []string
	}{
		{"vector cosine", map[string]any{"vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{1, 0, 0}, "k": 2, "fields": "embedding"}}}, []string{"a1", "c3"}},
		{"text bm25", map[string]any{"search": "fox"}, []string{"a1", "c3"}},
		{"all docs", map[string]any{"search": "*"}, []string{"a1", "b2", "c3", "d4"}},
		{"hybrid", map[string]any{"search": "river", "vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{0, 1, 0}, "k": 1, "fields": "embedding"}}}, []string{"b2"}},
		{"paging", map[string]any{"search": "*", "skip": 1, "top": 2}, []string{"b2", "c3"}},
		{"filter eq", map[string]any{"search": "*", "filter": "author eq 'bob'"}, []string{"b2", "d4"}},
		{"filter quote", map[string]any{"search": "*", "filter": "author eq 'o''neil'"}, []string{"c3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := searchKeys(t, url, tt.req)
			if !slices.Equal(got, tt.want) {
				t.Errorf("keys = %v, want %v", got, tt.want)
			}
		})
	}
}
