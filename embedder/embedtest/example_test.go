package embedtest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// NewHandler is an http.Handler; serve it with any http.Server. Close it
// before shutting the server down so that stalls and latency end at once.
func ExampleNewHandler() {
	srv := embedtest.NewHandler(embedtest.Options{TPM: 1_000_000, Latency: time.Millisecond, Dimensions: 4})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()

	resp, err := http.Post(hs.URL+"/v1/embeddings", "application/json",
		strings.NewReader(`{"model":"any","input":["hello world"]}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	st := srv.Stats()
	fmt.Println(resp.StatusCode, resp.Header.Get("x-ratelimit-limit-tokens"), st.OK, st.TokensServed)
	// Output: 200 1000000 1 2
}
