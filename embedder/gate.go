package embedder

import (
	"context"
	"sync"
	"time"
)

// gate caps the requests in flight with an adaptive limit (AIMD): a 429
// halves the limit, each success raises it by 1/limit, so it climbs back by
// about one slot per round of requests, up to the configured concurrency.
// Waiters are served in arrival order.
type gate struct {
	mu       sync.Mutex
	limit    float64
	max      float64
	inflight int
	waiters  []chan struct{}
	lastCut  time.Time
}

func newGate(n int) *gate { return &gate{limit: float64(n), max: float64(n)} }

// acquire blocks until a slot is free or ctx is done.
func (g *gate) acquire(ctx context.Context) error {
	g.mu.Lock()
	if len(g.waiters) == 0 && g.inflight < int(g.limit) {
		g.inflight++
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	g.waiters = append(g.waiters, ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, w := range g.waiters {
			if w == ch {
				g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
				return ctx.Err()
			}
		}
		// The slot was granted while ctx ended: hand it on.
		g.inflight--
		g.grant()
		return ctx.Err()
	}
}

// release frees a slot taken by acquire.
func (g *gate) release() {
	g.mu.Lock()
	g.inflight--
	g.grant()
	g.mu.Unlock()
}

// grant wakes waiters while slots are free; g.mu must be held.
func (g *gate) grant() {
	for len(g.waiters) > 0 && g.inflight < int(g.limit) {
		close(g.waiters[0])
		g.waiters = g.waiters[1:]
		g.inflight++
	}
}

// throttled halves the limit after a 429 on a request sent at sent. Answers
// to requests sent before the last cut belong to the same storm and do not
// cut again. It reports whether it cut, that is whether the 429 began a
// storm, and the limit after it.
func (g *gate) throttled(sent, now time.Time) (cut bool, limit float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sent.Before(g.lastCut) {
		return false, g.limit
	}
	g.limit = max(1, g.limit/2)
	g.lastCut = now
	return true, g.limit
}

// succeeded raises the limit additively.
func (g *gate) succeeded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit = min(g.max, g.limit+1/g.limit)
	g.grant()
}

func (g *gate) current() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}
