// Command stream measures splitter.SplitReader on one huge generated
// document: throughput and peak resident memory. The document repeats the
// files of a corpus folder (or a built-in paragraph) up to -size bytes and
// is generated on the fly, so nothing is written to disk.
//
//	go run ./benchmarks/splitter/stream -size 1GiB -corpus ../shared/fixtures/llamaindex-splitter/input
//
// It prints one JSON object: bytes, seconds, mb_per_s, chunks, max_tokens,
// peak_rss_mib (VmHWM of /proc/self/status).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/pipeline/bench/rss"
	"github.com/sluice-dev/sluice/splitter"
)

func main() {
	size := flag.String("size", "1GiB", "document size: bytes, or with a KiB, MiB or GiB suffix")
	corpus := flag.String("corpus", "", "folder whose files make up the document (default: a built-in paragraph)")
	chunkSize := flag.Int("chunk-size", splitter.DefaultChunkSize, "splitter.chunkSize")
	chunkOverlap := flag.Int("chunk-overlap", splitter.DefaultChunkOverlap, "splitter.chunkOverlap")
	flag.Parse()
	if err := run(*size, *corpus, splitter.Config{ChunkSize: *chunkSize, ChunkOverlap: *chunkOverlap}); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

func run(sizeFlag, corpus string, cfg splitter.Config) error {
	n, err := parseSize(sizeFlag)
	if err != nil {
		return err
	}
	seed, err := seedText(corpus)
	if err != nil {
		return err
	}
	s, err := splitter.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var chunks, maxTokens int
	start := time.Now()
	r := bufio.NewReaderSize(&repeater{seed: seed, left: n}, 1<<20)
	err = s.SplitReader(ctx, r, func(c splitter.Chunk) error {
		chunks++
		maxTokens = max(maxTokens, c.Tokens)
		return nil
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	peak := -1.0 // where /proc/self/status is unavailable
	if b, err := rss.Peak(); err == nil {
		peak = float64(b) / (1 << 20)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"bytes": n, "seconds": secs, "mb_per_s": float64(n) / 1e6 / secs,
		"chunks": chunks, "max_tokens": maxTokens, "chunk_size": cfg.ChunkSize,
		"peak_rss_mib": peak,
	})
}

// repeater yields seed over and over until left bytes are read.
type repeater struct {
	seed string
	off  int
	left int64
}

func (r *repeater) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.seed[r.off:])
		n += k
		r.off = (r.off + k) % len(r.seed)
	}
	r.left -= int64(n)
	return n, nil
}

func seedText(dir string) (string, error) {
	if dir == "" {
		return strings.Repeat("Sluice splits one huge document in windows that end on paragraph separators. "+
			"Memory stays flat, e.g. for 1 GB. See https://example.com/docs, or write to a@b.org!\n", 40) + "\n\n", nil
	}
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "MANIFEST.tsv" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteString("\n\n\n")
		return nil
	})
	if err == nil && b.Len() == 0 {
		err = fmt.Errorf("no files under %s", dir)
	}
	return b.String(), err
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("-size %q: want a positive number of bytes, optionally with KiB, MiB or GiB", s)
	}
	return n * mult, nil
}
