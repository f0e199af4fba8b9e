package bench_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/bench"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// sample are fixed results: a quota, a throttled row and a failed row.
func sample() []bench.Result {
	u := func(v float64) *float64 { return &v }
	return []bench.Result{
		{BatchSize: 8, Concurrency: 1, ChunksPerS: 10.5, TokensPerS: 5376, TPMUtilization: u(0.3226), P50Ms: 95.5, P95Ms: 120.25, PeakRSSMB: 41.2, Requests: 40, ChunksPerRequest: 8, Seconds: 5},
		{BatchSize: 64, Concurrency: 1, ChunksPerS: 31.25, TokensPerS: 16000, TPMUtilization: u(0.96), Retries: 1, P50Ms: 410, P95Ms: 470.5, PeakRSSMB: 44, Requests: 25, ChunksPerRequest: 62.5, Seconds: 5},
		{BatchSize: 8, Concurrency: 4, ChunksPerS: 31.6, TokensPerS: 16179.2, TPMUtilization: u(0.9708), HTTP429: 4, Retries: 4, P50Ms: 99, P95Ms: 130, PeakRSSMB: 43.5, Requests: 160, ChunksPerRequest: 8, Seconds: 5},
		{BatchSize: 64, Concurrency: 4, Error: "bench: trial 64x4: embedder: embedder.batchSize: too large"},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		golden string
		write  func(*bytes.Buffer, []bench.Result) error
	}{
		{"table.golden", func(b *bytes.Buffer, r []bench.Result) error { return bench.WriteTable(b, r) }},
		{"results.jsonl.golden", func(b *bytes.Buffer, r []bench.Result) error { return bench.WriteJSON(b, r) }},
		{"results.csv.golden", func(b *bytes.Buffer, r []bench.Result) error { return bench.WriteCSV(b, r) }},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf, sample()); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, buf.Bytes())
		})
	}
}

func TestJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := bench.WriteJSON(&buf, sample()[:1]); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"batch_size", "concurrency", "chunks_per_s", "tokens_per_s", "tpm_utilization", "http_429", "retries", "p50_ms", "p95_ms", "peak_rss_mb"} {
		if !strings.Contains(buf.String(), `"`+key+`":`) {
			t.Errorf("JSON line %s lacks the contract key %q", buf.String(), key)
		}
	}
}

func TestWriteChart(t *testing.T) {
	tests := []struct {
		format string
		magic  string
	}{
		{"svg", "<svg"},
		{"png", "\x89PNG"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := bench.WriteChart(&buf, sample(), tt.format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(buf.Bytes()[:min(buf.Len(), 512)], []byte(tt.magic)) {
				t.Fatalf("chart does not start like %s: %q", tt.format, buf.Bytes()[:min(buf.Len(), 64)])
			}
			if tt.format == "svg" {
				for _, text := range []string{"concurrency 1", "concurrency 4", "recommended (64x1)", "tokens per second", "token quota"} {
					if !strings.Contains(buf.String(), text) {
						t.Errorf("SVG lacks %q", text)
					}
				}
			}
		})
	}
	if err := bench.WriteChart(&bytes.Buffer{}, sample()[3:], "svg"); err == nil {
		t.Error("WriteChart with only failed trials returned nil, want an error")
	}
}
