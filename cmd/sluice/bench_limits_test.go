package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/bench"
)

// TestBenchEmbedderQuota checks the quota bench measures utilisation
// against: the configured embedder.tokensPerMinute for an HTTP provider,
// none for a local provider (hash, instant, or the default ""), which
// ignores budgets, so that its utilisation is null and Pick chooses by
// throughput, and the simulated quota with --simulate, whatever the
// configured provider.
func TestBenchEmbedderQuota(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		tpm      int
		simulate bool
		simTPM   int
		want     int
	}{
		{"hash ignores its budget", embedder.ProviderHash, 600_000, false, 0, 0},
		{"instant ignores its budget", embedder.ProviderInstant, 600_000, false, 0, 0},
		{"the default provider ignores its budget", "", 600_000, false, 0, 0},
		{"openai: its budget", embedder.ProviderOpenAI, 600_000, false, 0, 600_000},
		{"azure-openai: its budget", embedder.ProviderAzureOpenAI, 600_000, false, 0, 600_000},
		{"openai without a budget", embedder.ProviderOpenAI, 0, false, 0, 0},
		{"simulated: its quota", embedder.ProviderHash, 600_000, true, 1_000_000, 1_000_000},
		{"simulated without a quota", embedder.ProviderHash, 0, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			cfg.Embedder = embedder.Config{Provider: tt.provider, TokensPerMinute: tt.tpm}
			f := &benchFlags{simulate: tt.simulate, sim: bench.SimOptions{TPM: tt.simTPM}}
			if _, got := benchEmbedder(cfg, f); got != tt.want {
				t.Errorf("benchEmbedder() quota = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBenchSimLatencyBeyondTimeout checks that a simulated latency that
// cannot fit within embedder.timeout is refused before anything is
// measured (exit 2), naming --sim-latency, --sim-token-latency and
// embedder.timeout: --sim-latency plus --sim-token-latency times the
// tokens of one chunk (splitter.chunkSize, 1024 by default) must be below
// it, or no configuration could embed a chunk. embedder.timeout is 2s and
// the trials run in process with short windows, so that a check that let
// them through fails the test within seconds (every attempt timing out)
// rather than hanging it.
func TestBenchSimLatencyBeyondTimeout(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{"timeout.yaml": "embedder:\n  timeout: 2s\n  maxRetries: -1\n"})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"base latency at the timeout", []string{"--sim-latency", "2s", "--sim-token-latency", "0s"}, "2s plus 0s per token"},
		{"base latency beyond it", []string{"--sim-latency", "3s", "--sim-token-latency", "0s"}, "3s plus 0s per token"},
		{"per-token latency beyond it", []string{"--sim-latency", "0s", "--sim-token-latency", "2ms"}, "(splitter.chunkSize, 1024 tokens) in 2.048s"},
		{"the two together beyond it", []string{"--sim-latency", "1s", "--sim-token-latency", "1ms"}, "(splitter.chunkSize, 1024 tokens) in 2.024s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "corpus", "--config", "timeout.yaml", "--simulate", "--in-process"}, quickBench...)
			stdout, stderr, code := sluice(t, dir, append(args, tt.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, stderr %q; want exit 2", code, stderr)
			}
			for _, w := range []string{"--sim-latency", "--sim-token-latency", "embedder.timeout (2s)", tt.want} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not name %q", stderr, w)
				}
			}
			if stdout != "" || strings.Contains(stderr, "configurations over") {
				t.Errorf("measured before refusing:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

// TestBenchSimTPMBelowChunk checks the message refusing a --sim-tpm below
// one chunk: it names --sim-tpm and splitter.chunkSize with the values that
// would do, and not embedder.tokensPerMinute, which the user did not set
// and which, raised, would pace the client but leave the simulated quota
// as it was. Before, it quoted the configuration check ("raise
// embedder.tokensPerMinute to at least 1024") before its own advice.
func TestBenchSimTPMBelowChunk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{"a.md": "Quotas limit tokens per minute."})
	_, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--sim-tpm", "1000")
	if code != exitUsage {
		t.Fatalf("--sim-tpm 1000: exit %d, want 2; stderr %q", code, stderr)
	}
	for _, want := range []string{"--sim-tpm 1000 is below one chunk", "splitter.chunkSize is 1024 tokens", "raise --sim-tpm to at least 1024, or lower splitter.chunkSize to at most 1000"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "embedder.tokensPerMinute") {
		t.Errorf("stderr %q names embedder.tokensPerMinute, which --sim-tpm replaces", stderr)
	}
}

// TestBenchSimChunkAboveInputCap: a chunk above the simulated provider's
// per-input cap is refused naming that cap, not --sim-tpm, which is large
// enough.
func TestBenchSimChunkAboveInputCap(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/a.md": "Quotas limit tokens per minute.",
		"sluice.yaml": "splitter: {chunkSize: 10000, chunkOverlap: 20}\n",
	})
	_, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--sim-tpm", "1000000")
	if code != exitUsage || !strings.Contains(stderr, "maxTokensPerInput") || strings.Contains(stderr, "--sim-tpm 1000000 is below one chunk") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming maxTokensPerInput, not --sim-tpm", code, stderr)
	}
}

