package bench_test

import (
	"fmt"
	"os"

	"github.com/sluice-dev/sluice/pipeline/bench"
)

// Results of a benchmark are printed as a table with the winner marked,
// and the recommendation is a line of its own.
func ExampleWriteTable() {
	quota := func(v float64) *float64 { return &v }
	results := []bench.Result{
		{BatchSize: 16, Concurrency: 1, ChunksPerRequest: 16, ChunksPerS: 20, TokensPerS: 10240, TPMUtilization: quota(0.61), P50Ms: 48, P95Ms: 60, PeakRSSMB: 40},
		{BatchSize: 256, Concurrency: 4, ChunksPerRequest: 64, ChunksPerS: 32, TokensPerS: 16384, TPMUtilization: quota(0.98), P50Ms: 900, P95Ms: 1100, PeakRSSMB: 52},
		{BatchSize: 256, Concurrency: 16, ChunksPerRequest: 64, ChunksPerS: 33, TokensPerS: 16500, TPMUtilization: quota(0.99), HTTP429: 12, Retries: 12, P50Ms: 950, P95Ms: 2100, PeakRSSMB: 60},
	}
	if err := bench.WriteTable(os.Stdout, results); err != nil {
		fmt.Println(err)
	}
	// Output:
	// batch  conc  chunks/req  chunks/s  tokens/s  tpm used  429  retries  p50 ms  p95 ms  rss MB
	//    16     1        16.0      20.0     10240     61.0%    0        0    48.0    60.0    40.0
	//   256     4        64.0      32.0     16384     98.0%    0        0   900.0  1100.0    52.0  *
	//   256    16        64.0      33.0     16500     99.0%   12       12   950.0  2100.0    60.0
	// recommended: batchSize 256, concurrency 4: 16k tokens/s, 0 throttled, 98% of the token quota
}

// Pick chooses the fastest configuration that was never throttled.
func ExamplePick() {
	results := []bench.Result{
		{BatchSize: 8, Concurrency: 4, TokensPerS: 5000},
		{BatchSize: 64, Concurrency: 4, TokensPerS: 20000},
		{BatchSize: 512, Concurrency: 4, TokensPerS: 25000, HTTP429: 7},
	}
	fmt.Println(results[bench.Pick(results)].Trial())
	// Output: 64x4
}
