package searchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

func TestSearchScores(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	cosC3 := 0.9 / math.Sqrt(0.82)
	tests := []struct {
		name  string
		req   map[string]any
		keys  []string
		score []float64
	}{
		{"cosine is 1/(1+distance)",
			map[string]any{"vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{1, 0, 0}, "k": 2, "fields": "embedding"}}},
			[]string{"a1", "c3"}, []float64{1, 1 / (2 - cosC3)}},
		{"rrf 1/(60+rank)",
			map[string]any{"search": "river", "vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{0, 1, 0}, "k": 2, "fields": "embedding"}}},
			[]string{"b2", "c3"}, []float64{2.0 / 61, 1.0 / 62}},
		{"rrf weight",
			map[string]any{"search": "river", "vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{0, 1, 0}, "k": 1, "fields": "embedding", "weight": 2}}},
			[]string{"b2"}, []float64{1.0/61 + 2.0/61}},
		{"prefilter keeps k",
			map[string]any{"filter": "author eq 'bob'", "vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{1, 0, 0}, "k": 2, "fields": "embedding"}}},
			[]string{"b2", "d4"}, []float64{0.5, 0.5}},
		{"postfilter drops",
			map[string]any{"filter": "author eq 'bob'", "vectorFilterMode": "postFilter", "vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{1, 0, 0}, "k": 3, "fields": "embedding"}}},
			[]string{"b2"}, []float64{0.5}},
		{"match all scores 1",
			map[string]any{"search": "*", "top": 1},
			[]string{"a1"}, []float64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, r := searchKeys(t, url, tt.req)
			if !slices.Equal(keys, tt.keys) {
				t.Fatalf("keys %v, want %v", keys, tt.keys)
			}
			for i, v := range r.Value {
				if got := v["@search.score"].(float64); math.Abs(got-tt.score[i]) > 1e-9 {
					t.Errorf("%s score %v, want %v", keys[i], got, tt.score[i])
				}
			}
		})
	}
}

func TestSearchOptions(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	keys, r := searchKeys(t, url, map[string]any{"search": "*", "select": "id,author", "count": true, "top": 2})
	if r.Count == nil || *r.Count != 4 || len(keys) != 2 {
		t.Fatalf("count %v keys %v", r.Count, keys)
	}
	for _, v := range r.Value {
		if len(v) != 3 { // id, author, @search.score
			t.Errorf("select not applied: %v", v)
		}
	}
	_, r = searchKeys(t, url, map[string]any{"search": "fox"})
	for _, v := range r.Value {
		if _, ok := v["secret"]; ok {
			t.Errorf("non-retrievable field returned: %v", v)
		}
	}
	_, r = searchKeys(t, url, map[string]any{"search": "*", "filter": "tags/any(t: search.in(t, 'river,fox', ','))"})
	if len(r.Value) != 2 {
		t.Errorf("collection filter: %d results", len(r.Value))
	}
}

func TestSearchErrors(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	vq := func(n int) []any {
		return []any{map[string]any{"kind": "vector", "vector": make([]float32, n), "k": 1, "fields": "embedding"}}
	}
	tests := []struct {
		name string
		req  map[string]any
		want string
	}{
		{"filter not filterable", map[string]any{"filter": "chunk eq 'x'"}, "The field 'chunk' is not filterable"},
		{"filter unknown field", map[string]any{"filter": "nope eq 'x'"}, "Could not find a property named 'nope'"},
		{"vector dimensions", map[string]any{"vectorQueries": vq(2)}, "Expected: '3'. Actual: '2'"},
		{"vector field", map[string]any{"vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{1, 2, 3}, "fields": "chunk"}}}, "not a vector field"},
		{"skip too large", map[string]any{"skip": 100001}, `"code":"ParameterValueOutOfRange","message":"Value must be between 0 and 100000.\r\nParameter name: $skip"`},
		{"orderby not sortable", map[string]any{"search": "*", "orderby": "metadata asc"}, `Invalid expression: 'metadata' is not a sortable field. Only sortable fields can be used in $orderby.\r\nParameter name: $orderby`},
		{"orderby collection", map[string]any{"search": "*", "orderby": "tags"}, `'tags' is not a sortable field`},
		{"orderby unknown field", map[string]any{"search": "*", "orderby": "nope desc"}, `Could not find a property named 'nope' on type 'search.document'.\r\nParameter name: $orderby`},
		{"sessionId with underscore", map[string]any{"search": "*", "sessionId": "_s1"}, "cannot start with a '_' character"},
		{"select non-retrievable", map[string]any{"select": "id,secret"}, "not retrievable"},
		{"searchFields not searchable", map[string]any{"search": "x", "searchFields": "doc_id"}, "not searchable"},
		{"semantic unknown config", map[string]any{"search": "x", "queryType": "semantic", "semanticConfiguration": "nope"}, "Unknown semantic configuration 'nope'"},
		{"semantic without config", map[string]any{"search": "x", "queryType": "semantic"}, "requires semanticConfiguration"},
		{"full syntax", map[string]any{"search": "x", "queryType": "full"}, "not emulated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/search", tt.req)
			if st != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
				t.Errorf("got %d %s, want 400 containing %q", st, b, tt.want)
			}
		})
	}
}

// TestSemanticGolden pins the response shape of a semantic hybrid query.
func TestSemanticGolden(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	seed(t, url)
	req := map[string]any{
		"search": "lazy river", "queryType": "semantic", "semanticConfiguration": "default-semantic",
		"select": "id,chunk,doc_id", "count": true, "top": 3,
		"vectorQueries": []any{map[string]any{"kind": "vector", "vector": []float32{0, 0, 1}, "k": 2, "fields": "embedding"}},
	}
	st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/search", req)
	if st != http.StatusOK {
		t.Fatalf("%d %s", st, b)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join("testdata", "search_semantic.golden.json"), pretty.Bytes())
	var r searchResp
	_ = json.Unmarshal(b, &r)
	prev := 5.0
	for _, v := range r.Value {
		rs, ok := v["@search.rerankerScore"].(float64)
		if !ok || rs < 0 || rs > 4 || rs > prev {
			t.Errorf("rerankerScore %v out of [0,4] or out of order", v["@search.rerankerScore"])
		}
		prev = rs
	}
}

func TestPagingPastMaxPageSize(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	const n = 1200
	for start := 0; start < n; start += MaxBatchActions {
		end := min(start+MaxBatchActions, n)
		batch := batchOf(end-start, func(i int) map[string]any {
			return map[string]any{"id": fmt.Sprintf("k%05d", start+i), "embedding": []float32{1, float32(start + i), 0}}
		})
		if st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batch); st != http.StatusOK {
			t.Fatalf("upload: %d %s", st, b)
		}
	}
	req := map[string]any{"search": "*", "top": 1100, "skip": 50, "select": "id"}
	st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/search", req)
	if st != http.StatusOK {
		t.Fatalf("%d %s", st, b)
	}
	var r struct {
		Value []map[string]any `json:"value"`
		Next  map[string]any   `json:"@search.nextPageParameters"`
		Link  string           `json:"@odata.nextLink"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Value) != MaxPageSize || r.Value[0]["id"] != "k00050" || r.Link == "" {
		t.Fatalf("first page: %d results from %v, link %q", len(r.Value), r.Value[0]["id"], r.Link)
	}
	if r.Next["skip"] != float64(1050) || r.Next["top"] != float64(100) || r.Next["select"] != "id" {
		t.Fatalf("nextPageParameters = %v", r.Next)
	}
	keys, _ := searchKeys(t, url, r.Next)
	if len(keys) != 100 || keys[0] != "k01050" {
		t.Errorf("second page: %d results from %v", len(keys), keys[:1])
	}
	if _, r2 := searchKeys(t, url, map[string]any{"search": "*", "top": 1100, "skip": 200}); len(r2.Value) != 1000 {
		t.Errorf("last page: %d results", len(r2.Value))
	}
}

// TestReplicasOrderTies checks Options.Replicas: documents of equal score
// (every result of search=*) and ties of $orderby come in the order of the
// replica answering; a sessionId gets the same replica every time, and
// searches without one go round the replicas in turn, so that pages read
// with skip from different replicas can overlap, as on the service.
func TestReplicasOrderTies(t *testing.T) {
	const replicas, n = 3, 60
	_, url := startWithIndex(t, Options{Replicas: replicas})
	var docs []any
	var sorted []string
	for i := range n {
		id := fmt.Sprintf("k%02d", i)
		sorted = append(sorted, id)
		docs = append(docs, doc(id, "text", "ann", 2020+i%2, nil, []float32{1, 0, 0}))
	}
	if st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", map[string]any{"value": docs}); st != http.StatusOK {
		t.Fatalf("upload: %d %s", st, b)
	}
	order := func(req map[string]any) string {
		t.Helper()
		req["search"], req["top"] = "*", n
		keys, _ := searchKeys(t, url, req)
		if len(keys) != n {
			t.Fatalf("%d results, want %d", len(keys), n)
		}
		return strings.Join(keys, ",")
	}

	sticky := order(map[string]any{"sessionId": "scan-1"})
	for range 2 * replicas {
		if got := order(map[string]any{"sessionId": "scan-1"}); got != sticky {
			t.Fatalf("sessionId scan-1 answered in another order:\n%s\nthen\n%s", sticky, got)
		}
	}
	var turns []string
	for range replicas + 1 {
		turns = append(turns, order(map[string]any{}))
	}
	if turns[replicas] != turns[0] {
		t.Errorf("search %d without sessionId did not come back to the first replica's order", replicas+1)
	}
	distinct := map[string]bool{}
	for _, o := range turns[:replicas] {
		distinct[o] = true
	}
	if len(distinct) != replicas || !distinct[strings.Join(sorted, ",")] {
		t.Errorf("%d distinct orders over %d replicas, want %d, one of them by key", len(distinct), replicas, replicas)
	}
	for range replicas {
		keys := strings.Split(order(map[string]any{"orderby": "year desc"}), ",")
		for i, k := range keys {
			idx, _ := strconv.Atoi(strings.TrimPrefix(k, "k"))
			if want := 2021 - i/(n/2); 2020+idx%2 != want {
				t.Fatalf("orderby year desc: result %d is %s of year %d, want year %d first", i, k, 2020+idx%2, want)
			}
		}
	}
}
