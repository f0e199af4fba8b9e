package bench_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/bench"
)

func res(batch, conc int, tps float64, n429 int64) bench.Result {
	return bench.Result{BatchSize: batch, Concurrency: conc, TokensPerS: tps, HTTP429: n429}
}

func quota(batch, conc int, tps, util float64) bench.Result {
	r := res(batch, conc, tps, 0)
	r.TPMUtilization = &util
	return r
}

func counted(r bench.Result, requests int64) bench.Result {
	r.Requests = requests
	return r
}

func sent(r bench.Result, chunksPerRequest float64) bench.Result {
	r.ChunksPerRequest = chunksPerRequest
	return r
}

// TestPick checks Pick's rules: the fastest unthrottled result, and among
// those within 2% of it (or one request of their window) the fewest
// requests per second (the largest batch actually sent, within 10%), then
// the lowest concurrency, then the smallest batch size.
func TestPick(t *testing.T) {
	failed := bench.Result{BatchSize: 2048, Concurrency: 16, Error: "boom"}
	tests := []struct {
		name    string
		results []bench.Result
		want    int
	}{
		{"none", nil, -1},
		{"all failed", []bench.Result{failed}, -1},
		{"fastest unthrottled", []bench.Result{res(8, 1, 100, 0), res(64, 1, 900, 0), res(256, 4, 2000, 3)}, 1},
		{"failed never wins", []bench.Result{res(8, 1, 100, 0), failed}, 0},
		{"near best prefers lower concurrency", []bench.Result{res(256, 8, 1000, 0), res(256, 4, 985, 0)}, 1},
		{"near best prefers larger batch", []bench.Result{res(256, 4, 990, 0), res(512, 4, 1000, 0)}, 1},
		// The audit's case: at equal throughput 1x4 sends 256 times the
		// requests of 256x4, the worst choice against an RPM limit.
		{"equal throughput: fewest requests", []bench.Result{sent(res(1, 4, 1000, 0), 1), sent(res(256, 4, 1000, 0), 256)}, 1},
		{"fewer requests beat lower concurrency", []bench.Result{sent(res(64, 1, 1000, 0), 64), sent(res(256, 4, 995, 0), 256)}, 1},
		{"the batch sent counts, not the setting", []bench.Result{sent(res(1024, 1, 1000, 0), 40), sent(res(64, 4, 1000, 0), 64)}, 1},
		{"batches cut to the same size: smaller setting", []bench.Result{sent(res(512, 4, 1000, 0), 149.2), sent(res(256, 4, 1000, 0), 148)}, 1},
		// Recorded by benchmarks/bench-sim.sh: the token cap cuts every
		// batch to about 19 chunks, a few percent apart.
		{"batches within 10%: lower concurrency", []bench.Result{sent(res(32, 16, 1000, 0), 19.4), sent(res(32, 4, 1000, 0), 19.0), sent(res(8, 4, 1000, 0), 8)}, 1},
		{"batches beyond 10%: larger batch", []bench.Result{sent(res(32, 16, 1000, 0), 19.4), sent(res(16, 4, 1000, 0), 16)}, 0},
		{"beyond noise the faster wins", []bench.Result{res(256, 8, 1000, 0), res(256, 4, 900, 0)}, 0},
		{"beyond noise the faster small batch wins", []bench.Result{res(1, 1, 1000, 0), res(256, 1, 900, 0)}, 0},
		// A window of 2 requests of a second's quota each reads up to one
		// request low: 97.2% of the quota is as fast as 100%.
		{"within one request of its window", []bench.Result{counted(sent(res(1, 4, 9997, 0), 1), 600), counted(sent(res(256, 4, 9718, 0), 149), 2)}, 1},
		{"one request counts for at most 10%", []bench.Result{counted(sent(res(1, 4, 1000, 0), 1), 600), counted(sent(res(256, 4, 800, 0), 149), 2)}, 0},
		{"above the quota counts as the quota", []bench.Result{quota(256, 16, 1050, 1.05), quota(256, 4, 1000, 1.0)}, 1},
		{"below the quota the faster wins", []bench.Result{quota(256, 16, 1000, 1.0), quota(8, 1, 900, 0.9)}, 0},
		{"all throttled: fewest 429", []bench.Result{res(8, 1, 100, 5), res(64, 1, 900, 2), res(256, 4, 2000, 9)}, 1},
		{"all throttled tie: faster", []bench.Result{res(8, 1, 100, 2), res(64, 1, 900, 2)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bench.Pick(tt.results); got != tt.want {
				t.Errorf("Pick() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRecommendation(t *testing.T) {
	u := 0.97
	tests := []struct {
		name    string
		results []bench.Result
		want    []string
	}{
		{"plain", []bench.Result{res(256, 4, 41234, 0)}, []string{"batchSize 256, concurrency 4: 41k tokens/s, 0 throttled"}},
		{"quota", []bench.Result{{BatchSize: 64, Concurrency: 2, TokensPerS: 9000, TPMUtilization: &u}}, []string{"batchSize 64, concurrency 2: 9.0k tokens/s, 0 throttled, 97% of the token quota"}},
		{"throttled", []bench.Result{res(8, 1, 100, 3)}, []string{"3 throttled", "embedder.tokensPerMinute"}},
		{"failed", []bench.Result{{Error: "x"}}, []string{"every configuration failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bench.Recommendation(tt.results)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Recommendation() = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

// TestReason: a failed result's reason is its error without the
// configuration its line names already; another prefix is kept.
func TestReason(t *testing.T) {
	tests := []struct{ err, want string }{
		{"bench: trial 4x1: embedder: refused", "embedder: refused"},
		{"bench: trial 8x2: opening the store: locked", "opening the store: locked"},
		{"bench: trial 4x2: embedder: refused", "bench: trial 4x2: embedder: refused"}, // another configuration's
		{"embedder: refused", "embedder: refused"},
		{"", ""},
	}
	for _, tt := range tests {
		r := bench.Result{BatchSize: 4, Concurrency: 1, Error: tt.err}
		if tt.err != "" && strings.HasPrefix(tt.err, "bench: trial 8x2") {
			r.BatchSize, r.Concurrency = 8, 2
		}
		if got := r.Reason(); got != tt.want {
			t.Errorf("Reason() of %q = %q, want %q", tt.err, got, tt.want)
		}
	}
}
