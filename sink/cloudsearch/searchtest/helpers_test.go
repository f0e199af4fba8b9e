package searchtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

const testKey = "test-admin-key"

// call sends one request with the test key and returns status and body.
func call(t *testing.T, base, method, path string, body any) (int, []byte) {
	t.Helper()
	return callWith(t, base, method, path+"?api-version="+APIVersion, body, map[string]string{"api-key": testKey})
}

func callWith(t *testing.T, base, method, pathQuery string, body any, hdr map[string]string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, base+pathQuery, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startWithIndex starts a server with the test index created.
func startWithIndex(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	if opts.Key == "" {
		opts.Key = testKey
	}
	s, url := Start(t, opts)
	if st, b := call(t, url, http.MethodPut, "/indexes('sluice-test')", readTestdata(t, "index.json")); st != http.StatusCreated {
		t.Fatalf("create index: %d %s", st, b)
	}
	return s, url
}

func doc(id, chunk, author string, year int, tags []string, emb []float32) map[string]any {
	return map[string]any{"@search.action": "upload", "id": id, "chunk": chunk, "author": author,
		"year": year, "tags": tags, "embedding": emb, "doc_id": "doc-" + author, "secret": "s-" + id,
		"metadata": `{"author":"` + author + `"}`}
}

// seed uploads a small fixed corpus.
func seed(t *testing.T, url string) {
	t.Helper()
	batch := map[string]any{"value": []any{
		doc("a1", "The quick brown fox jumps over the lazy dog", "ann", 2020, []string{"animals", "fox"}, []float32{1, 0, 0}),
		doc("b2", "A lazy afternoon by the river", "bob", 2021, []string{"river"}, []float32{0, 1, 0}),
		doc("c3", "Foxes and dogs are animals; the fox is quick", "o'neil", 2022, []string{"animals"}, []float32{0.9, 0.1, 0}),
		doc("d4", "Nothing related at all", "bob", 2020, nil, []float32{0, 0, 1}),
	}}
	if st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batch); st != http.StatusOK {
		t.Fatalf("seed: %d %s", st, b)
	}
}

type searchResp struct {
	Count *int             `json:"@odata.count"`
	Value []map[string]any `json:"value"`
}

func searchKeys(t *testing.T, url string, req map[string]any) ([]string, searchResp) {
	t.Helper()
	st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/search", req)
	if st != http.StatusOK {
		t.Fatalf("search %v: %d %s", req, st, b)
	}
	var r searchResp
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(r.Value))
	for i, v := range r.Value {
		keys[i], _ = v["id"].(string)
	}
	return keys, r
}
