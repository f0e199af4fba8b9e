package splitter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchDocs returns the shared fixture inputs, one string per document, or
// a synthetic document when the shared folder is absent.
func benchDocs(b *testing.B) []string {
	b.Helper()
	var docs []string
	_ = filepath.WalkDir(filepath.Join(fixturesDir, "input"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == "MANIFEST.tsv" {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil {
			docs = append(docs, string(data))
		}
		return nil
	})
	if len(docs) == 0 {
		docs = []string{strings.Repeat(benchParagraph, 5000)}
	}
	return docs
}

const benchParagraph = "Sluice streams a folder of documents through a sentence splitter. " +
	"Each chunk carries offsets, e.g. 3.14 and 1,000 items! Dr. Smith wrote it at https://example.com/a.b? Yes.\n\n"

func totalBytes(docs []string) int64 {
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// BenchmarkSplit measures single-core splitting throughput (MB/s) over the
// shared fixture corpus.
func BenchmarkSplit(b *testing.B) {
	docs := benchDocs(b)
	for _, cfg := range []Config{DefaultConfig(), {ChunkSize: 512, ChunkOverlap: 50}} {
		s := mustNew(b, cfg)
		b.Run(fmt.Sprintf("%d-%d", cfg.ChunkSize, cfg.ChunkOverlap), func(b *testing.B) {
			b.SetBytes(totalBytes(docs))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					s.Split(d)
				}
			}
		})
	}
}

// BenchmarkSplitParallel splits the corpus on all cores, one document per
// goroutine at a time (GOMAXPROCS goroutines sharing one Splitter), as the
// pipeline does.
func BenchmarkSplitParallel(b *testing.B) {
	docs := benchDocs(b)
	s := mustNew(b, DefaultConfig())
	b.SetBytes(totalBytes(docs))
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(docs)); i = next.Add(1) - 1 {
					s.Split(docs[i])
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkCountTokens measures the tokenizer alone.
func BenchmarkCountTokens(b *testing.B) {
	docs := benchDocs(b)
	s := mustNew(b, DefaultConfig())
	b.SetBytes(totalBytes(docs))
	for b.Loop() {
		for _, d := range docs {
			s.CountTokens(d)
		}
	}
}

// BenchmarkSplitReader streams the corpus, concatenated into one document,
// through SplitReader (windows, carried chunks, copied chunk texts).
func BenchmarkSplitReader(b *testing.B) {
	doc := strings.Join(benchDocs(b), "\n\n\n")
	s := mustNew(b, DefaultConfig())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		err := s.SplitReader(context.Background(), strings.NewReader(doc), func(Chunk) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}
