package cloudsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// BenchmarkUpload measures Add throughput of 1536-dimension nodes to the
// in-process test server (no schema validation, no latency) by upload batch
// size, with the default concurrency of 4. It reports nodes/s and the
// request-body MB/s.
//
//	go test -run '^$' -bench BenchmarkUpload -benchtime 3x ./sink/cloudsearch
func BenchmarkUpload(b *testing.B) {
	const dims, count = 1536, 2000
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := make([]sink.Node, count)
	for i := range nodes {
		emb := make([]float32, dims)
		for j := range emb {
			emb[j] = rng.Float32()*2 - 1
		}
		text := fmt.Sprintf("chunk %d: rivers carry sediment to the sea, and glaciers carve valleys on the way.", i)
		nodes[i] = sink.Node{ID: sink.NodeID("bench.md", text, 0), RefDocID: "bench.md", Text: text, Embedding: emb,
			Metadata: map[string]any{"file_name": "bench.md", "author": "Ada"}}
	}
	cfgBase := DefaultConfig()
	cfgBase.IndexName = "bench"
	cfgBase.EmbeddingDimensionality = dims
	cfgBase.IndexManagement = CreateIfNotExists
	cfgBase = cfgBase.normalize()
	var bodyBytes int64
	for i := range nodes {
		d, _ := cfgBase.toDocument(&nodes[i], actionMergeOrUpload)
		j, _ := json.Marshal(d)
		bodyBytes += int64(len(j) + 1)
	}
	for _, batch := range []int{10, 100, 500, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			_, url := searchtest.Start(b, searchtest.Options{Key: testKey})
			cfg := cfgBase
			cfg.Endpoint = url
			cfg.UploadBatchSize = batch
			s, err := New(context.Background(), cfg, testHTTP(b), WithGetenv(envOf(map[string]string{EnvKey: testKey})))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(bodyBytes)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := s.Add(context.Background(), nodes); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start).Seconds()
			b.ReportMetric(float64(count*b.N)/elapsed, "nodes/s")
		})
	}
}

// BenchmarkEncode measures the client side alone: mapping 1536-dimension
// nodes to documents and encoding them, as Add does before sending.
//
//	go test -run '^$' -bench BenchmarkEncode ./sink/cloudsearch
func BenchmarkEncode(b *testing.B) {
	const dims = 1536
	cfg := DefaultConfig()
	cfg.IndexName = "bench"
	cfg = cfg.normalize()
	emb := make([]float32, dims)
	for j := range emb {
		emb[j] = float32(j%97)/97 - 0.5
	}
	n := sink.Node{ID: sink.NodeID("bench.md", "text", 0), RefDocID: "bench.md", Text: "rivers carry sediment to the sea", Embedding: emb,
		Metadata: map[string]any{"file_name": "bench.md"}}
	var size int
	start := time.Now()
	for range b.N {
		d, err := cfg.toDocument(&n, actionMergeOrUpload)
		if err != nil {
			b.Fatal(err)
		}
		j, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		size = len(j)
	}
	b.SetBytes(int64(size))
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "nodes/s")
}
