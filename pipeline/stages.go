package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// batch groups chunks into embedding requests of at most BatchSize chunks
// and MaxBatchTokens tokens. A partly filled batch is sent when no chunk has
// arrived for MaxWait, so a trickle of documents (watch mode) is not held
// back waiting for a full batch.
func (r *run) batch(ctx context.Context, in <-chan *chunk, out chan<- []*chunk) error {
	defer close(out)
	var (
		cur    []*chunk
		tokens int
		timer  = time.NewTimer(r.opts.MaxWait)
	)
	defer timer.Stop()
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b := cur
		cur, tokens = nil, 0
		return send(ctx, out, b)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			if err := flush(); err != nil {
				return err
			}
			timer.Reset(r.opts.MaxWait)
		case c, ok := <-in:
			if !ok {
				return flush()
			}
			if c.doc.failed() {
				if err := r.drop(ctx, []*chunk{c}); err != nil {
					return err
				}
				continue
			}
			if r.opts.MaxBatchTokens > 0 && len(cur) > 0 && tokens+c.tokens > r.opts.MaxBatchTokens {
				if err := flush(); err != nil {
					return err
				}
			}
			cur = append(cur, c)
			tokens += c.tokens
			if len(cur) >= r.opts.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
			timer.Reset(r.opts.MaxWait)
		}
	}
}

// embed embeds the chunks of one batch that need it (reused chunks pass
// through). Chunks of documents that failed meanwhile are dropped.
func (r *run) embed(ctx context.Context, b []*chunk, emit func([]*chunk) error) error {
	live, dropped := partition(b)
	if err := r.drop(ctx, dropped); err != nil {
		return err
	}
	var need []*chunk
	for _, c := range live {
		if !c.reuse {
			need = append(need, c)
		}
	}
	need, err := r.knownVectors(ctx, need)
	if err != nil {
		return err
	}
	if err := r.embedChunks(ctx, need); err != nil {
		return err
	}
	if err := r.toJournal(ctx, need); err != nil {
		return err
	}
	out := live[:0:0]
	for _, c := range live {
		if c.reuse || c.vector != nil {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return emit(out)
}

// knownVectors sets the vectors of chunks that need not be embedded, as
// their text was embedded before, and returns the chunks still to embed:
// those Options.Vectors lends, those a dead run embedded but did not write
// (the journal), and those of the text of a committed node of the index
// (see VectorReader).
func (r *run) knownVectors(ctx context.Context, cs []*chunk) ([]*chunk, error) {
	if r.opts.Vectors != nil && r.opts.State != nil && len(cs) > 0 {
		cs = r.withVectors(cs, r.opts.Vectors.Vectors(r.model, chunkKeys(cs)))
	}
	if !r.journal || len(cs) == 0 {
		return cs, nil
	}
	saved, err := r.opts.State.LoadVectors(ctx, r.model, chunkKeys(cs))
	if err != nil {
		return cs, err
	}
	return r.copied(ctx, r.withVectors(cs, saved))
}

// copied sets the vectors of chunks whose text a committed node of the
// index holds, read back from the store (a VectorReader), and returns the
// others. The node's text is checked: the store may have lost the node, or
// hold another under its id, since the manifest recorded it. A run that
// writes every document again copies nothing: a Full run promises to embed
// every chunk again (and has withdrawn every node from the manifest
// anyway), and a store found lost holds no node to copy from.
func (r *run) copied(ctx context.Context, cs []*chunk) ([]*chunk, error) {
	vr, ok := r.opts.Store.(VectorReader)
	if !ok || r.rewrite || len(cs) == 0 {
		return cs, nil
	}
	refs, err := r.opts.State.NodesOfTexts(ctx, chunkKeys(cs))
	if err != nil || len(refs) == 0 {
		return cs, err
	}
	ids := make([]string, 0, len(refs))
	for _, n := range refs {
		ids = append(ids, n.ID)
	}
	nodes, err := vr.NodeVectors(ctx, ids)
	if err != nil {
		return cs, fmt.Errorf("reading back %d nodes of the texts of chunks to embed: %w", len(ids), err)
	}
	vecs := make(map[string][]float32, len(nodes))
	for _, n := range nodes {
		if k := textKey(n.Text); refs[k].ID == n.ID {
			vecs[k] = n.Embedding
		}
	}
	rest := r.withVectors(cs, vecs)
	if n := len(cs) - len(rest); n > 0 {
		r.mu.Lock()
		r.report.ChunksCopied += n
		r.mu.Unlock()
	}
	return rest, nil
}

// chunkKeys returns the text keys of cs (textKey), in order.
func chunkKeys(cs []*chunk) []string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.key
	}
	return keys
}

