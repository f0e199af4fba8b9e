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
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.ApplyDefaults()
	withLatency := embedder.WithLatencyObserver(observe)
	switch cfg.Provider {
	case embedder.ProviderOpenAI:
		c, err := embedder.NewOpenAI(cfg, withLatency)
		if err != nil {
			return nil, err
		}
		return c, nil
	case embedder.ProviderAzureOpenAI:
		c, err := embedder.NewAzureOpenAI(ctx, cfg, withLatency)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	e, err := embedder.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return timed{e, observe}, nil
}

// timed reports the duration of each Embed call of an embedder that keeps
// no statistics of its own.
type timed struct {
	embedder.Embedder
	observe func(time.Duration)
}

func (t timed) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	start := time.Now()
	v, err := t.Embedder.Embed(ctx, in)
	if err == nil {
		t.observe(time.Since(start))
	}
	return v, err
}
