package searchtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

func Example() {
	srv := searchtest.NewServer(searchtest.Options{Key: "admin-key"})
	ts := httptest.NewServer(srv) // in tests: srv, url := searchtest.Start(t, opts)
	defer ts.Close()

	send := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path+"?api-version="+searchtest.APIVersion, bytes.NewBufferString(body))
		req.Header.Set("api-key", "admin-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	st, _ := send(http.MethodPut, "/indexes('docs')", `{"name": "docs", "fields": [
		{"name": "id", "type": "Edm.String", "key": true},
		{"name": "chunk", "type": "Edm.String", "searchable": true},
		{"name": "embedding", "type": "Collection(Edm.Single)", "dimensions": 2, "vectorSearchProfile": "p"}],
		"vectorSearch": {"algorithms": [{"name": "a", "kind": "exhaustiveKnn"}], "profiles": [{"name": "p", "algorithm": "a"}]}}`)
	fmt.Println("create index:", st)

	st, _ = send(http.MethodPost, "/indexes/docs/docs/index", `{"value": [
		{"@search.action": "upload", "id": "n1", "chunk": "rivers and lakes", "embedding": [1, 0]},
		{"@search.action": "upload", "id": "_bad", "chunk": "keys cannot start with _", "embedding": [0, 1]}]}`)
	fmt.Println("upload:", st)

	_, body := send(http.MethodPost, "/indexes/docs/docs/search", `{"vectorQueries": [
		{"kind": "vector", "vector": [1, 0], "k": 1, "fields": "embedding"}], "select": "id"}`)
	var res struct {
		Value []map[string]any `json:"value"`
	}
	_ = json.Unmarshal([]byte(body), &res)
	fmt.Println("best match:", res.Value[0]["id"], res.Value[0]["@search.score"])

	_, count := send(http.MethodGet, "/indexes/docs/docs/$count", "")
	fmt.Printf("count: %q\n", count)
	// Output:
	// create index: 201
	// upload: 207
	// best match: n1 1
	// count: "\ufeff1"
}
