package watch

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// TestPermanent pins which round errors stop the loop (they recur until a
// person acts) and which are retried with backoff.
func TestPermanent(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("round: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"model changed", wrap(state.ErrModelChanged), true},
		{"state file damaged", wrap(&state.FileError{Path: "/s.db", Kind: state.ErrDamaged, Err: errors.New("malformed")}), true},
		{"state file not accessible", wrap(&state.FileError{Path: "/s.db", Kind: state.ErrAccess, Err: errors.New("readonly")}), true},
		{"pipeline options", wrap(&pipeline.ConfigError{Setting: "Options.BatchSize", Reason: "is too large"}), true},
		{"embedder config", wrap(embedder.ErrConfig), true},
		{"missing key", wrap(embedder.ErrMissingKey), true},
		{"key refused", wrap(embedder.ErrUnauthorized), true},
		{"quota exhausted", wrap(embedder.ErrQuotaExhausted), true},
		{"deployment not found", wrap(embedder.ErrNotFound), true},
		{"embedder dimensions", wrap(embedder.ErrDimensions), true},
		{"index dimensions", wrap(&sink.DimensionError{}), true},
		{"unsupported by the sink", wrap(sink.ErrUnsupported), true},
		{"state file's disk full", wrap(&state.FileError{Path: "/s.db", Kind: state.ErrFull, Err: errors.New("database or disk is full")}), false},
		{"throttled", wrap(embedder.ErrThrottled), false},
		{"store unavailable", wrap(sink.ErrUnavailable), false},
		{"deadline", wrap(context.DeadlineExceeded), false},
		{"other", errors.New("disk hiccup"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := permanent(tc.err); got != tc.want {
				t.Errorf("permanent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
