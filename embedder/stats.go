package embedder

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are the counters of an HTTP embedder since it was created. The
// pipeline, the bench command and the metrics endpoint read them through
// StatsReporter without provider-specific code.
type Stats struct {
	Requests   int64 // HTTP attempts sent
	Throttled  int64 // attempts answered 429 for a rate limit (not for an exhausted quota, nor a request too large for it)
	Retries    int64 // attempts that were retries of a failed one
	Failures   int64 // requests that failed for good, retries exhausted or permanent
	Succeeded  int64 // attempts that succeeded: the requests TokensSent and InputsSent count
	TokensSent int64 // tokens of successful requests
	InputsSent int64 // texts of successful requests
	// Concurrency is the current adaptive cap on requests in flight: the
	// configured concurrency, lowered after 429s and climbing back.
	Concurrency float64
	// P50, P95 and P99 are latency percentiles of successful attempts,
	// accurate to about 10%.
	P50, P95, P99 time.Duration
}

// StatsReporter is implemented by embedders that keep Stats: the openai and
// azure-openai clients (*Client). The hash embedder does not.
type StatsReporter interface {
	Stats() Stats
}

// latency histogram: bucket i holds durations in [base*g^(i-1), base*g^i).
const (
	histBase    = 100 * time.Microsecond
	histGrowth  = 1.2
	histBuckets = 96 // up to about 100µs*1.2^95, several hours
)

type stats struct {
	requests, throttled, retries, failures atomic.Int64
	hist                                   [histBuckets]atomic.Int64
	observe                                func(time.Duration)

	// The successful attempts and what they sent, counted together so
	// that a snapshot's InputsSent are the inputs of exactly its Succeeded
	// requests: their ratio is a mean batch, never above the largest.
	mu                        sync.Mutex
	succeeded, tokens, inputs int64
}

// success counts a successful attempt that sent inputs texts of tokens
// tokens and took d.
func (s *stats) success(d time.Duration, inputs, tokens int) {
	s.mu.Lock()
	s.succeeded++
	s.inputs += int64(inputs)
	s.tokens += int64(tokens)
	s.mu.Unlock()
	s.latency(d)
}

func (s *stats) latency(d time.Duration) {
	i := 0
	if d >= histBase {
		i = 1 + int(math.Log(float64(d)/float64(histBase))/math.Log(histGrowth))
	}
	s.hist[min(i, histBuckets-1)].Add(1)
	if s.observe != nil {
		s.observe(d)
	}
}

func (s *stats) snapshot() Stats {
	st := Stats{
		Requests:  s.requests.Load(),
		Throttled: s.throttled.Load(),
		Retries:   s.retries.Load(),
		Failures:  s.failures.Load(),
	}
	s.mu.Lock()
	st.Succeeded, st.TokensSent, st.InputsSent = s.succeeded, s.tokens, s.inputs
	s.mu.Unlock()
	var counts [histBuckets]int64
	var total int64
	for i := range s.hist {
		counts[i] = s.hist[i].Load()
		total += counts[i]
	}
	st.P50 = percentile(&counts, total, 0.50)
	st.P95 = percentile(&counts, total, 0.95)
	st.P99 = percentile(&counts, total, 0.99)
	return st
}

// percentile returns the upper bound of the bucket holding quantile q.
func percentile(counts *[histBuckets]int64, total int64, q float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range counts {
		seen += n
		if seen >= rank {
			return time.Duration(float64(histBase) * math.Pow(histGrowth, float64(i)))
		}
	}
	return 0
}
