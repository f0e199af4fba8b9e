package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Result is the measurement of one trial. Its JSON shape is part of the
// command-line contract (`sluice bench --json`): keys may be added, never
// renamed.
type Result struct {
	// BatchSize and Concurrency are the configuration measured.
	BatchSize   int `json:"batch_size"`
	Concurrency int `json:"concurrency"`
	// ChunksPerS and TokensPerS are the chunks written and the tokens
	// embedded per second in the measured window.
	ChunksPerS float64 `json:"chunks_per_s"`
	TokensPerS float64 `json:"tokens_per_s"`
	// TPMUtilization is the share of the tokens-per-minute quota used in
	// the measured window (1 is all of it); null without a quota.
	TPMUtilization *float64 `json:"tpm_utilization"`
	// HTTP429 counts the requests answered 429 (throttled) and Retries the
	// retried requests of the whole trial, warm-up included; both 0 for
	// embedders without HTTP.
	HTTP429 int64 `json:"http_429"`
	Retries int64 `json:"retries"`
	// P50Ms and P95Ms are percentiles of the request latency in
	// milliseconds, of the requests Requests counts, also when an answer
	// came just before the window opened: of each HTTP attempt of theirs
	// that succeeded (time waiting for the quota excluded), or of each
	// Embed call for other embedders.
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	// PeakRSSMB is the peak resident set size in MiB (VmHWM) of the process
	// that ran the trial: the trial's own when run by Exec, the running
	// peak of the process when run in-process.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// Requests counts the embedding requests of the measured window: those
	// that completed after the one that opened it, up to the one that
	// closed it.
	Requests int64 `json:"requests"`
	// ChunksPerRequest is the mean batch actually sent: the inputs of the
	// embedding requests completed in the measured window over their
	// number, so never above BatchSize; below it when the embedder's
	// request caps (maxTokensPerRequest, or 90% of a second's share of
	// tokensPerMinute) cut batches smaller.
	ChunksPerRequest float64 `json:"chunks_per_request"`
	// Seconds is the length of the measured window, which runs from one
	// embedding request's completion to another's, so that it holds the
	// whole time of the requests it counts.
	Seconds float64 `json:"seconds"`
	// Error, when set, says why the trial could not be measured; the other
	// figures are then zero here, and null (JSON), empty (CSV) or "-" (the
	// table) when written.
	Error string `json:"error,omitempty"`
}

// Trial returns the configuration r measured.
func (r Result) Trial() Trial { return Trial{BatchSize: r.BatchSize, Concurrency: r.Concurrency} }

// Reason returns Error without the "bench: trial BxC: " it starts with, for
// a line that names the configuration already.
func (r Result) Reason() string {
	return strings.TrimPrefix(r.Error, fmt.Sprintf("bench: trial %s: ", r.Trial()))
}

// nearBest is the share of the best throughput within which Pick counts
// two results as equally fast: differences that small are measurement
// noise.
const nearBest = 0.98

// sameBatch is the share of the largest mean batch within which Pick
// counts two results as sending requests as often: the request caps cut
// batches by tokens, so equal caps give mean batches a few chunks apart,
// and a few percent more requests per second matter less than the
// concurrency.
const sameBatch = 0.9