// TestFitBatchSizes checks how the default --batch-sizes are cut to what
// the embedder allows: an HTTP provider's maxInputsPerRequest is the
// largest size tried, and a list that fits is left as it is.
func TestFitBatchSizes(t *testing.T) {
	defaults := []int{1, 8, 16, 32, 64, 100, 256, 512, 1024, 2048}
	openai := func(maxInputs int) embedder.Config {
		c := embedder.Config{Provider: embedder.ProviderOpenAI, Model: "text-embedding-3-small", MaxInputsPerRequest: maxInputs, BatchSize: 16}
		c.ApplyDefaults()
		return c
	}
	hash := embedder.Config{}
	hash.ApplyDefaults()
	tests := []struct {
		name    string
		emb     embedder.Config
		want    []int
		wantCut bool
	}{
		{"cap of 16, in the list", openai(16), []int{1, 8, 16}, true},
		{"cap of 50, added", openai(50), []int{1, 8, 16, 32, 50}, true},
		{"default cap", openai(0), defaults, false},
		{"local embedder", hash, defaults, false},
		{"invalid configuration: left to checkTrialLimits", embedder.Config{Provider: "nope"}, defaults, false},
	}
	for _, tt := range tests {
		got, cut := fitBatchSizes(tt.emb, slices.Clone(defaults))
		if !slices.Equal(got, tt.want) || cut != tt.wantCut {
			t.Errorf("%s: fitBatchSizes = %v, %v; want %v, %v", tt.name, got, cut, tt.want, tt.wantCut)
		}
	}
}

// TestBenchDefaultBatchSizesFitTheCap: without --batch-sizes, a provider
// capped at 16 inputs per request is measured at 1, 8 and 16, and bench
// says so, instead of refusing the default list.
func TestBenchDefaultBatchSizesFitTheCap(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/a.md": strings.Repeat("Quotas limit tokens per minute and requests per minute. ", 300),
		"sluice.yaml": "embedder: {provider: openai, model: text-embedding-3-small, batchSize: 16, maxInputsPerRequest: 16}\n",
	})
	out, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--in-process", "--json", "--concurrency", "1",
		"--sim-latency", "2ms", "--warmup", "0s", "--cooldown", "0s", "--duration", "100ms", "--min-requests", "2", "--out", "results")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out, stderr)
	}
	var sizes []float64
	for _, l := range jsonLines(t, out) {
		sizes = append(sizes, l["batch_size"].(float64))
	}
	if !slices.Equal(sizes, []float64{1, 8, 16}) {
		t.Errorf("batch sizes measured %v, want [1 8 16]", sizes)
	}
	if !strings.Contains(stderr, "embedder.maxInputsPerRequest is 16: trying batch sizes 1,8,16") {
		t.Errorf("stderr %q does not say why the list was cut", stderr)
	}
	// Refused before measuring (no API key): the error alone, no note.
	t.Setenv("OPENAI_API_KEY", "")
	_, stderr, code = sluice(t, dir, "bench", "corpus", "--env-file", "/dev/null")
	if code != exitUsage || strings.Contains(stderr, "trying batch sizes") {
		t.Errorf("without a key: exit %d, stderr %q; want exit 2 and no note about batch sizes", code, stderr)
	}
}

// TestBenchWarnsOfFewRequests: a window closed by --max-duration before
// --min-requests requests completed is warned about, naming both flags.
func TestBenchWarnsOfFewRequests(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": strings.Repeat("Quotas limit tokens per minute. ", 100)})
	out, stderr, code := sluice(t, dir, "bench", "corpus", "--simulate", "--in-process", "--sim-latency", "200ms", "--duration", "50ms",
		"--max-duration", "500ms", "--min-requests", "50", "--warmup", "0s", "--cooldown", "0s", "--batch-sizes", "1", "--concurrency", "1", "--out", "results")
	if code != 0 || !strings.Contains(stderr, "bench: 1x1: only ") || !strings.Contains(stderr, "of --min-requests 50 requests completed within --max-duration 500ms") {
		t.Errorf("exit %d, stderr %q; want a warning naming --min-requests and --max-duration\n%s", code, stderr, out)
	}
}
