package embedder

import (
	"context"
	"math"
)

// Instant is the embedder that costs nothing, the provider "instant": every
// text gets the same unit vector, at once. It measures the pipeline around
// the embedder (what a run costs with an infinitely fast provider), which is
// what benchmarks compare against tokenizing alone; dense search over its
// vectors ranks nothing, so it is not for real indexes. An Instant is safe
// for concurrent use; callers must not modify the vectors it returns.
type Instant struct {
	vec []float32
}

// NewInstant returns an instant embedder of dims floats; dims <= 0 means
// DefaultDimensions.
func NewInstant(dims int) *Instant {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	vec := make([]float32, dims)
	for i := range vec {
		vec[i] = float32(1 / math.Sqrt(float64(dims)))
	}
	return &Instant{vec: vec}
}

// Local reports that the vectors are computed in process, at no charge.
func (*Instant) Local() bool { return true }

// Dimensions returns the vector length.
func (e *Instant) Dimensions() int { return len(e.vec) }

// Embed returns the shared vector for every input. It never fails except
// when ctx is done.
func (e *Instant) Embed(ctx context.Context, inputs []Input) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(inputs))
	for i := range out {
		out[i] = e.vec
	}
	return out, nil
}
