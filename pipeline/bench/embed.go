package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// recorder keeps the request latencies of the measured window.
type recorder struct {
	active atomic.Bool
	mu     sync.Mutex
	lat    []time.Duration
}

func (r *recorder) observe(d time.Duration) {
	if !r.active.Load() {
		return
	}
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
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
// reported to observe: per HTTP attempt for the HTTP providers (the time
// waiting for the quota is not latency), per Embed call for the others.
func newEmbedder(ctx context.Context, cfg embedder.Config, observe func(time.Duration)) (embedder.Embedder, error) {
	e, err := embedder.New(ctx, cfg, embedder.WithLatencyObserver(observe))
	if err != nil {
		return nil, err
	}
	if _, ok := e.(*embedder.Client); ok {
		return e, nil
	}
	return timed{e, observe}, nil
}

// timed reports the duration of each Embed call of an embedder that keeps
// no statistics of its own.
type timed struct {
	embedder.Embedder
	observe func(time.Duration)
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
		t.observe(time.Since(start))
	}
	return v, err
}
