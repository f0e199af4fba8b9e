package pipeline

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestReportJSONPlannedKeys: a dry run's report has chunks_planned and
// tokens_planned even when they are 0 (an unchanged folder), which scripts
// read; another run's has neither, nor dry_run; and a report reads back
// as it was.
func TestReportJSONPlannedKeys(t *testing.T) {
	tests := []struct {
		name    string
		rep     Report
		want    []string
		without []string
	}{
		{"dry run, nothing to do", Report{DryRun: true, Complete: true}, []string{`"dry_run":true`, `"chunks_planned":0`, `"tokens_planned":0`, `"files_seen":0`, `"complete":true`}, nil},
		{"dry run", Report{DryRun: true, ChunksPlanned: 3, TokensPlanned: 120}, []string{`"chunks_planned":3`, `"tokens_planned":120`}, nil},
		{"run", Report{ChunksWritten: 2, Complete: true}, []string{`"chunks_written":2`}, []string{"dry_run", "chunks_planned", "tokens_planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(&tt.rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
			for _, w := range tt.without {
				if strings.Contains(string(b), w) {
					t.Errorf("%s has %s", b, w)
				}
			}
			if n := strings.Count(string(b), `"chunks_planned"`); n > 1 {
				t.Errorf("%s has chunks_planned %d times", b, n)
			}
			var back Report
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tt.rep) {
				t.Errorf("read back: %+v, %v; want %+v", back, err, tt.rep)
			}
		})
	}
}
