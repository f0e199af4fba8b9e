package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// The hash embedder works offline: it is lexical, not semantic, and meant for
// tests, benchmarks and trying Sluice out.
func ExampleNewHash() {
	h := embedder.NewHash(8)
	vecs, err := h.Embed(context.Background(), embedder.Texts("Hello, world!", "hello world", ""))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(vecs), len(vecs[0]))
	fmt.Println("same words, same vector:", fmt.Sprint(vecs[0]) == fmt.Sprint(vecs[1]))
	fmt.Println("empty text:", vecs[2])
	// Output:
	// 3 8
	// same words, same vector: true
	// empty text: [0 0 0 0 0 0 0 0]
}

// An OpenAI-compatible endpoint, here the package's test server. The key is
// read from the variable named by APIKeyEnv when the client is created.
func ExampleNewOpenAI() {
	srv := &exampleT{}
	defer srv.cleanup()
	_, url := embedtest.Start(srv, embedtest.Options{Key: "example-key", Dimensions: 16})

	os.Setenv("EXAMPLE_EMBEDDINGS_KEY", "example-key")
	defer os.Unsetenv("EXAMPLE_EMBEDDINGS_KEY")
	c, err := embedder.NewOpenAI(embedder.Config{
		BaseURL:           url + "/v1",
		Model:             "text-embedding-3-small",
		Dimensions:        16,
		APIKeyEnv:         "EXAMPLE_EMBEDDINGS_KEY",
		TokensPerMinute:   600_000,
		RequestsPerMinute: 3_000,
	})
	if err != nil {
		panic(err)
	}
	vecs, err := c.Embed(context.Background(), []embedder.Input{
		{Text: "Sluice streams documents", Tokens: 3},
		{Text: "into a vector index", Tokens: 4},
	})
	if err != nil {
		panic(err)
	}
	st := c.Stats()
	fmt.Println(len(vecs), len(vecs[0]), st.Requests, st.TokensSent)
	// Output: 2 16 1 7
}

// New catches an unset key before any request and names the variable.
func ExampleNew() {
	os.Unsetenv("EXAMPLE_UNSET_KEY")
	_, err := embedder.New(context.Background(), embedder.Config{
		Provider:  embedder.ProviderOpenAI,
		Model:     "text-embedding-3-small",
		APIKeyEnv: "EXAMPLE_UNSET_KEY",
	})
	var missing *embedder.MissingKeyError
	fmt.Println(errors.As(err, &missing), missing.Env)
	// Output: true EXAMPLE_UNSET_KEY
}

// exampleT is the part of testing.TB that embedtest.Start needs.
type exampleT struct{ fns []func() }

func (t *exampleT) Helper()          {}
func (t *exampleT) Cleanup(f func()) { t.fns = append(t.fns, f) }
func (t *exampleT) cleanup() {
	for i := len(t.fns) - 1; i >= 0; i-- {
		t.fns[i]()
	}
}

// ContextWithLatencyObserver tells the request latencies of one Embed call
// from those of the calls in flight beside it: here a call of four texts
// that the client sends as two requests of two (BatchSize).
func ExampleContextWithLatencyObserver() {
	srv := &exampleT{}
	defer srv.cleanup()
	_, url := embedtest.Start(srv, embedtest.Options{Key: "example-key", Dimensions: 16})

	os.Setenv("EXAMPLE_EMBEDDINGS_KEY", "example-key")
	defer os.Unsetenv("EXAMPLE_EMBEDDINGS_KEY")
	c, err := embedder.NewOpenAI(embedder.Config{
		BaseURL:             url + "/v1",
		Model:               "text-embedding-3-small",
		Dimensions:          16,
		APIKeyEnv:           "EXAMPLE_EMBEDDINGS_KEY",
		BatchSize:           2,
		MaxInputsPerRequest: 2,
	})
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex // the requests of one call run concurrently
	var latencies []time.Duration
	ctx := embedder.ContextWithLatencyObserver(context.Background(), func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		latencies = append(latencies, d)
	})
	vecs, err := c.Embed(ctx, embedder.Texts("one", "two", "three", "four"))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(vecs), "vectors,", len(latencies), "request latencies")
	// Output: 4 vectors, 2 request latencies
}
