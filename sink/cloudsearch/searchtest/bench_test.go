package searchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchServer returns a server with an index of n documents of dims
// dimensions, driven through ServeHTTP without a network.
func benchServer(b *testing.B, n, dims int) *Server {
	b.Helper()
	s := NewServer(Options{})
	def := fmt.Sprintf(`{"name": "bench", "fields": [
		{"name": "id", "type": "Edm.String", "key": true},
		{"name": "chunk", "type": "Edm.String"},
		{"name": "embedding", "type": "Collection(Edm.Single)", "dimensions": %d, "vectorSearchProfile": "p"}],
		"vectorSearch": {"algorithms": [{"name": "a", "kind": "exhaustiveKnn"}], "profiles": [{"name": "p", "algorithm": "a"}]}}`, dims)
	serve(b, s, http.MethodPut, "/indexes/bench", []byte(def), http.StatusCreated)
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"river", "lake", "sea", "fox", "dog", "cat", "tree", "stone", "cloud", "rain"}
	for start := 0; start < n; start += MaxBatchActions {
		var v []any
		for i := start; i < min(start+MaxBatchActions, n); i++ {
			emb := make([]float32, dims)
			for j := range emb {
				emb[j] = rng.Float32()
			}
			text := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
			v = append(v, map[string]any{"id": fmt.Sprintf("k%d", i), "chunk": text, "embedding": emb})
		}
		body, _ := json.Marshal(map[string]any{"value": v})
		serve(b, s, http.MethodPost, "/indexes/bench/docs/index", body, http.StatusOK)
	}
	return s
}

func serve(b *testing.B, s *Server, method, path string, body []byte, want int) {
	req := httptest.NewRequest(method, path+"?api-version="+APIVersion, bytes.NewReader(body))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.Bytes())
	}
}

// BenchmarkVectorSearch measures one exact top-10 vector query over 10,000
// documents of 256 dimensions.
func BenchmarkVectorSearch(b *testing.B) {
	s := benchServer(b, 10000, 256)
	q := make([]float32, 256)
	for i := range q {
		q[i] = float32(i%7) / 7
	}
	body, _ := json.Marshal(map[string]any{"select": "id", "top": 10,
		"vectorQueries": []any{map[string]any{"kind": "vector", "vector": q, "k": 10, "fields": "embedding"}}})
	b.ResetTimer()
	for b.Loop() {
		serve(b, s, http.MethodPost, "/indexes/bench/docs/search", body, http.StatusOK)
	}
}

// BenchmarkIndexBatch measures one docs/index request of 1000 documents of
// 256 dimensions.
func BenchmarkIndexBatch(b *testing.B) {
	s := benchServer(b, 0, 256)
	var v []any
	for i := range MaxBatchActions {
		v = append(v, map[string]any{"id": fmt.Sprintf("k%d", i), "chunk": "text", "embedding": make([]float32, 256)})
	}
	body, _ := json.Marshal(map[string]any{"value": v})
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for b.Loop() {
		serve(b, s, http.MethodPost, "/indexes/bench/docs/index", body, http.StatusOK)
	}
}
