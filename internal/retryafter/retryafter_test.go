package retryafter

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"ms wins", map[string]string{"retry-after-ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{"azure ms", map[string]string{"x-ms-retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"date passed", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"zero ms falls through", map[string]string{"retry-after-ms": "0", "Retry-After": "3"}, 3 * time.Second},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		// Beyond a Duration: the largest one, not a wrapped negative value.
		{"ms beyond a Duration", map[string]string{"retry-after-ms": "10000000000000"}, math.MaxInt64},
		{"seconds beyond a Duration", map[string]string{"Retry-After": "1e10"}, math.MaxInt64},
		{"infinite ms", map[string]string{"retry-after-ms": "+Inf"}, math.MaxInt64},
		{"ms beyond a float64", map[string]string{"retry-after-ms": "1e400"}, math.MaxInt64},
		{"NaN ms falls through", map[string]string{"retry-after-ms": "NaN", "Retry-After": "3"}, 3 * time.Second},
		// Less than a nanosecond is no delay: the next header decides.
		{"sub-nanosecond ms falls through", map[string]string{"retry-after-ms": "1e-300", "Retry-After": "4"}, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := Parse(h, now); got != tt.want {
				t.Fatalf("Parse = %v, want %v", got, tt.want)
			}
		})
	}
}
