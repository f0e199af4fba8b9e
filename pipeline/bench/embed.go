package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// recorder keeps the request latencies of the measured window. For an
// embedder that keeps no Stats (timed), it also counts the Embed calls that
// succeeded and their inputs, together, so that their ratio is a mean
// batch.
type recorder struct {
	active atomic.Bool
	mu     sync.Mutex
	lat    []time.Duration
	calls  int64 // Embed calls of a timed embedder that succeeded
	inputs int64 // their inputs
}

func (r *recorder) observe(d time.Duration) {
	if !r.active.Load() {
		return
	}
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
}

// embedded records an Embed call of a timed embedder that embedded inputs
// texts in d.
func (r *recorder) embedded(d time.Duration, inputs int) {
	r.mu.Lock()
	r.calls++
	r.inputs += int64(inputs)
	r.mu.Unlock()
	r.observe(d)
}

// sent returns the Embed calls embedded counted and their inputs.
func (r *recorder) sent() (calls, inputs int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, r.inputs
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lat)
}

// stop ends recording and returns the latencies.
func (r *recorder) stop() []time.Duration {
	r.active.Store(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lat
}

// newEmbedder builds the embedder cfg selects with request latencies
// reported to rec: per HTTP attempt for the HTTP providers (the time
// waiting for the quota is not latency), which count their requests and
// inputs in their Stats; per Embed call, with its inputs, for the others.
func newEmbedder(ctx context.Context, cfg embedder.Config, rec *recorder) (embedder.Embedder, error) {
	e, err := embedder.New(ctx, cfg, embedder.WithLatencyObserver(rec.observe))
	if err != nil {
		return nil, err
	}
	if _, ok := e.(*embedder.Client); ok {
		return e, nil
	}
	return timed{e, rec.embedded}, nil
}

// timed reports the duration and the inputs of each Embed call of an
// embedder that keeps no statistics of its own.
type timed struct {
	embedder.Embedder
	record func(d time.Duration, inputs int)
}

// Local forwards the wrapped embedder's Local, so that the pipeline caps
// a local embedder's concurrency at the core count in a benchmark as it
// does in a run.
func (t timed) Local() bool {
	l, ok := t.Embedder.(interface{ Local() bool })
	return ok && l.Local()
}

func (t timed) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	start := time.Now()
	v, err := t.Embedder.Embed(ctx, in)
	if err == nil {
		t.record(time.Since(start), len(in))
	}
	return v, err
}
