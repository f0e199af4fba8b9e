package retryafter

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary values to the three headers Parse reads. Parse
// must never panic and never return a negative delay (a float too large
// for a time.Duration must not wrap around); a value that names a delay
// (a number of milliseconds or seconds, or an HTTP date after now) must
// give about that delay, saturating at the largest Duration; and values
// that name none give no delay at all.
func FuzzParse(f *testing.F) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seeds := [][3]string{
		{"", "", ""},
		{"1500", "", "9"},
		{"", "250", "9"},
		{"", "", "2"},
		{"", "", "1.5"},
		{"0", "", "3"},
		{"", "", "soon"},
		{"", "", now.Add(30 * time.Second).Format(http.TimeFormat)},
		{"", "", now.Add(-time.Minute).Format(http.TimeFormat)},
		{"NaN", "NaN", "NaN"},
		{"-5", "-1", "-3"},
		{"", "", "Fri, 31 Dec 9999 23:59:59 GMT"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ms, azureMS, after string) {
		h := http.Header{}
		set := func(name, v string) {
			if v != "" {
				h[http.CanonicalHeaderKey(name)] = []string{v}
			}
		}
		set("retry-after-ms", ms)
		set("x-ms-retry-after-ms", azureMS)
		set("Retry-After", after)
		got := Parse(h, now)
		if got < 0 {
			t.Fatalf("Parse(retry-after-ms=%q, x-ms-retry-after-ms=%q, Retry-After=%q) = %v, negative", ms, azureMS, after, got)
		}
		// The first header holding a positive number of milliseconds wins.
		for _, v := range []string{ms, azureMS} {
			x, ok := number(v)
			if !ok {
				continue
			}
			if want := x * float64(time.Millisecond); want >= 1 {
				if !near(got, want) {
					t.Fatalf("Parse(retry-after-ms=%q, x-ms-retry-after-ms=%q) = %v, want about %v ns", ms, azureMS, got, want)
				}
				return
			}
		}
		if x, ok := number(after); ok {
			if want := x * float64(time.Second); want >= 1 {
				if !near(got, want) {
					t.Fatalf("Parse(Retry-After=%q) = %v, want about %v ns", after, got, want)
				}
				return
			}
		}
		// Otherwise an HTTP date after now gives the time until it, and
		// anything else (no header, no positive delay, a date passed) none.
		var want time.Duration
		if at, err := http.ParseTime(after); err == nil && at.After(now) {
			want = at.Sub(now)
		}
		if got != want {
			t.Fatalf("Parse(retry-after-ms=%q, x-ms-retry-after-ms=%q, Retry-After=%q) = %v, want %v", ms, azureMS, after, got, want)
		}
	})
}

// number returns the number s holds if it is above 0; a number out of
// float64's range counts as infinite.
func number(s string) (float64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return x, x > 0
}

// near reports whether d is want nanoseconds, rounded, or the largest
// Duration when want is beyond it.
func near(d time.Duration, want float64) bool {
	if want >= math.MaxInt64 {
		return d == math.MaxInt64
	}
	return math.Abs(float64(d)-want) <= 1+want*1e-12
}
