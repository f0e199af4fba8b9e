package bench

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	tests := []struct {
		name    string
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.95, 7 * time.Millisecond},
		{"median odd unsorted", ms(30, 10, 20), 0.5, 20 * time.Millisecond},
		{"median even takes lower", ms(40, 10, 30, 20), 0.5, 20 * time.Millisecond},
		{"p95 of 20", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100), 0.95, 19 * time.Millisecond},
		{"p95 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 0.95, 100 * time.Millisecond},
		{"p100", ms(3, 1, 2), 1, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.samples, tt.q); got != tt.want {
				t.Errorf("percentile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestHuman(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {950.4, "950"}, {9499, "9.5k"}, {41234, "41k"}, {1.25e6, "1.2M"},
	}
	for _, tt := range tests {
		if got := human(tt.v); got != tt.want {
			t.Errorf("human(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestTimedKeepsLocal checks that wrapping an embedder to time it keeps
// whether it is local: the pipeline caps a local embedder's concurrency at
// the core count, and a benchmark must run it as a real run does.
func TestTimedKeepsLocal(t *testing.T) {
	observe := func(time.Duration) {}
	for _, tt := range []struct {
		e    embedder.Embedder
		want bool
	}{
		{embedder.NewHash(8), true},
		{embedder.NewInstant(8), true},
		{remoteEmbedder{}, false},
	} {
		l, ok := embedder.Embedder(timed{tt.e, observe}).(interface{ Local() bool })
		if !ok || l.Local() != tt.want {
			t.Errorf("timed(%T).Local() = %v (implemented %v), want %v", tt.e, ok && l.Local(), ok, tt.want)
		}
	}
}

// remoteEmbedder is an embedder that does not say it is local.
type remoteEmbedder struct{ embedder.Embedder }
