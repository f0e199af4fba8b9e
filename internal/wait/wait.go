// Package wait provides the one way Sluice waits for a while: a wait that
// ends early, with the context's error, when its context is done.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done, and returns ctx.Err() in that case.
// A d of zero or less returns at once, with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
