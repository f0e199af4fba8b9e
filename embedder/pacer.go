package embedder

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// pacer holds back requests the server is about to refuse. It mirrors the
// server's view of the quota from the x-ratelimit-* headers of the latest
// answer (remaining requests and tokens, refilled at the per-minute limit
// since), and after a 429 it pauses every worker until the retry delay the
// server asked for has passed.
type pacer struct {
	// rpm and tpm are the configured budgets, used as the refill rate when
	// a server reports what remains but not its limit (Azure OpenAI).
	rpm, tpm float64

	mu       sync.Mutex
	until    time.Time // no request starts before this (after a 429)
	requests quotaMirror
	tokens   quotaMirror
}

// quotaMirror estimates a server token bucket from its last report.
type quotaMirror struct {
	known     bool
	remaining float64   // as reported at 'at'
	limit     float64   // per minute; 0 if not reported
	reset     time.Time // when reported as full again; zero if not reported
	at        time.Time
	spent     float64 // sent since the report
}

// estimate returns the units available at now.
func (q *quotaMirror) estimate(now time.Time) float64 {
	avail := q.remaining
	if q.limit > 0 {
		avail = min(q.limit, avail+now.Sub(q.at).Minutes()*q.limit)
	} else if !q.reset.IsZero() && !now.Before(q.reset) {
		return float64(1 << 62)
	}
	return avail - q.spent
}

// delay returns how long to wait before sending n units, and books them.
func (q *quotaMirror) delay(now time.Time, n float64) time.Duration {
	if !q.known {
		return 0
	}
	avail := q.estimate(now)
	q.spent += n
	if avail >= n {
		return 0
	}
	if q.limit > 0 {
		return time.Duration((n - avail) / q.limit * float64(time.Minute))
	}
	if !q.reset.IsZero() {
		return q.reset.Sub(now)
	}
	return 0
}

func (q *quotaMirror) observe(h http.Header, kind string, now time.Time, budget float64) {
	rem, err := strconv.ParseFloat(h.Get("x-ratelimit-remaining-"+kind), 64)
	if err != nil {
		return
	}
	*q = quotaMirror{known: true, remaining: rem, at: now, limit: budget}
	if l, err := strconv.ParseFloat(h.Get("x-ratelimit-limit-"+kind), 64); err == nil && l > 0 {
		q.limit = l
	}
	if d, err := time.ParseDuration(h.Get("x-ratelimit-reset-" + kind)); err == nil && d >= 0 {
		q.reset = now.Add(d)
	}
}

// observe records the rate-limit headers of an answer received at now.
func (p *pacer) observe(h http.Header, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests.observe(h, "requests", now, p.rpm)
	p.tokens.observe(h, "tokens", now, p.tpm)
}

// pause holds every request back until now+d.
func (p *pacer) pause(now time.Time, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := now.Add(d); t.After(p.until) {
		p.until = t
	}
}

// wait blocks until a request of the given tokens may be sent.
func (p *pacer) wait(ctx context.Context, tokens int) error {
	now := time.Now()
	p.mu.Lock()
	d := max(p.until.Sub(now), p.requests.delay(now, 1), p.tokens.delay(now, float64(tokens)))
	p.mu.Unlock()
	return waitFor(ctx, d, "the provider's rate-limit headers ask")
}

// waitFor waits d or until ctx is done. When ctx's deadline comes before d
// ends it returns at once with an error wrapping context.DeadlineExceeded.
func waitFor(ctx context.Context, d time.Duration, why string) error {
	if d <= 0 {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Errorf("embedder: %s to wait %s, past the context deadline: %w", why, d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