// Pick returns the index of the winning result, or -1 if every trial
// failed. The winner is chosen among the unthrottled results (no 429) by
// these rules, in order:
//
//  1. Throughput: only results whose sustained tokens per second are
//     within 2% of the best, or within one request of their window (a
//     window counts whole requests; at most 10%), are kept. Throughput
//     above the token quota (a window that caught a burst) counts as the
//     quota: no setting beats the quota in the long run.
//  2. Fewest requests per second, i.e. the largest batches actually sent
//     (ChunksPerRequest, or BatchSize for a result that does not record
//     it): at equal throughput, fewer requests stay further from a
//     provider's requests-per-minute limit and pay less per-request
//     overhead. Mean batches within 10% of the largest count as equal.
//  3. Lowest concurrency: fewer requests in flight hold less memory and
//     are kinder to the quota.
//  4. Smallest batch size setting: when the request caps cut batches to
//     the same size, the smaller setting sends the same requests.
//
// So at equal throughput 256x4 beats 1x4 (one request where 1x4 sends 256),
// and 256x4 beats 256x16. When every result was throttled, the one with
// the fewest 429s wins, by throughput on a tie.
func Pick(results []Result) int {
	ok := make([]int, 0, len(results))
	for i, r := range results {
		if r.Error == "" && r.HTTP429 == 0 {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		best := -1
		for i, r := range results {
			if r.Error != "" {
				continue
			}
			if best < 0 || r.HTTP429 < results[best].HTTP429 ||
				r.HTTP429 == results[best].HTTP429 && r.TokensPerS > results[best].TokensPerS {
				best = i
			}
		}
		return best
	}
	top := 0.0
	for _, i := range ok {
		top = max(top, sustained(results[i]))
	}
	fast := ok[:0]
	for _, i := range ok {
		if r := results[i]; sustained(r)*(1+resolution(r)) >= nearBest*top {
			fast = append(fast, i)
		}
	}
	largest := 0.0
	for _, i := range fast {
		largest = max(largest, sentBatch(results[i]))
	}
	best := -1
	for _, i := range fast {
		r := results[i]
		if sentBatch(r) < sameBatch*largest {
			continue
		}
		if best < 0 || cheaper(r, results[best]) {
			best = i
		}
	}
	return best
}

// sustained is the throughput r can keep up: at most the token quota.
func sustained(r Result) float64 {
	if u := r.TPMUtilization; u != nil && *u > 1 {
		return r.TokensPerS / *u
	}
	return r.TokensPerS
}

// maxResolution caps resolution.
const maxResolution = 0.1

// resolution is the share of r's throughput that one request of its window
// makes up (1/Requests, at most maxResolution; 0 when r does not record
// its requests): a window counts whole requests, so a window of a few
// large requests may read that much low.
func resolution(r Result) float64 {
	if r.Requests <= 0 {
		return 0
	}
	return min(1/float64(r.Requests), maxResolution)
}

// sentBatch is the mean batch r actually sent (ChunksPerRequest), or its
// BatchSize when it does not say. At equal throughput, requests per second
// go as its inverse; unlike a count of requests in a short window, it does
// not jump by a whole request.
func sentBatch(r Result) float64 {
	if r.ChunksPerRequest > 0 {
		return r.ChunksPerRequest
	}
	return float64(r.BatchSize)
}

// cheaper breaks a tie between two results as fast as each other and
// sending requests as often: the lower concurrency, then the smaller batch
// size.
func cheaper(a, b Result) bool {
	if a.Concurrency != b.Concurrency {
		return a.Concurrency < b.Concurrency
	}
	return a.BatchSize < b.BatchSize
}

// Recommendation is the one-line advice for the winner, such as
// "batchSize 256, concurrency 4: 41k tokens/s, 0 throttled".
func Recommendation(results []Result) string {
	i := Pick(results)
	if i < 0 {
		return "none: every configuration failed (see the errors above)"
	}
	return describe(results, i)
}

// describe is the one-line summary of results[i], or of there being none
// if i < 0.
func describe(results []Result, i int) string {
	if i < 0 {
		return "none (every configuration measured failed)"
	}
	r := results[i]
	s := fmt.Sprintf("batchSize %d, concurrency %d: %s tokens/s, %d throttled", r.BatchSize, r.Concurrency, human(r.TokensPerS), r.HTTP429)
	if r.TPMUtilization != nil {
		s += fmt.Sprintf(", %.0f%% of the token quota", 100**r.TPMUtilization)
	}
	if r.HTTP429 > 0 {
		s += " (every configuration was throttled; lower embedder.tokensPerMinute/requestsPerMinute to the real quota)"
	}
	return s
}

// human formats a rate compactly: 950, 9.5k, 41k, 1.2M.
func human(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// percentile returns the q-quantile (0 < q <= 1) of samples by the
// nearest-rank method: the smallest sample with at least q of the samples
// at or below it. It sorts samples in place and returns 0 for none.
func percentile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(math.Ceil(q * float64(len(samples))))
	return samples[min(max(rank, 1), len(samples))-1]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
