package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/splitter"
)

// TestPredict checks the time predicted for trials, computed here by hand
// in Measure's steps: start-up, cool-down (only against a quota), the first
// request's latency, the warm-up, the wait for a request to complete and
// open the window (half the time between two completions, on average), the
// window, and the poll that ends it (half of 50ms late on average). The
// window opens and closes at a request's completion, so that it holds the
// whole time of the requests it counts: held open by --duration, it ends
// on average half the time between two completions past it. The window is
// --duration unless --min-requests requests take longer to complete: at the
// pace of the token quota (tokens per second over a request's tokens: its
// batch of chunks cut to the request's token cap, whole chunks, so half a
// chunk below it), of a request quota, or of the latency at the trial's
// concurrency, whichever is slowest; at most --max-duration. The audit's
// defect was a window always counted at --duration: 3s announced, 16s
// taken. With the latency or the chunks unknown, the prediction is a lower
// bound.
func TestPredict(t *testing.T) {
	const polls = 25 * time.Millisecond
	hash := embedder.DefaultConfig()
	// 600,000 tokens per minute: 10,000 tokens a second; a request carries
	// at most 9,000 tokens (90% of a second's share), 8.5 chunks of 1,000.
	sim := func(o bench.SimOptions) embedder.Config {
		return bench.SimulatedEmbedder(embedder.DefaultConfig(), "http://127.0.0.1:1/v1", o)
	}
	tpm := bench.SimOptions{Latency: 100 * time.Millisecond, TPM: 600_000}
	free := bench.SimOptions{Latency: 100 * time.Millisecond, TokenLatency: 100 * time.Microsecond}
	rpm := bench.SimOptions{Latency: 100 * time.Millisecond, RPM: 30}
	// Warm-up none: against the token quota the burst window, 1s; against
	// 30 requests a minute one request's worth, 2s.
	opts := bench.Options{Warmup: bench.None, Cooldown: 3 * time.Second, Duration: 2 * time.Second, MaxDuration: 30 * time.Second, MinRequests: 10}
	long := opts
	long.MinRequests = 100
	tests := []struct {
		name     string
		opts     bench.Options
		trials   []bench.Trial
		w        bench.Workload
		want     []time.Duration
		atLeast  bool
		most     time.Duration
		extended int
		quota    bool
	}{
		{"token quota: 10 requests of 8,500 tokens at 10,000 a second", opts, []bench.Trial{{32, 1}},
			bench.Workload{Embedder: sim(tpm), TokensPerMinute: 600_000, TokensPerChunk: 1000, Latency: tpm.RequestLatency, Startup: 200 * time.Millisecond},
			// A request every 0.85s: the window opens 0.425s after the warm-up.
			[]time.Duration{200*time.Millisecond + 3*time.Second + 100*time.Millisecond + time.Second + 425*time.Millisecond + 8500*time.Millisecond + polls},
			false, 200*time.Millisecond + 3*time.Second + 100*time.Millisecond + time.Second + 425*time.Millisecond + 30*time.Second + polls, 1, true},
		{"token quota: 10 requests of one chunk within --duration", opts, []bench.Trial{{1, 1}},
			bench.Workload{Embedder: sim(tpm), TokensPerMinute: 600_000, TokensPerChunk: 1000, Latency: tpm.RequestLatency},
			// A request every 0.1s: half of it at each end of the window.
			[]time.Duration{3*time.Second + 100*time.Millisecond + time.Second + 50*time.Millisecond + 2*time.Second + 50*time.Millisecond + polls},
			false, 3*time.Second + 100*time.Millisecond + time.Second + 50*time.Millisecond + 30*time.Second + polls, 0, true},
		{"token quota: --max-duration caps the window", long, []bench.Trial{{32, 4}},
			bench.Workload{Embedder: sim(tpm), TokensPerMinute: 600_000, TokensPerChunk: 1000, Latency: tpm.RequestLatency},
			[]time.Duration{3*time.Second + 100*time.Millisecond + time.Second + 425*time.Millisecond + 30*time.Second + polls},
			false, 3*time.Second + 100*time.Millisecond + time.Second + 425*time.Millisecond + 30*time.Second + polls, 1, true},
		// No quota: 10 requests of 8 chunks of 500 tokens, 0.5s each, one
		// at a time take 5s (one every 0.5s); four at a time 1.25s (one
		// every 0.125s), within --duration.
		{"no quota: the latency paces the requests", opts, []bench.Trial{{8, 1}, {8, 4}},
			bench.Workload{Embedder: sim(free), TokensPerChunk: 500, Latency: free.RequestLatency},
			[]time.Duration{500*time.Millisecond + 250*time.Millisecond + 5*time.Second + polls, 500*time.Millisecond + 2*time.Second + 125*time.Millisecond + polls},
			false, 500*time.Millisecond + 250*time.Millisecond + 30*time.Second + polls, 1, false},
		{"request quota: 10 requests at 30 a minute", opts, []bench.Trial{{1, 4}},
			bench.Workload{Embedder: sim(rpm), TokensPerChunk: 500, Latency: rpm.RequestLatency},
			// A request every 2s: the window opens 1s after the warm-up.
			[]time.Duration{3*time.Second + 100*time.Millisecond + 2*time.Second + time.Second + 20*time.Second + polls},
			false, 3*time.Second + 100*time.Millisecond + 2*time.Second + time.Second + 30*time.Second + polls, 1, true},
		// Latency unknown: the window at the quota's pace is the least it
		// takes; a slow provider makes it longer.
		{"latency unknown: at least the quota's pace", opts, []bench.Trial{{32, 1}},
			bench.Workload{Embedder: sim(tpm), TokensPerMinute: 600_000, TokensPerChunk: 1000},
			[]time.Duration{3*time.Second + time.Second + 425*time.Millisecond + 8500*time.Millisecond + polls},
			true, 3*time.Second + time.Second + 425*time.Millisecond + 30*time.Second + polls, 1, true},
		{"chunks unknown: at least --duration", opts, []bench.Trial{{32, 1}},
			bench.Workload{Embedder: sim(tpm), TokensPerMinute: 600_000, Latency: tpm.RequestLatency},
			[]time.Duration{3*time.Second + time.Second + 2*time.Second + polls},
			true, 3*time.Second + time.Second + 30*time.Second + polls, 0, true},
		{"local embedder: speed unknown, no warm-up, no cool-down", opts, []bench.Trial{{8, 1}},
			bench.Workload{Embedder: hash, TokensPerChunk: 500},
			[]time.Duration{2*time.Second + polls}, true, 30*time.Second + polls, 0, false},
		// A budget a local embedder ignores paces nothing, but the trial
		// still cools down and warms up as against a quota.
		{"local embedder with a quota to measure against", opts, []bench.Trial{{8, 1}},
			bench.Workload{Embedder: hash, TokensPerMinute: 600_000, TokensPerChunk: 500},
			[]time.Duration{3*time.Second + time.Second + 2*time.Second + polls}, true, 3*time.Second + time.Second + 30*time.Second + polls, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.opts.Predict(tt.trials, tt.w)
			if len(p.Trials) != len(tt.want) {
				t.Fatalf("Predict() gave %d trials, want %d", len(p.Trials), len(tt.want))
			}
			var total time.Duration
			for i, want := range tt.want {
				total += want
				if got := p.Trials[i]; (got - want).Abs() > time.Millisecond {
					t.Errorf("trial %s: %s, want %s", tt.trials[i], got, want)
				}
			}
			if got := p.Total(); (got - total).Abs() > time.Millisecond {
				t.Errorf("Total() = %s, want %s", got, total)
			}
			if (p.Most-tt.most).Abs() > time.Millisecond || p.AtLeast != tt.atLeast || p.Extended != tt.extended || p.Quota != tt.quota {
				t.Errorf("Predict() = most %s, at least %t, extended %d, quota %t; want %s, %t, %d, %t",
					p.Most, p.AtLeast, p.Extended, p.Quota, tt.most, tt.atLeast, tt.extended, tt.quota)
			}
		})
	}
}

