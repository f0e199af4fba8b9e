package bench_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/bench"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    bench.Options
		setting string // "" for valid
	}{
		{"defaults", bench.Options{}, ""},
		{"explicit", bench.Options{BatchSizes: []int{1, 8}, Concurrencies: []int{2}, Warmup: time.Second, Duration: time.Second, MaxDuration: time.Second}, ""},
		{"zero batch", bench.Options{BatchSizes: []int{8, 0}}, "--batch-sizes"},
		{"duplicate batch", bench.Options{BatchSizes: []int{8, 8}}, "--batch-sizes"},
		{"negative concurrency", bench.Options{Concurrencies: []int{-1}}, "--concurrency"},
		{"no warmup", bench.Options{Warmup: bench.None}, ""},
		{"no cooldown", bench.Options{Cooldown: bench.None}, ""},
		{"negative duration", bench.Options{Duration: -time.Second}, "--duration"},
		{"negative min requests", bench.Options{MinRequests: -1}, "--min-requests"},
		{"max below duration", bench.Options{Duration: time.Minute, MaxDuration: time.Second}, "--max-duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var oe *bench.OptionsError
			if !errors.As(err, &oe) || !errors.Is(err, bench.ErrInvalidOptions) {
				t.Fatalf("Validate() = %v, want an *OptionsError wrapping ErrInvalidOptions", err)
			}
			if oe.Setting != tt.setting || !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("error %q names %q, want %q", err, oe.Setting, tt.setting)
			}
		})
	}
}

func TestSimOptionsValidate(t *testing.T) {
	tests := []struct {
		opts    bench.SimOptions
		setting string
	}{
		{bench.SimOptions{Latency: time.Millisecond, TokenLatency: time.Microsecond, RPM: 10, TPM: 1000}, ""},
		{bench.SimOptions{Latency: -1}, "--sim-latency"},
		{bench.SimOptions{TokenLatency: -1}, "--sim-token-latency"},
		{bench.SimOptions{RPM: -1}, "--sim-rpm"},
		{bench.SimOptions{TPM: -1}, "--sim-tpm"},
		{bench.SimOptions{Latency: bench.MaxSimLatency}, ""},
		{bench.SimOptions{Latency: 1000 * time.Hour}, "--sim-latency"},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		var oe *bench.OptionsError
		switch {
		case tt.setting == "" && err != nil:
			t.Errorf("%+v: Validate() = %v, want nil", tt.opts, err)
		case tt.setting != "" && (!errors.As(err, &oe) || oe.Setting != tt.setting):
			t.Errorf("%+v: Validate() = %v, want an error naming %s", tt.opts, err, tt.setting)
		}
	}
}

