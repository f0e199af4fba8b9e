package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchSimulated runs `sluice bench --simulate` on a small folder and
// checks the contract's JSON keys and the files written to --out.
func TestBenchSimulated(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{
		"a.md": strings.Repeat("Benchmarks measure throughput of embedding batches. ", 200),
		"b.md": strings.Repeat("Quotas limit tokens per minute and requests per minute. ", 200),
	})
	out, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--in-process", "--json",
		"--batch-sizes", "4,16", "--concurrency", "1,2", "--sim-latency", "5ms", "--sim-tpm", "600000",
		"--warmup", "100ms", "--cooldown", "0s", "--duration", "300ms", "--min-requests", "3", "--out", "results")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out, stderr)
	}
	lines := jsonLines(t, out)
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines, want one per configuration (4)", len(lines))
	}
	winners := 0
	for _, l := range lines {
		if w, ok := l["winner"].(bool); !ok {
			t.Errorf("bench --json line lacks a boolean winner: %v", l)
		} else if w {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d lines marked winner, want 1", winners)
	}
	for _, l := range lines {
		for _, k := range []string{"batch_size", "concurrency", "chunks_per_s", "tokens_per_s", "tpm_utilization", "http_429", "retries", "p50_ms", "p95_ms", "peak_rss_mb"} {
			if _, ok := l[k]; !ok {
				t.Errorf("bench --json line lacks %q: %v", k, l)
			}
		}
		if l["tokens_per_s"].(float64) <= 0 {
			t.Errorf("configuration %v measured no throughput", l)
		}
	}
	for _, f := range []string{"bench.csv", "bench.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "results", f)); err != nil || fi.Size() == 0 {
			t.Errorf("--out did not get %s: %v", f, err)
		}
	}
	if _, _, code := sluice(t, dir, "bench", "corpus", "--simulate", "--batch-sizes", "0"); code != exitUsage {
		t.Errorf("--batch-sizes 0: exit %d, want 2", code)
	}
	if _, stderr, code := sluice(t, dir, "bench", "corpus", "--sim-tpm", "100"); code != exitUsage || !strings.Contains(stderr, "--sim-tpm sets the simulated provider, which only --simulate uses") {
		t.Errorf("--sim-tpm without --simulate: exit %d, stderr %q; want exit 2 naming --simulate", code, stderr)
	}
	if _, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--sim-tpm", "1"); code != exitUsage || !strings.Contains(stderr, "--sim-tpm 1 is below one chunk") {
		t.Errorf("--sim-tpm 1: exit %d, stderr %q; want exit 2 naming --sim-tpm", code, stderr)
	}
	if _, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--sim-latency", "1000h"); code != exitUsage || !strings.Contains(stderr, "--sim-latency") {
		t.Errorf("--sim-latency 1000h: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
}
