package bench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/pipeline/bench/rss"
)

const trialEnv = "SLUICE_BENCH_TRIAL"

// helperChild plays the sluice binary re-executed for one trial.
func helperChild(mode string) int {
	t, err := bench.ParseTrial(os.Getenv(trialEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	switch mode {
	case "ok":
		fmt.Println("a log line before the result")
		peak, _ := rss.Peak()
		r := bench.Result{BatchSize: t.BatchSize, Concurrency: t.Concurrency, TokensPerS: float64(100 * t.BatchSize), PeakRSSMB: float64(peak) / (1 << 20)}
		if err := bench.WriteResult(os.Stdout, r); err != nil {
			return 1
		}
		return 0
	case "garbage":
		fmt.Println("not json")
		return 0
	}
	fmt.Fprintln(os.Stderr, "sluice: configuration: embedder.model is required")
	return 2
}

func helperExec(mode string) bench.Exec {
	return bench.Exec{Command: func(ctx context.Context, t bench.Trial) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, trialEnv+"="+t.String())
		return cmd
	}}
}

func TestExec(t *testing.T) {
	trial := bench.Trial{BatchSize: 32, Concurrency: 2}
	tests := []struct {
		mode    string
		wantErr string // "" for success
	}{
		{"ok", ""},
		{"garbage", "not a result"},
		{"fail", "embedder.model is required"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r, err := helperExec(tt.mode).Measure(t.Context(), trial)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.Trial() != trial || r.TokensPerS != 3200 || r.PeakRSSMB <= 0 {
					t.Errorf("Measure() = %+v, want the child's result for %s with its peak RSS", r, trial)
				}
				return
			}
			if !errors.Is(err, bench.ErrChild) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Measure() error = %v, want ErrChild mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunRecordsFailuresAndGoesOn(t *testing.T) {
	trials := []bench.Trial{{BatchSize: 8, Concurrency: 1}, {BatchSize: 16, Concurrency: 1}}
	var seen []bench.Trial
	results, err := bench.Run(t.Context(), helperExec("fail"), trials, func(r bench.Result) { seen = append(seen, r.Trial()) })
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || len(seen) != 2 {
		t.Fatalf("Run() gave %d results and %d callbacks, want 2 each", len(results), len(seen))
	}
	for i, r := range results {
		if r.Error == "" || r.Trial() != trials[i] {
			t.Errorf("result %d = %+v, want an error for trial %s", i, r, trials[i])
		}
	}
}

// cancelAt is a Measurer that measures every trial and cancels its
// context while measuring the trial numbered at (from 0), as Ctrl-C would;
// with finished, that trial completes all the same (Ctrl-C came as it
// ended).
type cancelAt struct {
	at       int
	finished bool
	n        *int
	cancel   context.CancelFunc
}

func (c cancelAt) Measure(ctx context.Context, t bench.Trial) (bench.Result, error) {
	defer func() { *c.n++ }()
	if *c.n == c.at {
		c.cancel()
		if !c.finished {
			return bench.Result{}, ctx.Err()
		}
	}
	return bench.Result{TokensPerS: 1}, nil
}

// TestRunStopsWhenCancelled checks that an interrupted Run returns the
// results measured before the interruption and an error that names the
// trial that was running (not one "before" it) and counts what was done.
func TestRunStopsWhenCancelled(t *testing.T) {
	trials := []bench.Trial{{BatchSize: 1, Concurrency: 1}, {BatchSize: 8, Concurrency: 1}, {BatchSize: 16, Concurrency: 1}}
	tests := []struct {
		at       int
		finished bool // the trial at completes although ctx was cancelled
		results  int
		want     string // "" for no error
	}{
		{0, false, 0, "interrupted while measuring 1x1, after 0 of 3 configurations"},
		{2, false, 2, "interrupted while measuring 16x1, after 2 of 3 configurations"},
		// A trial measured whole is kept, and the next one is not started.
		{1, true, 2, "interrupted while measuring 16x1, after 2 of 3 configurations"},
		{2, true, 3, ""},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		results, err := bench.Run(ctx, cancelAt{at: tt.at, finished: tt.finished, n: &n, cancel: cancel}, trials, nil)
		cancel()
		if tt.want == "" {
			if err != nil || len(results) != tt.results {
				t.Errorf("at %d, finished: Run() = %d results, %v; want %d results and no error", tt.at, len(results), err, tt.results)
			}
			continue
		}
		if !errors.Is(err, context.Canceled) || len(results) != tt.results || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "context canceled") {
			t.Errorf("at %d: Run() = %d results, %v; want %d results and context.Canceled saying %q", tt.at, len(results), err, tt.results, tt.want)
		}
		started := tt.results // and the interrupted one, unless it finished
		if !tt.finished {
			started++
		}
		if n != started {
			t.Errorf("at %d: %d trials started, want %d: none after the interruption", tt.at, n, started)
		}
	}
}

// TestChildErrorMessage checks what a failed child's error says: its own
// message when its stderr ends with one ("prog: message", or a JSON log
// line's msg, after any log lines), else its stderr's end as it is.
func TestChildErrorMessage(t *testing.T) {
	tests := []struct {
		name, stderr, want string
	}{
		{"prefixed", "level=DEBUG msg=x\nsluice: bench: trial 8x1: embedder: timeout\n", "bench: trial 8x1: embedder: timeout (trial process: exit status 1)"},
		{"JSON log line", `{"level":"DEBUG","msg":"x"}` + "\n" + `{"level":"ERROR","msg":"bench: trial 8x1: boom","exit_code":1}` + "\n", "bench: trial 8x1: boom (trial process: exit status 1)"},
		{"anything else", "panic: oops\ngoroutine 1\n", "bench: trial process failed: trial 8x1: exit status 1: panic: oops\ngoroutine 1"},
		{"nothing", "", "bench: trial process failed: trial 8x1: exit status 1: no message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "printf '%s' \"$MSG\" >&2; exit 1"
			e := bench.Exec{Command: func(ctx context.Context, _ bench.Trial) *exec.Cmd {
				cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
				cmd.Env = append(os.Environ(), "MSG="+tt.stderr)
				return cmd
			}, Prog: "sluice"}
			_, err := e.Measure(t.Context(), bench.Trial{BatchSize: 8, Concurrency: 1})
			if !errors.Is(err, bench.ErrChild) || err.Error() != tt.want {
				t.Errorf("error %q, want %q wrapping ErrChild", err, tt.want)
			}
		})
	}
}
