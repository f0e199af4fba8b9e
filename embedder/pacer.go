package embedder

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/internal/retryafter"
	"github.com/sluice-dev/sluice/internal/wait"
)

// pacer holds back requests the server is about to refuse. It mirrors the
// server's view of the quota from the x-ratelimit-* headers of the latest
// answer (remaining requests and tokens, refilled at the per-minute limit
// since), and after a 429 it pauses every worker until the retry delay the
// server asked for has passed.
//
// A report is dated when its request was sent: the server computed what
// remains when it admitted the request, so the quota refilled while the
// request was being served. Requests sent after that time are not in the
// report, and count as spent; the pacer keeps a short record of the
// requests it let through (bookings) to know which.
type pacer struct {
	// rpm and tpm are the configured budgets, used as the refill rate when
	// a server reports what remains but not its limit (Azure OpenAI).
	rpm, tpm float64

	mu       sync.Mutex
	until    time.Time // no request starts before this (after a 429)
	requests quotaMirror
	tokens   quotaMirror
	booked   []*booking // recent bookings, in the order they were made
}

// booking is one request the pacer let through.
type booking struct {
	// at is when the request was sent, once sent is set; until then, when
	// the pacer expected it to be.
	at     time.Time
	sent   bool
	tokens float64
}

// Bounds of the pacer's record of bookings: a booking is kept no longer
// than bookingTTL after it was sent, and at most maxBookings are kept (the
// oldest are dropped first). A report older than that, or with more
// requests sent since, is long out of date.
const (
	bookingTTL  = time.Minute
	maxBookings = 4 * MaxConcurrency
)

// quotaMirror estimates a server token bucket from its last report.
type quotaMirror struct {
	known     bool
	remaining float64   // as reported at 'at'
	limit     float64   // per minute; 0 if not reported
	reset     time.Time // when reported as full again; zero if not reported
	at        time.Time // when the request whose answer reported it was sent
	spent     float64   // booked since 'at', not in the report
}

// estimate returns the units available at now.
func (q *quotaMirror) estimate(now time.Time) float64 {
	avail := q.remaining
	if q.limit > 0 {
		avail = min(q.limit, avail+max(now.Sub(q.at), 0).Minutes()*q.limit)
	} else if !q.reset.IsZero() && !now.Before(q.reset) {
		return float64(1 << 62)
	}
	return avail - q.spent
}

// delay returns how long to wait before sending n units, and counts them
// as spent.
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
		return retryafter.Scale((n-avail)/q.limit, time.Minute) // saturates
	}
	if !q.reset.IsZero() {
		return q.reset.Sub(now)
	}
	return 0
}

// observe records the report of an answer to a request sent at sent, of
// which spent units were booked after sent. A report older than the one
// held (answers may arrive out of order) is ignored, and so is one whose
// remaining units are not a number (NaN); a limit that is not a finite
// number above 0 is not used as the refill rate.
func (q *quotaMirror) observe(h http.Header, kind string, sent time.Time, budget, spent float64) {
	rem, err := strconv.ParseFloat(h.Get("x-ratelimit-remaining-"+kind), 64)
	if err != nil || math.IsNaN(rem) || (q.known && sent.Before(q.at)) {
		return
	}
	*q = quotaMirror{known: true, remaining: rem, at: sent, limit: budget, spent: spent}
	if l, err := strconv.ParseFloat(h.Get("x-ratelimit-limit-"+kind), 64); err == nil && l > 0 && !math.IsInf(l, 1) {
		q.limit = l
	}
	if d, err := time.ParseDuration(h.Get("x-ratelimit-reset-" + kind)); err == nil && d >= 0 {
		q.reset = sent.Add(d)
	}
}

// observe records the rate-limit headers of the answer to a request sent
// at sent (see sent): what remained when the server admitted it, less the
// requests booked to be sent after it.
func (p *pacer) observe(h http.Header, sent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var requests, tokens float64
	for _, b := range p.booked {
		if !b.sent || b.at.After(sent) {
			requests++
			tokens += b.tokens
		}
	}
	p.requests.observe(h, "requests", sent, p.rpm, requests)
	p.tokens.observe(h, "tokens", sent, p.tpm, tokens)
}

// pause holds every request back until now+d.
func (p *pacer) pause(now time.Time, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := now.Add(d); t.After(p.until) {
		p.until = t
	}
}

// reserve returns how long a request of the given tokens must wait at now,
// and books it, to be sent once that wait is over; the caller dates the
// booking with sent when the request is sent, or drops it if it never is.
func (p *pacer) reserve(now time.Time, tokens int) (time.Duration, *booking) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := max(p.until.Sub(now), p.requests.delay(now, 1), p.tokens.delay(now, float64(tokens)), 0)
	p.prune(now)
	b := &booking{at: now.Add(d), tokens: float64(tokens)}
	p.booked = append(p.booked, b)
	return d, b
}

// prune forgets the bookings no report can count any more: sent no later
// than the latest report of each kind the server sent, or more than
// bookingTTL before now; and beyond maxBookings, the oldest. p.mu must be
// held.
func (p *pacer) prune(now time.Time) {
	horizon := now.Add(-bookingTTL)
	if p.requests.known && p.tokens.known {
		latest := p.requests.at
		if p.tokens.at.Before(latest) {
			latest = p.tokens.at
		}
		if latest.After(horizon) {
			horizon = latest
		}
	}
	p.booked = slices.DeleteFunc(p.booked, func(b *booking) bool { return b.sent && !b.at.After(horizon) })
	if n := len(p.booked) - (maxBookings - 1); n > 0 {
		p.booked = slices.Delete(p.booked, 0, n)
	}
}

// sent dates booking b: its request was sent at at.
func (p *pacer) sent(b *booking, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.at, b.sent = at, true
}

// drop forgets booking b, whose request was not sent, and gives back what
// it took from the mirrors (which count every booking not yet sent).
func (p *pacer) drop(b *booking) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.booked)
	p.booked = slices.DeleteFunc(p.booked, func(x *booking) bool { return x == b })
	if len(p.booked) == n || b.sent {
		return
	}
	if p.requests.known {
		p.requests.spent = max(p.requests.spent-1, 0)
	}
	if p.tokens.known {
		p.tokens.spent = max(p.tokens.spent-b.tokens, 0)
	}
}

// wait blocks until a request of the given tokens may be sent, and returns
// its booking (see reserve).
func (p *pacer) wait(ctx context.Context, tokens int) (*booking, error) {
	d, b := p.reserve(time.Now(), tokens)
	if err := waitFor(ctx, d, "the provider's rate-limit headers ask"); err != nil {
		p.drop(b)
		return nil, err
	}
	return b, nil
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
	return wait.Sleep(ctx, d)
}
