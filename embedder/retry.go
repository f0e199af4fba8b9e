package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// retryPolicy says which failures are worth another attempt and how long the
// server asked to wait. It is separate from the retry loop (retryLoop).
//
// Retried: HTTP 408, 429, 500, 502, 503, 504; attempts that timed out;
// connections reset, aborted or closed early (also under a request being
// written); malformed responses.
// Not retried: everything else, in particular refused connections (but see
// Client.restarting), host names that do not resolve, certificates that do
// not verify, servers of the other scheme, 400, 401, 403, 404, a 429
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
	switch {
	case timedOut(err),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		// A connection the server closed (or reset) while the request was
		// being written, noticed first by the transport's reader, which
		// closed it under the writer: the server's idle-connection race.
		errors.Is(err, net.ErrClosed),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// restarting reports whether err is a connection refused by a server that
// has answered this client before: one restarting (a rolling update of a
// self-hosted model server, say), which the retries wait out. A connection
// refused before any answer is not retried: the URL is wrong or the server
// is not running, which waiting does not change.
func (c *Client) restarting(err error) bool {
	return c.answered.Load() && errors.Is(err, ErrTransport) && errors.Is(err, syscall.ECONNREFUSED)
}

// timedOut reports whether err is an attempt that ran out of time: its
// context's deadline (embedder.timeout) or a network timeout. Such an
// attempt is retried, and its hint is about embedder.timeout.
func timedOut(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
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
// wrapping both context.DeadlineExceeded and the last failure. When the
// retries are used up, the last failure also says how many attempts were
// made and what to change (see retriesUsedUp).
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
	start := time.Now()
	tries := 0
	// transient: the last attempt failed in a way worth retrying. When the
	// loop then ends with that failure and ctx is not done, the retries are
	// used up.
	transient := false
	// first is the failure class (see failureClass) of the first failed
	// attempt, and mixed says that a later one failed otherwise: the hint
	// of used-up retries claims the same failure of every attempt only when
	// that is what happened.
	first, mixed := "", false
	op := func() ([][]float32, error) {
		if tries > 0 {
			c.stats.retries.Add(1)
		}
		tries++
		transient = false
		vecs, err := attempt()
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, backoff.Permanent(ctx.Err())
		}
		if !retryable(err) && !c.restarting(err) {
			return nil, backoff.Permanent(err)
		}
		after := min(retryAfter(err), c.cfg.MaxRetryAfter)
		if dl, ok := ctx.Deadline(); ok && after > 0 && time.Until(dl) < after {
			return nil, backoff.Permanent(fmt.Errorf(
				"embedder: the server asked to retry after %s, past the context deadline: %w (last error: %w)",
				after, context.DeadlineExceeded, err))
		}
		hint.hint = after
		transient = true
		if class := failureClass(err); first == "" {
			first = class
		} else if class != first {
			mixed = true
		}
		return nil, err
	}
	notify := func(err error, delay time.Duration) {
		c.log.LogAttrs(ctx, slog.LevelDebug, "embedding request will be retried",
			slog.Int("attempt", tries), slog.Duration("delay", delay), slog.String("error", err.Error()))
	}
	vecs, err := backoff.RetryNotifyWithData(op, backoff.WithContext(b, ctx), notify)
	if err != nil {
		c.stats.failures.Add(1)
		if transient && ctx.Err() == nil {
			c.retriesUsedUp(err, tries, time.Since(start), mixed)
		}
	}
	return vecs, err
}

// failureClass names the way a retryable attempt failed, as
// retriesUsedUp tells them apart: a rate limit, another error answer, a
// timeout, another transport failure or a malformed answer.
func failureClass(err error) string {
	var (
		apiErr  *APIError
		netErr  *TransportError
		respErr *ResponseError
	)
	switch {
	case errors.As(err, &apiErr) && apiErr.rateLimited():
		return "rate limit"
	case errors.As(err, &apiErr):
		return "server"
	case errors.As(err, &netErr) && timedOut(netErr.Err):
		return "timeout"
	case errors.As(err, &netErr):
		return "transport"
	case errors.As(err, &respErr):
		return "response"
	}
	return "other"
}

