package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// ErrInvalidOptions marks every error returned by Options.Validate and
// SimOptions.Validate.
var ErrInvalidOptions = errors.New("bench: invalid options")

// OptionsError names the setting that is wrong and says how to fix it.
type OptionsError struct {
	Setting string // e.g. "--batch-sizes"
	Reason  string
}

// Error names the setting and the reason.
func (e *OptionsError) Error() string { return "bench: " + e.Setting + ": " + e.Reason }

// Unwrap returns ErrInvalidOptions.
func (e *OptionsError) Unwrap() error { return ErrInvalidOptions }

func optErr(setting, format string, args ...any) error {
	return &OptionsError{Setting: setting, Reason: fmt.Sprintf(format, args...)}
}

// Defaults of Options.
var (
	// DefaultBatchSizes are the batch sizes tried when none are given.
	DefaultBatchSizes = []int{1, 8, 16, 32, 64, 100, 256, 512, 1024, 2048}
	// DefaultConcurrencies are the concurrencies tried when none are given.
	DefaultConcurrencies = []int{1, 4, 16}
)

// Defaults of Options' durations and counts.
const (
	DefaultWarmup      = 2 * time.Second
	DefaultDuration    = 5 * time.Second
	DefaultMaxDuration = 30 * time.Second
	DefaultMinRequests = 20
	DefaultCooldown    = time.Second
)

// None is the Options.Warmup or Options.Cooldown that means no warm-up or
// no cool-down at all (0 means the default). Any negative duration means
// the same.
const None time.Duration = -1

// Options choose the configurations to try and how long to measure each.
// A zero field means its default; ApplyDefaults fills them in. To have no
// warm-up or no cool-down, set Warmup or Cooldown to None.
type Options struct {
	// BatchSizes are the chunks per embedding request to try;
	// default 1, 8, 16, 32, 64, 100, 256, 512, 1024, 2048.
	BatchSizes []int `yaml:"batchSizes"`
	// Concurrencies are the numbers of requests in flight to try;
	// default 1, 4, 16.
	Concurrencies []int `yaml:"concurrency"`
	// Warmup is run and discarded before each measurement, counted from
	// the first embedded chunk; default 2s, None for none. Against a quota
	// it is raised to the quota's burst window (see WarmupFor), so that
	// the measurement starts after the burst allowance is spent.
	Warmup time.Duration `yaml:"warmup"`
	// Cooldown is waited before each trial against a quota (an embedder
	// budget or Harness.TokensPerMinute), so that the provider's quota,
	// drained by the previous trial, refills; default 1s, None for none.
	Cooldown time.Duration `yaml:"cooldown"`
	// Duration is the shortest measured window of each trial; default 5s.
	Duration time.Duration `yaml:"duration"`
	// MinRequests is the fewest embedding requests a window must hold for
	// stable medians; the window grows past Duration until it has them,
	// up to MaxDuration. Default 20.
	MinRequests int `yaml:"minRequests"`
	// MaxDuration caps the measured window; default 30s.
	MaxDuration time.Duration `yaml:"maxDuration"`
}

// ApplyDefaults replaces zero fields with their defaults. A negative
// Warmup or Cooldown (None) is kept: it means none.
func (o *Options) ApplyDefaults() {
	if len(o.BatchSizes) == 0 {
		o.BatchSizes = append([]int(nil), DefaultBatchSizes...)
	}
	if len(o.Concurrencies) == 0 {
		o.Concurrencies = append([]int(nil), DefaultConcurrencies...)
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	if o.Cooldown == 0 {
		o.Cooldown = DefaultCooldown
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.MinRequests == 0 {
		o.MinRequests = DefaultMinRequests
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
}

// Validate checks the options, defaults applied, and returns an
// *OptionsError naming the first wrong setting.
func (o Options) Validate() error {
	o.ApplyDefaults()
	for _, l := range []struct {
		setting string
		vals    []int
	}{
		{"--batch-sizes", o.BatchSizes},
		{"--concurrency", o.Concurrencies},
	} {
		seen := make(map[int]bool, len(l.vals))
		for _, v := range l.vals {
			if v < 1 {
				return optErr(l.setting, "%d is not a positive number; give a comma-separated list such as 1,8,32", v)
			}
			if seen[v] {
				return optErr(l.setting, "%d is listed twice; list each value once", v)
			}
			seen[v] = true
		}
	}
	switch {
	case o.Duration < 0:
		return optErr("--duration", "must be a positive duration such as 5s, got %s", o.Duration)
	case o.MinRequests < 0:
		return optErr("--min-requests", "must be 1 or more, got %d", o.MinRequests)
	case o.MaxDuration < o.Duration:
		return optErr("--max-duration", "%s is shorter than --duration (%s); raise it", o.MaxDuration, o.Duration)
	}
	return nil
}

// warmup is the warm-up, defaults applied: 0 for None.
func (o Options) warmup() time.Duration {
	o.ApplyDefaults()
	return max(o.Warmup, 0)
}

// cooldown is the cool-down, defaults applied: 0 for None.
func (o Options) cooldown() time.Duration {
	o.ApplyDefaults()
	return max(o.Cooldown, 0)
}

// WarmupFor returns the warm-up of each trial against emb, measured
// against a quota of tokensPerMinute (0: none known): Options.Warmup (0 for
// None), raised to the quota's burst window when that is longer. A quota's
// token bucket starts full, and a window that caught its burst would report
// more than the quota sustains; the burst window is how long the largest
// burst the client or the provider allows (a request's token cap, a
// second's worth of requests or tokens) takes to refill at the quota's
// rate, and 0 without a quota. quota.go has the details.
func (o Options) WarmupFor(emb embedder.Config, tokensPerMinute int) time.Duration {
	return max(o.warmup(), burstWindow(emb, tokensPerMinute))
}

// Trials returns every configuration to try: each batch size with each
// concurrency, concurrency varying slowest.
func (o Options) Trials() []Trial {
	o.ApplyDefaults()
	ts := make([]Trial, 0, len(o.BatchSizes)*len(o.Concurrencies))
	for _, c := range o.Concurrencies {
		for _, b := range o.BatchSizes {
			ts = append(ts, Trial{BatchSize: b, Concurrency: c})
		}
	}
	return ts
}

// Trial is one configuration to measure.
type Trial struct {
	BatchSize   int // chunks per embedding request
	Concurrency int // embedding requests in flight
}

// String formats t as "BATCHxCONCURRENCY", the form ParseTrial reads.
func (t Trial) String() string { return strconv.Itoa(t.BatchSize) + "x" + strconv.Itoa(t.Concurrency) }

// ParseTrial parses the "BATCHxCONCURRENCY" form of Trial.String.
func ParseTrial(s string) (Trial, error) {
	b, c, ok := strings.Cut(s, "x")
	bs, err1 := strconv.Atoi(b)
	cs, err2 := strconv.Atoi(c)
	if !ok || err1 != nil || err2 != nil || bs < 1 || cs < 1 {
		return Trial{}, fmt.Errorf("bench: trial %q is not of the form BATCHxCONCURRENCY, such as 256x4: %w", s, ErrInvalidOptions)
	}
	return Trial{BatchSize: bs, Concurrency: cs}, nil
}
