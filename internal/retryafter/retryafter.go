// Package retryafter reads the delay a throttled HTTP service asks its
// client to wait before trying again, for the embedder client and the
// Cloud AI Search store.
package retryafter

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Parse returns the delay the headers h ask for: retry-after-ms, then
// x-ms-retry-after-ms (milliseconds, as OpenAI and Azure send them), then
// Retry-After (seconds, or an HTTP date after now). It returns 0 when none
// is set or none holds a positive delay. The delay is never negative: one
// too long for a time.Duration (a number of milliseconds or seconds beyond
// about 292 years, or an infinite one) is the largest Duration, which
// callers cap with their own longest wait.
func Parse(h http.Header, now time.Time) time.Duration {
	for _, name := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if d := scaled(h.Get(name), time.Millisecond); d > 0 {
			return d
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if d := scaled(v, time.Second); d > 0 {
		return d
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now) // saturates at the largest Duration
	}
	return 0
}

// scaled returns s, a decimal number of units, as a Duration (see Scale):
// 0 unless s holds a number above 0.
func scaled(s string, unit time.Duration) time.Duration {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: ±Inf or 0, which Scale handles
		return 0
	}
	return Scale(x, unit)
}

// Scale returns x units as a wait: 0 unless x is above 0 (NaN too), and
// the largest Duration when the product is beyond it (a float converted to
// an integer type out of its range gives an unspecified value, negative on
// amd64, which would read as no wait at all).
func Scale(x float64, unit time.Duration) time.Duration {
	d := x * float64(unit)
	switch {
	case !(d > 0):
		return 0
	case d >= math.MaxInt64: // float64(math.MaxInt64) is 2^63, one past the range
		return math.MaxInt64
	}
	return time.Duration(d)
}