// lendsVectors reports whether a dry run expects chunks to be written with
// the vector of a committed node of the same text (see copied) when the
// manifest knows one: it does not read the store, but asks one that can
// tell (a vectorLender) whether it lends vectors at all.
func (r *run) lendsVectors() bool {
	_, reads := r.opts.Store.(VectorReader)
	if l, ok := r.opts.Store.(vectorLender); ok && !l.LendsVectors() {
		reads = false
	}
	if r.opts.Store == nil {
		reads = r.opts.PlanCopies
	}
	return reads && r.journal && !r.rewrite && r.opts.State != nil
}

// vectorLender is a VectorReader that tells, without reading any node,
// whether it would lend vectors (see VectorReader).
type vectorLender interface{ LendsVectors() bool }

// withVectors sets the vectors of the chunks that vecs, by chunk text key,
// holds with the embedder's dimensions, and returns the others.
func (r *run) withVectors(cs []*chunk, vecs map[string][]float32) []*chunk {
	if len(vecs) == 0 {
		return cs
	}
	dims := r.opts.Embedder.Dimensions()
	var rest []*chunk
	for _, c := range cs {
		if v, ok := vecs[c.key]; ok && len(v) == dims {
			c.vector = v
			continue
		}
		rest = append(rest, c)
	}
	return rest
}

// toJournal saves freshly embedded vectors until their documents commit, so
// that a run killed before writing them need not embed them again.
// Vectors of a local embedder are not journalled: computing them again
// costs less than writing them twice.
func (r *run) toJournal(ctx context.Context, cs []*chunk) error {
	if !r.journal || len(cs) == 0 {
		return nil
	}
	vecs := make(map[string][]float32, len(cs))
	for _, c := range cs {
		if c.vector != nil {
			vecs[c.key] = c.vector
		}
	}
	return r.opts.State.SaveVectors(ctx, r.model, vecs)
}

// embedChunks sets the vectors of cs. When the provider rejects the inputs,
// the chunks are split in halves until the offending ones are isolated, so
// that only their documents fail; any other error stops the run.
func (r *run) embedChunks(ctx context.Context, cs []*chunk) error {
	if len(cs) == 0 {
		return nil
	}
	vecs, err := r.embedOnce(ctx, cs)
	if err != nil {
		if ctx.Err() != nil || !isBatchError(err) {
			return err
		}
		if len(cs) > 1 {
			half := len(cs) / 2
			if err := r.embedChunks(ctx, cs[:half]); err != nil {
				return err
			}
			return r.embedChunks(ctx, cs[half:])
		}
		cs[0].doc.fail(fmt.Errorf("embedder rejected chunk %d: %w", cs[0].ordinal, err))
		return r.drop(ctx, cs)
	}
	dims := r.opts.Embedder.Dimensions()
	tokens := 0
	for i, c := range cs {
		if len(vecs[i]) != dims {
			return &sink.DimensionError{Want: dims, Got: len(vecs[i]), NodeID: c.id}
		}
		tokens += c.tokens
	}
	for i, c := range cs {
		c.vector = vecs[i]
	}
	r.opts.Stats.Tokens.Add(int64(tokens))
	r.mu.Lock()
	r.report.TokensEmbedded += int64(tokens)
	r.mu.Unlock()
	return nil
}

// embedOnce sends one embedding request for the chunks.
func (r *run) embedOnce(ctx context.Context, cs []*chunk) ([][]float32, error) {
	inputs := make([]embedder.Input, len(cs))
	tokens := 0
	for i, c := range cs {
		inputs[i] = embedder.Input{Text: c.text, Tokens: c.tokens}
		tokens += c.tokens
	}
	start := time.Now()
	vecs, err := r.opts.Embedder.Embed(ctx, inputs)
	r.opts.Stats.Batches.Add(1)
	r.opts.Logger.Debug("embedding batch", "chunks", len(cs), "tokens", tokens, "took", time.Since(start), "err", err)
	if err == nil && len(vecs) != len(cs) {
		err = fmt.Errorf("pipeline: embedder returned %d vectors for %d inputs", len(vecs), len(cs))
	}
	return vecs, err
}

