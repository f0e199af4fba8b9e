package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

const (
	benchDims    = 1536
	benchBatch   = 100
	benchCorpus  = 10000
	benchVocab   = 5000
	benchQueries = 64
)

// benchWords is the number of words of a benchmark chunk: 150 words make
// about 1 KB of text; BenchmarkAdd also tries 600 (about 4 KB, the size of a
// chunk of 1024 cl100k_base tokens).
var benchWords = 150

// benchText returns a chunk of Zipf-distributed synthetic words.
func benchText(z *rand.Zipf) string {
	var b strings.Builder
	for i := range benchWords {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%x", z.Uint64())
	}
	b.WriteByte('.')
	return b.String()
}

func benchNodes(r *rand.Rand, z *rand.Zipf, start, n int) []sink.Node {
	nodes := make([]sink.Node, n)
	for i := range nodes {
		id := start + i
		nodes[i] = sink.Node{
			ID:        fmt.Sprintf("node-%08d", id),
			RefDocID:  fmt.Sprintf("doc-%06d", id/10),
			Text:      benchText(z),
			Embedding: randomVector(r, benchDims),
			Metadata:  map[string]any{"lang": []string{"en", "de", "fr"}[id%3], "year": 2000 + id%25, "tags": []string{"a", "b"}},
			StartChar: (id % 10) * 1000,
			EndChar:   (id%10)*1000 + 1000,
		}
	}
	return nodes
}

// BenchmarkAdd measures Add of batches of 100 new nodes with 1536-dim
// vectors, with about 1 KB and about 4 KB of text per node.
func BenchmarkAdd(b *testing.B) {
	defer func(n int) { benchWords = n }(benchWords)
	for _, words := range []int{150, 600} {
		benchWords = words
		b.Run(fmt.Sprintf("words=%d", words), benchmarkAdd)
	}
}

func benchmarkAdd(b *testing.B) {
	s := openTest(b)
	r := rand.New(rand.NewPCG(1, 1))
	z := rand.NewZipf(r, 1.1, 1, benchVocab)
	batches := make([][]sink.Node, 8)
	for i := range batches {
		batches[i] = benchNodes(r, z, 0, benchBatch)
	}
	var textBytes int
	for _, n := range batches[0] {
		textBytes += len(n.Text)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes := batches[i%len(batches)]
		for j := range nodes {
			nodes[j].ID = fmt.Sprintf("node-%d-%d", i, j) // always new rows
		}
		if _, err := s.Add(ctx, nodes); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*benchBatch)/sec, "nodes/s")
	b.ReportMetric(float64(b.N*textBytes)/sec/1e6, "text-MB/s")
}

// BenchmarkAddTextIndex measures what the full-text index costs a bulk
// load: 4,000 new nodes of about 4 KB of text, in batches of 100, with the
// index kept by the store's triggers in each Add (eager, what the store
// does), built afterwards in one catch-up transaction per 1,000 nodes
// (catchup), or not at all (none). The last two drop the insert trigger
// for the measurement only; they are yardsticks, not modes of the store.
func BenchmarkAddTextIndex(b *testing.B) {
	defer func(n int) { benchWords = n }(benchWords)
	benchWords = 600
	r := rand.New(rand.NewPCG(1, 1))
	z := rand.NewZipf(r, 1.1, 1, benchVocab)
	nodes := benchNodes(r, z, 0, 4000)
	var textBytes int
	for _, n := range nodes {
		textBytes += len(n.Text)
	}
	const catchUpEvery = 1000
	for _, mode := range []string{"eager", "catchup", "none"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				s := openTest(b)
				if mode != "eager" {
					if _, err := s.db.ExecContext(ctx, `DROP TRIGGER nodes_ai`); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				for i := 0; i < len(nodes); i += benchBatch {
					if _, err := s.Add(ctx, nodes[i:i+benchBatch]); err != nil {
						b.Fatal(err)
					}
					if mode == "catchup" && (i+benchBatch)%catchUpEvery == 0 {
						if _, err := s.db.ExecContext(ctx, `INSERT INTO nodes_fts (rowid, text) SELECT seq, text FROM nodes WHERE seq > ?`, i+benchBatch-catchUpEvery); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*textBytes)/b.Elapsed().Seconds()/1e6, "text-MB/s")
		})
	}
}

var fixture struct {
	once sync.Once
	dir  string
	err  error
}

// benchStore opens a copy-free shared store of benchCorpus nodes, built once
// per test binary run; the directory is removed by TestMain.
func benchStore(b *testing.B) *Store {
	b.Helper()
	fixture.once.Do(func() {
		fixture.dir, fixture.err = os.MkdirTemp("", "sluice-local-bench")
		if fixture.err != nil {
			return
		}
		s, err := Open(context.Background(), Config{Path: filepath.Join(fixture.dir, "index.db")})
		if err != nil {
			fixture.err = err
			return
		}
		defer s.Close()
		r := rand.New(rand.NewPCG(2, 2))
		z := rand.NewZipf(r, 1.1, 1, benchVocab)
		for i := 0; i < benchCorpus; i += benchBatch {
			if _, err := s.Add(context.Background(), benchNodes(r, z, i, benchBatch)); err != nil {
				fixture.err = err
				return
			}
		}
	})
	if fixture.err != nil {
		b.Fatal(fixture.err)
	}
	s, err := Open(context.Background(), Config{Path: filepath.Join(fixture.dir, "index.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func removeBenchFixture() {
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
}

// BenchmarkQueryVector measures exact cosine top-10 over 10k nodes of 1536
// dimensions, without and with a metadata filter.
func BenchmarkQueryVector(b *testing.B) {
	s := benchStore(b)
	r := rand.New(rand.NewPCG(3, 3))
	qs := make([][]float32, benchQueries)
	for i := range qs {
		qs[i] = randomVector(r, benchDims)
	}
	filters := map[string]*sink.MetadataFilters{
		"nofilter": nil,
		"filter":   {Filters: []sink.MetadataFilter{{Key: "lang", Value: "en", Operator: sink.EQ}}},
	}
	for _, name := range []string{"nofilter", "filter"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := s.Query(context.Background(), sink.Query{Embedding: qs[i%len(qs)], TopK: 10, Filters: filters[name]})
				if err != nil || len(res) != 10 {
					b.Fatalf("query: %d results, %v", len(res), err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

// BenchmarkQuerySparse measures BM25 top-10 over 10k nodes.
func BenchmarkQuerySparse(b *testing.B) {
	s := benchStore(b)
	r := rand.New(rand.NewPCG(4, 4))
	z := rand.NewZipf(r, 1.1, 1, benchVocab)
	qs := make([]string, benchQueries)
	for i := range qs {
		qs[i] = fmt.Sprintf("w%x w%x w%x?", z.Uint64()+10, z.Uint64()+20, z.Uint64()+5)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Query(context.Background(), sink.Query{Mode: sink.Sparse, QueryStr: qs[i%len(qs)], TopK: 10}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

// BenchmarkQueryHybrid measures hybrid (RRF) top-10 over 10k nodes.
func BenchmarkQueryHybrid(b *testing.B) {
	s := benchStore(b)
	r := rand.New(rand.NewPCG(5, 5))
	q := randomVector(r, benchDims)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Query(context.Background(), sink.Query{Mode: sink.Hybrid, QueryStr: "w1 w2 w30", Embedding: q, TopK: 10}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