// TestSimOptionsCheckTimeout checks that a simulated latency that cannot
// fit within embedder.timeout is refused naming both flags and the
// timeout: the base latency plus the per-token latency times the tokens of
// one chunk must be below it.
func TestSimOptionsCheckTimeout(t *testing.T) {
	tests := []struct {
		name    string
		opts    bench.SimOptions
		timeout time.Duration
		tokens  int
		ok      bool
	}{
		{"the defaults", bench.SimOptions{Latency: 100 * time.Millisecond, TokenLatency: 10 * time.Microsecond}, time.Minute, 1024, true},
		{"just below", bench.SimOptions{Latency: time.Second, TokenLatency: time.Millisecond}, 2*time.Second + time.Nanosecond, 1000, true},
		{"equal", bench.SimOptions{Latency: time.Second, TokenLatency: time.Millisecond}, 2 * time.Second, 1000, false},
		{"base latency at the timeout", bench.SimOptions{Latency: bench.MaxSimLatency}, time.Minute, 1, false},
		{"per-token latency beyond it", bench.SimOptions{TokenLatency: time.Hour}, time.Minute, 1, false},
		{"no per-token latency", bench.SimOptions{Latency: 59 * time.Second}, time.Minute, 8192, true},
		{"a product beyond a Duration", bench.SimOptions{Latency: time.Second, TokenLatency: 1000 * time.Hour}, time.Minute, 1 << 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.CheckTimeout(tt.timeout, tt.tokens)
			if tt.ok {
				if err != nil {
					t.Fatalf("CheckTimeout() = %v, want nil", err)
				}
				return
			}
			var oe *bench.OptionsError
			if !errors.As(err, &oe) || !errors.Is(err, bench.ErrInvalidOptions) {
				t.Fatalf("CheckTimeout() = %v, want an *OptionsError", err)
			}
			for _, w := range []string{"--sim-latency", "--sim-token-latency", "embedder.timeout (" + tt.timeout.String() + ")", "splitter.chunkSize"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestTrials(t *testing.T) {
	got := bench.Options{BatchSizes: []int{8, 32}, Concurrencies: []int{1, 4}}.Trials()
	want := []bench.Trial{{8, 1}, {32, 1}, {8, 4}, {32, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("Trials() = %v, want %v", got, want)
	}
	if n := len((bench.Options{}).Trials()); n != len(bench.DefaultBatchSizes)*len(bench.DefaultConcurrencies) {
		t.Errorf("default Trials() has %d trials", n)
	}
}

func TestParseTrial(t *testing.T) {
	tests := []struct {
		in   string
		want bench.Trial
		ok   bool
	}{
		{"256x4", bench.Trial{BatchSize: 256, Concurrency: 4}, true},
		{"1x1", bench.Trial{BatchSize: 1, Concurrency: 1}, true},
		{"256", bench.Trial{}, false},
		{"0x4", bench.Trial{}, false},
		{"8x-1", bench.Trial{}, false},
		{"axb", bench.Trial{}, false},
	}
	for _, tt := range tests {
		got, err := bench.ParseTrial(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTrial(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tt.in)
		}
		if !tt.ok && !errors.Is(err, bench.ErrInvalidOptions) {
			t.Errorf("ParseTrial(%q) error %v does not wrap ErrInvalidOptions", tt.in, err)
		}
	}
}

// TestWarmupFor checks that None means no warm-up while 0 means the
// default, and that against a quota the warm-up is raised to the quota's
// burst window. (TestPredict checks the time a trial takes.)
func TestWarmupFor(t *testing.T) {
	hash := embedder.DefaultConfig()
	sim := func(tpm, rpm int) embedder.Config {
		return bench.SimulatedEmbedder(embedder.DefaultConfig(), "http://127.0.0.1:1/v1", bench.SimOptions{TPM: tpm, RPM: rpm})
	}
	short := bench.Options{Warmup: time.Millisecond, Cooldown: time.Second, Duration: time.Second, MaxDuration: time.Second}
	tests := []struct {
		name          string
		opts          bench.Options
		emb           embedder.Config
		tpm           int
		burst, warmup time.Duration
	}{
		{"defaults, no quota", bench.Options{}, hash, 0, 0, bench.DefaultWarmup},
		{"none, no quota", bench.Options{Warmup: bench.None, Cooldown: bench.None, Duration: time.Second, MaxDuration: 3 * time.Second}, hash, 0, 0, 0},
		{"short, no quota", short, hash, 0, 0, time.Millisecond},
		// 600,000 tokens per minute: the client's bucket holds one request's
		// cap, 9,000 tokens, 0.9 seconds' worth; the provider's, a second's.
		{"short, tpm quota: warm-up raised to the burst", short, sim(600_000, 0), 600_000, time.Second, time.Second},
		// 60,000 tokens per minute: the bucket holds a whole input's cap
		// (8192 tokens), 8.192 seconds' worth.
		{"small tpm quota: a longer burst", short, sim(60_000, 0), 60_000, 8192 * time.Millisecond, 8192 * time.Millisecond},
		{"rpm quota under 60: one request's worth", short, sim(0, 30), 0, 2 * time.Second, 2 * time.Second},
		{"long warm-up kept", bench.Options{Warmup: 5 * time.Second, Cooldown: bench.None}, sim(600_000, 0), 600_000, time.Second, 5 * time.Second},
		{"quota of a local embedder's run", short, hash, 600_000, time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// With no warm-up of its own, the warm-up is the burst window.
			if got := (bench.Options{Warmup: bench.None}).WarmupFor(tt.emb, tt.tpm); got != tt.burst {
				t.Errorf("WarmupFor() with Warmup None = %s, want the burst window, %s", got, tt.burst)
			}
			if got := tt.opts.WarmupFor(tt.emb, tt.tpm); got != tt.warmup {
				t.Errorf("WarmupFor() = %s, want %s", got, tt.warmup)
			}
		})
	}
}
