package bench_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

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
		{"zero batch", bench.Options{BatchSizes: []int{8, 0}}, "bench.batchSizes (--batch-sizes)"},
		{"duplicate batch", bench.Options{BatchSizes: []int{8, 8}}, "bench.batchSizes (--batch-sizes)"},
		{"negative concurrency", bench.Options{Concurrencies: []int{-1}}, "bench.concurrency (--concurrency)"},
		{"negative warmup", bench.Options{Warmup: -time.Second}, "bench.warmup (--warmup)"},
		{"negative duration", bench.Options{Duration: -time.Second}, "bench.duration (--duration)"},
		{"negative min requests", bench.Options{MinRequests: -1}, "bench.minRequests (--min-requests)"},
		{"max below duration", bench.Options{Duration: time.Minute, MaxDuration: time.Second}, "bench.maxDuration (--max-duration)"},
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
		{bench.SimOptions{Latency: -1}, "bench.sim.latency (--sim-latency)"},
		{bench.SimOptions{TokenLatency: -1}, "bench.sim.tokenLatency (--sim-token-latency)"},
		{bench.SimOptions{RPM: -1}, "bench.sim.rpm (--sim-rpm)"},
		{bench.SimOptions{TPM: -1}, "bench.sim.tpm (--sim-tpm)"},
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
