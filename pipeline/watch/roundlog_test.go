package watch

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline"
)

// TestRoundLine checks what the log line of a round says it did. A round
// that only cleared failures (a folder that can be watched again, a failed
// file now gone) said nothing but how long it took.
func TestRoundLine(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name string
		r    Round
		want string
	}{
		{"cleared only", Round{Kind: Update, Cleared: []string{"nd", "gone.md"}},
			"round=update took=5ms cleared=2"},
		{"removed and cleared", Round{Kind: Update, Removed: []string{"a.md"}, Cleared: []string{"nd"}},
			"round=update took=5ms deleted=1 cleared=1"},
		{"changed", Round{Kind: Update, Report: &pipeline.Report{FilesAdded: 1, FilesFailed: 1, ChunksWritten: 3}, Removed: []string{"a.md"}},
			"round=update took=5ms added=1 updated=0 unchanged=0 deleted=1 failed=1 chunks=3"},
		{"rescan", Round{Kind: Rescan, Report: &pipeline.Report{FilesUnchanged: 4, FilesDeleted: 2}},
			"round=rescan took=5ms added=0 updated=0 unchanged=4 deleted=2 failed=0 chunks=0"},
		{"verified", Round{Kind: Initial, Report: &pipeline.Report{FilesUpdated: 2, Verify: &pipeline.VerifyReport{NodesChecked: 9, NodesMissing: 1}}},
			"round=initial took=5ms added=0 updated=2 unchanged=0 deleted=0 failed=0 chunks=0 verified=9 missing=1"},
		{"verified with unlisted nodes", Round{Kind: Rescan, Report: &pipeline.Report{FilesUpdated: 1, Verify: &pipeline.VerifyReport{NodesChecked: 9, NodesUnlisted: 3}}},
			"round=rescan took=5ms added=0 updated=1 unchanged=0 deleted=0 failed=0 chunks=0 verified=9 missing=0 unlisted=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Start, tt.r.End = start, start.Add(5*time.Millisecond)
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
						return slog.Attr{}
					}
					return a
				},
			}))
			log.Info("watch: round done", roundAttrs(tt.r)...)
			if got := strings.TrimSpace(buf.String()); got != tt.want {
				t.Errorf("round line %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRoundLevel checks that an update round that did nothing (the removal
// of a file no round stored, files all gone before they were read) is
// logged at Debug, and any other at Info.
func TestRoundLevel(t *testing.T) {
	tests := []struct {
		name string
		r    Round
		want slog.Level
	}{
		{"nothing to remove", Round{Kind: Update}, slog.LevelDebug},
		{"removed", Round{Kind: Update, Removed: []string{"a.md"}}, slog.LevelInfo},
		{"cleared", Round{Kind: Update, Cleared: []string{"nd"}}, slog.LevelInfo},
		{"read", Round{Kind: Update, Report: &pipeline.Report{FilesUnchanged: 1}}, slog.LevelInfo},
		{"every file gone before it was read", Round{Kind: Update, Report: &pipeline.Report{}}, slog.LevelDebug},
		{"failed", Round{Kind: Update, Report: &pipeline.Report{FilesFailed: 1}}, slog.LevelInfo},
		{"rescan that found nothing", Round{Kind: Rescan, Report: &pipeline.Report{}}, slog.LevelInfo},
	}
	for _, tt := range tests {
		if got := roundLevel(tt.r); got != tt.want {
			t.Errorf("%s: level %v, want %v", tt.name, got, tt.want)
		}
	}
}
