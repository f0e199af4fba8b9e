package wait_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/wait"
)

func TestSleep(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"waits", context.Background(), time.Millisecond, nil},
		{"zero", context.Background(), 0, nil},
		{"negative", context.Background(), -time.Second, nil},
		// An hour would fail the test by its timeout if Sleep waited.
		{"cancelled", done, time.Hour, context.Canceled},
		{"cancelled, zero", done, 0, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := wait.Sleep(tt.ctx, tt.d); !errors.Is(err, tt.want) {
				t.Errorf("Sleep(%v) = %v, want %v", tt.d, err, tt.want)
			}
		})
	}
}

// TestSleepWaits checks that Sleep returns no sooner than asked.
func TestSleepWaits(t *testing.T) {
	start := time.Now()
	if err := wait.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < 20*time.Millisecond {
		t.Errorf("Sleep(20ms) returned after %v", got)
	}
}

func ExampleSleep() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as Ctrl-C does
	err := wait.Sleep(ctx, time.Minute)
	fmt.Println(err)
	// Output: context canceled
}
