package watch

import (
	"context"
	"slices"
	"sync"

	"github.com/sluice-dev/sluice/pipeline"
)

// parkBytes bounds the vectors a Loop keeps of the documents it removed.
const parkBytes = 16 << 20

// parked holds the vectors of the chunks of the documents a Loop removed
// lately, by text (pipeline.TextKey), and lends them to its rounds
// (pipeline.Options.Vectors): a document that comes back, a file moved out
// of the folder and in again, regenerated, or a folder renamed (whose
// documents have other ids but the same text), is written with them
// instead of being embedded again. It holds at most max vectors, dropping
// the oldest first, and only in memory: after a restart, what comes back
// is embedded again, as a clean run embeds it. Its methods are safe to
// call from several goroutines.
type parked struct {
	mu    sync.Mutex
	model string
	max   int
	vecs  map[string][]float32
	order []string // keys in the order they came, oldest first
}

// newParked returns the parking of a Loop whose pipeline embeds with opts,
// or nil if there is none: its embedder computes vectors in process (they
// cost less than reading them back), or opts already lends vectors.
func newParked(opts pipeline.Options) *parked {
	if opts.Vectors != nil || opts.Embedder == nil || opts.State == nil {
		return nil
	}
	if pipeline.IsLocal(opts.Embedder) {
		return nil
	}
	if _, ok := opts.Store.(pipeline.VectorReader); !ok {
		return nil
	}
	dims := max(opts.Embedder.Dimensions(), 1)
	return &parked{model: opts.EmbedderInfo.Key(), max: max(parkBytes/(4*dims), 1), vecs: make(map[string][]float32)}
}

// Vectors returns the vectors held of keys, for the embedder model.
func (p *parked) Vectors(model string, keys []string) map[string][]float32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if model != p.model {
		return nil
	}
	var out map[string][]float32
	for _, k := range keys {
		if v, ok := p.vecs[k]; ok {
			if out == nil {
				out = make(map[string][]float32)
			}
			out[k] = v
		}
	}
	return out
}

// put holds v as the vector of the chunk text key, dropping the oldest
// vectors beyond max.
func (p *parked) put(key string, v []float32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.vecs[key]; ok {
		return
	}
	p.vecs[key] = v
	p.order = append(p.order, key)
	for len(p.vecs) > p.max {
		delete(p.vecs, p.order[0])
		p.order = p.order[1:]
	}
	if cap(p.order) > 2*p.max+16 { // let go of the keys dropped
		p.order = slices.Clone(p.order)
	}
}

// park holds the vectors of the documents ids, which the round is about to
// remove, as far as room allows: the manifest names their nodes, the store
// gives their vectors. It is best effort: what it cannot read is embedded
// again if it comes back.
func (l *Loop) park(ctx context.Context, opts pipeline.Options, ids []string) {
	p := l.parked
	vr, ok := opts.Store.(pipeline.VectorReader)
	if p == nil || !ok || len(ids) == 0 {
		return
	}
	var nodes []string
	for _, id := range ids {
		if len(nodes) >= p.max {
			break
		}
		err := opts.State.EachNodeID(ctx, id, func(n string) {
			if len(nodes) < p.max {
				nodes = append(nodes, n)
			}
		})
		if err != nil {
			l.log.Debug("watch: cannot keep the vectors of a removed document", "doc", id, "err", err)
			return
		}
	}
	dims := opts.Embedder.Dimensions()
	for batch := range slices.Chunk(nodes, 1000) {
		got, err := vr.NodeVectors(ctx, batch)
		if err != nil {
			l.log.Debug("watch: cannot keep the vectors of removed documents", "err", err)
			return
		}
		for _, n := range got {
			if len(n.Embedding) == dims {
				p.put(pipeline.TextKey(n.Text), n.Embedding)
			}
		}
	}
}

var _ pipeline.VectorSource = (*parked)(nil)
