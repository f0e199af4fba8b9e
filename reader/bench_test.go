package reader

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkContentRead measures streaming throughput (hash + UTF-8 check).
func BenchmarkContentRead(b *testing.B) {
	for _, kind := range []struct {
		name string
		line string
	}{
		{"ascii", "The quick brown fox jumps over the lazy dog.\n"},
		{"multibyte", "Größe — 世界 😀 ünïcödé text for the splitter.\n"},
	} {
		b.Run(kind.name, func(b *testing.B) {
			body := bytes.Repeat([]byte(kind.line), (4<<20)/len(kind.line))
			p := filepath.Join(b.TempDir(), "big.txt")
			if err := os.WriteFile(p, body, 0o644); err != nil {
				b.Fatal(err)
			}
			f := File{ID: "big.txt", Path: p}
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := Open(f)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, buf); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkWalk measures walking a tree of 2,000 files in 100 folders.
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	for d := 0; d < 100; d++ {
		dir := filepath.Join(root, fmt.Sprintf("dir%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 20; f++ {
			ext := []string{".md", ".txt", ".go", ".png"}[f%4]
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d%s", f, ext)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Half the files match (the default include, *.md, would select a quarter).
	cfg := Config{Dir: root, Include: []string{"**/*.md", "**/*.txt"}}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := Walk(context.Background(), cfg, func(File, error) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 1000 {
			b.Fatalf("walked %d files, want 1000", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000, "ns/entry")
}
