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
		{"near best prefers smaller batch", []bench.Result{res(512, 4, 1000, 0), res(256, 4, 990, 0)}, 1},
		{"beyond noise the faster wins", []bench.Result{res(256, 8, 1000, 0), res(256, 4, 900, 0)}, 0},
		{"above the quota counts as the quota", []bench.Result{quota(256, 16, 1050, 1.05), quota(8, 1, 1000, 1.0)}, 1},
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
