package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// retryPolicy says which failures are worth another attempt and how long the
// server asked to wait. It is separate from the retry loop (retryLoop).
//
// Retried: HTTP 408, 429, 500, 502, 503, 504; attempts that timed out;
// connections reset, aborted or closed early; malformed responses.
// Not retried: everything else, in particular 400, 401, 403, 404, a 429
// saying the quota or credits are exhausted (insufficient_quota), a 429
// saying the request is larger than the quota ever admits ("Request too
// large"), a dimension mismatch, and a done parent context.
func retryable(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case 429:
			return apiErr.rateLimited()
		case 408, 500, 502, 503, 504:
			return true
		}
		return false
	}
	if errors.Is(err, ErrBadResponse) {
		return true
	}
	if !errors.Is(err, ErrTransport) {
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout(),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// retryAfter returns the delay the server asked for, if any.
func retryAfter(err error) time.Duration {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.RetryAfter
	}
	return 0
}

// hintBackOff is an exponential backoff whose next delay is replaced by the
// server's Retry-After hint when one was given.
type hintBackOff struct {
	backoff.BackOff
	hint time.Duration
}

// NextBackOff returns the pending hint, if any, else the computed delay.
func (h *hintBackOff) NextBackOff() time.Duration {
	d := h.BackOff.NextBackOff()
	if h.hint > 0 && d != backoff.Stop {
		d, h.hint = h.hint, 0
	}
	return d
}

// retryLoop runs attempt until it succeeds, fails permanently, the retries
// are used up or ctx is done. Waiting ends at once when ctx is done; a server
// hint that would outlast ctx's deadline ends the loop at once with an error
// wrapping both context.DeadlineExceeded and the last failure.
func (c *Client) retryLoop(ctx context.Context, attempt func() ([][]float32, error)) ([][]float32, error) {
	exp := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.cfg.RetryInitialDelay),
		backoff.WithMaxInterval(c.cfg.RetryMaxDelay),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0),
	)
	hint := &hintBackOff{BackOff: exp}
	b := backoff.WithMaxRetries(hint, uint64(max(c.cfg.MaxRetries, 0)))
	tries := 0
	op := func() ([][]float32, error) {
		if tries > 0 {
			c.stats.retries.Add(1)
		}
		tries++
		vecs, err := attempt()
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, backoff.Permanent(ctx.Err())
		}
		if !retryable(err) {
			return nil, backoff.Permanent(err)
		}
		after := min(retryAfter(err), c.cfg.MaxRetryAfter)
		if dl, ok := ctx.Deadline(); ok && after > 0 && time.Until(dl) < after {
			return nil, backoff.Permanent(fmt.Errorf(
				"embedder: the server asked to retry after %s, past the context deadline: %w (last error: %w)",
				after, context.DeadlineExceeded, err))
		}
		hint.hint = after
		return nil, err
	}
	notify := func(err error, delay time.Duration) {
		c.log.LogAttrs(ctx, slog.LevelDebug, "embedding request will be retried",
			slog.Int("attempt", tries), slog.Duration("delay", delay), slog.String("error", err.Error()))
	}
	vecs, err := backoff.RetryNotifyWithData(op, backoff.WithContext(b, ctx), notify)
	if err != nil {
		c.stats.failures.Add(1)
	}
	return vecs, err
}
