package splitter

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// BenchmarkSplitReaderPathological streams 8 MiB of each of
// pathologicalInputs (a window-long run of spaces or letters, words
// without a sentence end) through SplitReader, reporting MB/s, bytes
// allocated, peak-heap-MiB: the most the heap's objects (live or not yet
// collected) grew over what they were before, sampled every millisecond;
// and live-MiB: the most the live heap grew, measured after a collection
// before each read of one more, untimed, run.
func BenchmarkSplitReaderPathological(b *testing.B) {
	s := mustNew(b, DefaultConfig())
	const n = 8 << 20
	for _, in := range pathologicalInputs {
		b.Run(strings.ReplaceAll(in.name, " ", "-"), func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			runtime.GC() // twice: pools hold on to buffers for one collection
			runtime.GC()
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			metrics.Read(sample)
			base, peak := sample[0].Value.Uint64(), uint64(0)
			done, sampled := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				for {
					metrics.Read(sample)
					peak = max(peak, sample[0].Value.Uint64())
					select {
					case <-done:
						return
					case <-tick.C:
					}
				}
			}()
			split := func(r io.Reader) {
				if err := s.SplitReader(context.Background(), r, func(Chunk) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				split(&genReader{at: in.at, n: n})
			}
			close(done)
			<-sampled
			b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-heap-MiB")

			var live uint64
			_, onRead := watchLiveHeap(&live)
			split(&genReader{at: in.at, n: n, onRead: onRead})
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
		})
	}
}
