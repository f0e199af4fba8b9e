package bench

import (
	"math"
	"strings"
	"testing"
)

// TestChartRangePadded checks that the plot range reaches beyond every
// point (a failed configuration's mark too) and the quota line, so that no marker (the winner's ring is 6
// points wide, about 1.5% of the plot's width and height) is cut by the
// plot border: on the log x axis by at least a factor 1.2 each side, on
// the y axis by at least 10% above the highest point.
func TestChartRangePadded(t *testing.T) {
	u := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		results []Result
	}{
		{"several sizes", []Result{{BatchSize: 1, Concurrency: 1, TokensPerS: 100}, {BatchSize: 2048, Concurrency: 1, TokensPerS: 900}}},
		{"narrow span", []Result{{BatchSize: 8, Concurrency: 1, TokensPerS: 100}, {BatchSize: 16, Concurrency: 4, TokensPerS: 100}}},
		{"quota above the points", []Result{{BatchSize: 8, Concurrency: 1, TokensPerS: 500, TPMUtilization: u(0.5)}, {BatchSize: 64, Concurrency: 1, TokensPerS: 900, TPMUtilization: u(0.9)}}},
		{"single size", []Result{{BatchSize: 32, Concurrency: 1, TokensPerS: 100}}},
		{"failed marked too", []Result{{BatchSize: 8, Concurrency: 1, TokensPerS: 100}, {BatchSize: 4096, Concurrency: 1, Error: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xMin, xMax, yMax, err := chartRange(tt.results, batchTicks(tt.results))
			if err != nil {
				t.Fatal(err)
			}
			top := quota(tt.results)
			for _, r := range tt.results {
				top = max(top, r.TokensPerS)
				if x := float64(r.BatchSize); xMin*1.2 > x || xMax < 1.2*x {
					t.Errorf("x range [%v, %v] does not reach a factor 1.2 beyond batch size %v", xMin, xMax, x)
				}
			}
			if yMax < 1.1*top {
				t.Errorf("y range tops at %v, want at least 10%% above %v", yMax, top)
			}
		})
	}
}

// TestRateTicksFromBelowZero checks that an axis starting below 0, as it
// does when failed configurations are marked on the zero line, is labelled
// from "0" up: no "-0" and no negative tick.
func TestRateTicksFromBelowZero(t *testing.T) {
	ticks := rateTicks{}.Ticks(-chartFailedPad*12000, 12000)
	if len(ticks) == 0 || ticks[0].Label != "0" || math.Signbit(ticks[0].Value) {
		t.Fatalf("Ticks() = %+v, want the first at 0 labelled \"0\"", ticks)
	}
	for _, tk := range ticks {
		if tk.Value < 0 || strings.HasPrefix(tk.Label, "-") {
			t.Errorf("tick %+v below 0", tk)
		}
	}
}