// retriesUsedUp gives err, the failure of the last of attempts attempts
// made over elapsed, all of which failed in a way worth retrying, a hint
// that says so and what to change: for a rate limit the request budgets,
// for a server error the provider's health, for a timeout
// embedder.timeout; and embedder.maxRetries for each. mixed says that
// the attempts did not all fail the way the last one did: the hint then
// speaks of the last attempt, not of every one. It changes err in place,
// so that its type and what errors.Is and errors.As find in it stay the
// same. The hint holds settings, counts and the endpoint's scheme and
// host only: no credentials.
func (c *Client) retriesUsedUp(err error, attempts int, elapsed time.Duration, mixed bool) {
	var (
		apiErr  *APIError
		netErr  *TransportError
		respErr *ResponseError
	)
	switch {
	case errors.As(err, &apiErr):
		if apiErr.rateLimited() {
			apiErr.Hint = "rate limited on " + c.tried(attempts, elapsed, mixed) + ": set embedder.requestsPerMinute (now " +
				budget(c.cfg.RequestsPerMinute) + ") and embedder.tokensPerMinute (now " + budget(c.cfg.TokensPerMinute) +
				") to your quota (less if other clients share it; see the embedder README), or " + c.moreRetries()
		} else {
			apiErr.Hint = "the provider failed on " + c.tried(attempts, elapsed, mixed) + ", a fault on its side: check " +
				c.statusAdvice() + ", try again later, or " + c.moreRetries()
		}
	case errors.As(err, &netErr):
		if timedOut(netErr.Err) {
			netErr.hint = "timed out on " + c.tried(attempts, elapsed, mixed) + ": raise embedder.timeout (now " + c.cfg.Timeout.String() +
				") if the provider needs longer to answer requests this large (or lower " + c.batchSetting + "), or " + c.moreRetries()
		} else {
			netErr.hint = "failed on " + c.tried(attempts, elapsed, mixed) + ": check the network path to the provider and " +
				c.statusAdvice() + ", or " + c.moreRetries()
		}
	case errors.As(err, &respErr):
		respErr.hint = c.tried(attempts, elapsed, mixed) + " got a malformed answer: check that " + c.origin() +
			" serves an OpenAI-compatible embeddings API, or " + c.moreRetries()
	}
}

// tried says how many attempts were made and over how long, e.g. "every
// one of 4 attempts (retried 3 times with exponential backoff over 2.5s)",
// or, when mixed (the earlier attempts failed otherwise than the last),
// "the last of 4 attempts (retried 3 times with exponential backoff over
// 2.5s; the earlier ones failed otherwise)".
func (c *Client) tried(attempts int, elapsed time.Duration, mixed bool) string {
	if attempts <= 1 {
		return fmt.Sprintf("the only attempt (embedder.maxRetries is %d: no retries)", c.cfg.MaxRetries)
	}
	times := fmt.Sprintf("%d times", attempts-1)
	if attempts == 2 {
		times = "once"
	}
	if mixed {
		earlier := "the earlier ones"
		if attempts == 2 {
			earlier = "the first"
		}
		return fmt.Sprintf("the last of %d attempts (retried %s with exponential backoff over %s; %s failed otherwise)", attempts, times, roundElapsed(elapsed), earlier)
	}
	return fmt.Sprintf("every one of %d attempts (retried %s with exponential backoff over %s)", attempts, times, roundElapsed(elapsed))
}

// moreRetries says to raise embedder.maxRetries, and what it is now.
func (c *Client) moreRetries() string {
	if c.cfg.MaxRetries < 0 {
		return fmt.Sprintf("set embedder.maxRetries to retry with exponential backoff (now %d, no retries; 0 means the default, %d)",
			c.cfg.MaxRetries, DefaultMaxRetries)
	}
	return fmt.Sprintf("raise embedder.maxRetries (now %d) to keep retrying for longer", c.cfg.MaxRetries)
}

// statusAdvice names where to check the provider's health, for "check ...".
func (c *Client) statusAdvice() string {
	switch {
	case c.provider == ProviderAzureOpenAI:
		return "the resource's Resource health in the Azure portal (and https://azure.status.microsoft)"
	case strings.EqualFold(c.host(), "api.openai.com"):
		return "OpenAI's status page (https://status.openai.com)"
	}
	return "the health and logs of the server at " + c.origin()
}

// host returns the host of the endpoint, "" if it cannot be parsed.
func (c *Client) host() string {
	u, err := url.Parse(c.url)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// origin returns the endpoint's scheme and host, e.g.
// http://localhost:11434: no path, query or credentials.
func (c *Client) origin() string {
	u, err := url.Parse(c.url)
	if err != nil || u.Host == "" {
		return "the configured endpoint"
	}
	return u.Scheme + "://" + u.Host
}

// budget gives the value of a per-minute budget setting.
func budget(n int) string {
	if n <= 0 {
		return "unlimited"
	}
	return strconv.Itoa(n)
}

// roundElapsed rounds d for a message: to the millisecond below a second,
// to a tenth of a second above.
func roundElapsed(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
