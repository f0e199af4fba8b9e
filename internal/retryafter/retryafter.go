// Package retryafter reads the delay a throttled HTTP service asks its
// client to wait before trying again, for the embedder client and the
// Cloud AI Search store.
package retryafter

import (
	"net/http"
	"strconv"
	"time"
)

// Parse returns the delay the headers h ask for: retry-after-ms, then
// x-ms-retry-after-ms (milliseconds, as OpenAI and Azure send them), then
// Retry-After (seconds, or an HTTP date after now). It returns 0 when none
// is set or none holds a positive delay.
func Parse(h http.Header, now time.Time) time.Duration {
	for _, name := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms, err := strconv.ParseFloat(h.Get(name), 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