// TestChunkTokens checks the mean tokens of the chunks of the corpus's
// first files, against the splitter run here on each file: the files that
// fit in the bytes allowed, in order, a file larger than what is left
// skipped; none, 0.
func TestChunkTokens(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{
		"a.md": strings.Repeat("Short sentences about rivers. ", 40),
		"b.md": strings.Repeat("A much longer sentence about sluices, locks, weirs and the canals they keep in step with the sea. ", 200),
		"c.md": strings.Repeat("Tiny. ", 10),
	}
	for name, text := range texts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc := reader.DefaultConfig()
	rc.Dir = dir
	files, err := bench.Corpus(t.Context(), rc)
	if err != nil {
		t.Fatal(err)
	}
	split, err := splitter.New(splitter.Config{ChunkSize: 64, ChunkOverlap: 8})
	if err != nil {
		t.Fatal(err)
	}
	mean := func(names ...string) float64 {
		var tokens, chunks int
		for _, n := range names {
			for _, c := range split.Split(texts[n]) {
				tokens += c.Tokens
				chunks++
			}
		}
		return float64(tokens) / float64(chunks)
	}
	size := func(names ...string) int64 {
		var n int64
		for _, name := range names {
			n += int64(len(texts[name]))
		}
		return n
	}
	tests := []struct {
		name     string
		maxBytes int64
		want     float64
	}{
		{"whole corpus", 1 << 20, mean("a.md", "b.md", "c.md")},
		{"b.md does not fit: skipped, c.md taken", size("a.md", "c.md"), mean("a.md", "c.md")},
		{"only a.md fits", size("a.md"), mean("a.md")},
		{"nothing fits", 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &bench.Harness{Files: files, Pipeline: pipeline.Options{Splitter: split}}
			got, err := h.ChunkTokens(t.Context(), tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := got - tt.want; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("ChunkTokens(%d) = %v, want %v", tt.maxBytes, got, tt.want)
			}
		})
	}
	if mean("a.md") == mean("b.md") {
		t.Fatal("the corpus does not tell its files apart: a.md and b.md have chunks of the same mean size")
	}
}
