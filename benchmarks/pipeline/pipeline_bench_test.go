package pipelinebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/local"
	"github.com/sluice-dev/sluice/splitter"
	"github.com/tiktoken-go/tokenizer"
)

// corpusEnv names a folder to benchmark with instead of the synthetic one.
const corpusEnv = "SLUICE_BENCH_CORPUS"

// include is source.include of every benchmark. The corpora of
// ../shared/corpus/make-corpus.sh hold .md and .txt files, and
// reader.DefaultInclude reads *.md only: the figures in
// benchmarks/RESULTS.md were measured over both.
var include = []string{"**/*.md", "**/*.txt"}

// sourceConfig returns the reader settings of the benchmarks for dir.
func sourceConfig(dir string) reader.Config {
	cfg := reader.DefaultConfig()
	cfg.Dir = dir
	cfg.Include = slices.Clone(include)
	return cfg
}

var (
	corpusOnce  sync.Once
	corpusDir   string
	corpusBytes int64
	corpusErr   error
	tempDir     string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tempDir != "" {
		os.RemoveAll(tempDir)
	}
	os.Exit(code)
}

// corpus returns the benchmark folder and the bytes of the files
// sourceConfig selects in it: the files every benchmark reads.
func corpus(b *testing.B) (string, int64) {
	b.Helper()
	corpusOnce.Do(func() {
		corpusDir = os.Getenv(corpusEnv)
		if corpusDir == "" {
			tempDir, corpusErr = os.MkdirTemp("", "sluice-pipeline-bench-")
			if corpusErr != nil {
				return
			}
			corpusDir = tempDir
			corpusErr = writeSynthetic(corpusDir, 40, 100<<10)
			if corpusErr != nil {
				return
			}
		}
		corpusErr = reader.Walk(context.Background(), sourceConfig(corpusDir), func(f reader.File, err error) error {
			if err == nil {
				corpusBytes += f.Size
			}
			return nil
		})
		if corpusErr == nil && corpusBytes == 0 {
			corpusErr = fmt.Errorf("no file under %s matches %q", corpusDir, include)
		}
	})
	if corpusErr != nil {
		b.Fatalf("benchmark corpus: %v", corpusErr)
	}
	return corpusDir, corpusBytes
}

// writeSynthetic writes n markdown files of about size bytes of prose.
func writeSynthetic(dir string, n, size int) error {
	words := strings.Fields("the river runs through a lock where the sluice gate holds water for boats " +
		"and mills; engineers measure flow, level and pressure before they open it again. Documents " +
		"describe canals, bridges, weirs, reservoirs, pumps, valves and the people who keep them.")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Document %d\n\n", i)
		for sb.Len() < size {
			for s := range 5 + rng.IntN(5) {
				for w := range 6 + rng.IntN(14) {
					word := words[rng.IntN(len(words))]
					if w == 0 {
						word = strings.ToUpper(word[:1]) + word[1:]
					}
					sb.WriteString(word)
					sb.WriteByte(' ')
				}
				sb.WriteString(". ")
				_ = s
			}
			sb.WriteString("\n\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc%03d.md", i)), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func newSplitter(b *testing.B) *splitter.Splitter {
	s, err := splitter.New(splitter.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPipeline runs a whole ingestion of the corpus per iteration:
// with the instant embedder into a discard sink and into the local store,
// and with the hash embedder (sluice run's default) into the local store.
// Opening a fresh store is not timed; closing it is.
func BenchmarkPipeline(b *testing.B) {
	dir, size := corpus(b)
	const dims = 1536
	cases := []struct {
		name  string
		emb   embedder.Embedder
		local bool
	}{
		{"instant-discard", embedder.NewInstant(dims), false},
		{"instant-local", embedder.NewInstant(dims), true},
		{"hash-local", embedder.NewHash(dims), true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			split := newSplitter(b)
			cfg := sourceConfig(dir)
			b.SetBytes(size)
			var tokens int64
			for i := 0; b.Loop(); i++ {
				var store pipeline.Writer = bench.Discard{}
				if c.local {
					b.StopTimer()
					lc := local.DefaultConfig()
					lc.Path = filepath.Join(b.TempDir(), fmt.Sprintf("index-%d.db", i))
					s, err := local.Open(b.Context(), lc)
					if err != nil {
						b.Fatal(err)
					}
					store = s
					b.StartTimer()
				}
				rep, err := pipeline.Run(b.Context(), pipeline.Options{
					Reader: cfg, Splitter: split, Embedder: c.emb, Store: store,
				})
				if err != nil {
					b.Fatal(err)
				}
				if rep.FilesFailed > 0 {
					b.Fatalf("%d documents failed, first: %+v", rep.FilesFailed, rep.Failures[0])
				}
				tokens += rep.TokensEmbedded
				// Closing the store is timed: its last checkpoint is part
				// of the ingestion, as sluice run pays it.
				if s, ok := store.(*local.Store); ok {
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkTokenize counts the tokens of the corpus on GOMAXPROCS
// goroutines, reading each file: the ceiling the pipeline is held to.
func BenchmarkTokenize(b *testing.B) {
	split := newSplitter(b)
	eachFile(b, split.CountTokens)
}

// BenchmarkTokenizeLibrary counts the same tokens with
// github.com/tiktoken-go/tokenizer, the library whose cl100k_base
// vocabulary the splitter's own counter uses, for scale: the pipeline is
// held to BenchmarkTokenize, its own counter, not to this one.
func BenchmarkTokenizeLibrary(b *testing.B) {
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		b.Fatal(err)
	}
	eachFile(b, func(text string) int {
		n, err := codec.Count(text)
		if err != nil {
			b.Error(err)
		}
		return n
	})
}

// BenchmarkSplitCorpus splits the corpus the same way: reading and
// splitting alone, without ids, batches or a store.
func BenchmarkSplitCorpus(b *testing.B) {
	split := newSplitter(b)
	eachFile(b, func(text string) int {
		n := 0
		for _, c := range split.Split(text) {
			n += c.Tokens
		}
		return n
	})
}

// eachFile runs fn over the text of every corpus file per iteration, on
// GOMAXPROCS goroutines, and reports the tokens fn returns per second.
func eachFile(b *testing.B, fn func(text string) int) {
	dir, size := corpus(b)
	var paths []string
	if err := reader.Walk(b.Context(), sourceConfig(dir), func(f reader.File, err error) error {
		if err == nil {
			paths = append(paths, f.Path)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	var tokens atomic.Int64
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= len(paths) {
						return
					}
					data, err := os.ReadFile(paths[i])
					if err != nil {
						b.Error(err)
						return
					}
					tokens.Add(int64(fn(string(data))))
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(tokens.Load())/b.Elapsed().Seconds(), "tokens/s")
}
