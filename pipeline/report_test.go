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

// TestReportJSONCostWhenPriced: with embedder.pricePerMillionTokens set,
// the report of a run, dry or not, over a folder with nothing to embed
// has estimated_cost 0, as a dry run has tokens_planned 0, rather than no
// estimated_cost at all; without a price it has none.
func TestReportJSONCostWhenPriced(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(nil)
	for _, tt := range []struct {
		name  string
		price float64
		dry   bool
		want  bool
	}{
		{"dry run, priced", 0.02, true, true},
		{"run, priced", 0.02, false, true},
		{"dry run, no price", 0, true, false},
		{"run, no price", 0, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := in.run(func(o *Options) { o.DryRun = tt.dry; o.PricePerMillionTokens = tt.price })
			if rep.FilesUnchanged != 3 || rep.TokensEmbedded != 0 || rep.TokensPlanned != 0 {
				t.Fatalf("want nothing to embed: %+v", rep)
			}
			b, err := json.Marshal(&rep)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"estimated_cost":0`); got != tt.want {
				t.Errorf("estimated_cost 0 in the report: %v, want %v: %s", got, tt.want, b)
			}
			if n := strings.Count(string(b), `"estimated_cost"`); n > 1 {
				t.Errorf("%s has estimated_cost %d times", b, n)
			}
		})
	}
}