// write stores one batch: new chunks with their embeddings, reused chunks
// whose metadata changed without them. The manifest records the ids before
// the write (so that a run killed during it can clean up) and acknowledges
// them after; then the documents whose last chunk the batch holds complete.
func (r *run) write(ctx context.Context, b []*chunk) error {
	live, dropped := partition(b)
	if err := r.drop(ctx, dropped); err != nil {
		return err
	}
	var add, update []*chunk
	intend := make(map[string][]state.Node)
	for _, c := range live {
		if c.reuse {
			update = append(update, c)
		} else {
			add = append(add, c)
		}
		intend[c.doc.file.ID] = append(intend[c.doc.file.ID], state.Node{ID: c.id, Key: c.key})
	}
	if r.manifest != nil && len(intend) > 0 {
		if err := r.manifest.Intend(ctx, intend); err != nil {
			return err
		}
	}
	acked := make(map[string][]state.Node)
	written, err := r.writeNodes(ctx, add, acked, func(ns []sink.Node) error {
		_, err := r.opts.Store.Add(ctx, ns)
		return err
	})
	if err != nil {
		return err
	}
	updated, err := r.writeNodes(ctx, update, acked, func(ns []sink.Node) error { return r.updater.UpdateMetadata(ctx, ns) })
	if err != nil {
		return err
	}
	if r.manifest != nil && len(acked) > 0 {
		if err := r.manifest.Ack(ctx, acked); err != nil {
			return err
		}
	}
	r.opts.Stats.ChunksDone.Add(int64(written + updated))
	// The store rejected the others: their documents failed.
	r.opts.Stats.ChunksSkipped.Add(int64(len(live) - written - updated))
	r.mu.Lock()
	r.report.ChunksWritten += written
	r.mu.Unlock()
	return r.settle(ctx, live)
}

// writeNodes sends chunks to the store with fn and collects the acknowledged
// node ids by document. Nodes the store rejects fail their documents; any
// other error, and a store that cannot take writes at all
// (sink.ErrUnavailable, even when reported node by node), stops the run.
// It returns the number of nodes acknowledged.
func (r *run) writeNodes(ctx context.Context, cs []*chunk, acked map[string][]state.Node, fn func([]sink.Node) error) (int, error) {
	if len(cs) == 0 {
		return 0, nil
	}
	nodes := make([]sink.Node, len(cs))
	for i, c := range cs {
		nodes[i] = sink.Node{
			ID: c.id, RefDocID: c.doc.file.ID, Text: c.text, Embedding: c.vector,
			Metadata: c.doc.file.Metadata, StartChar: c.start, EndChar: c.end,
		}
	}
	var rejected map[string]error
	if err := fn(nodes); err != nil {
		var werr *sink.WriteError
		if !errors.As(err, &werr) || errors.Is(err, sink.ErrUnavailable) {
			return 0, err
		}
		rejected = werr.Failed
	}
	n := 0
	for _, c := range cs {
		if cause, ok := rejected[c.id]; ok {
			c.doc.fail(fmt.Errorf("store rejected chunk %d: %w", c.ordinal, cause))
			continue
		}
		acked[c.doc.file.ID] = append(acked[c.doc.file.ID], state.Node{ID: c.id, Key: c.key})
		n++
	}
	return n, nil
}

// partition splits chunks into those of live documents and those of
// documents that already failed.
func partition(b []*chunk) (live, dropped []*chunk) {
	live = b[:0:0]
	for _, c := range b {
		if c.doc.failed() {
			dropped = append(dropped, c)
		} else {
			live = append(live, c)
		}
	}
	return live, dropped
}

// isBatchError reports whether an embedding error concerns only the inputs
// of the batch (the provider rejected them: 400, or an input over the
// provider's size cap), so that their documents fail and the run goes on.
// Other errors (credentials, quota exhausted after retries, an unreachable
// provider) would fail every document alike and stop the run instead.
func isBatchError(err error) bool {
	return errors.Is(err, embedder.ErrBadRequest) || errors.Is(err, embedder.ErrInputTooLarge)
}
