package cloudsearch

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/sluice-dev/sluice/sink"
)

// vectorIDsPerQuery is how many ids NodeVectors asks for at a time: a
// node's vector of 1,536 dimensions takes about 15 KB of JSON, so a page
// stays near 1.5 MB.
const vectorIDsPerQuery = 100

// States of vectorReads.
const (
	vectorsUnknown int32 = iota
	vectorsReadable
	vectorsUnreadable
)

// vectorReads records whether the index returns what NodeVectors reads:
// the key, the chunk and the vector field, each retrievable and not in
// hiddenFieldKeys. ValidateIndex and CreateIndex set it from the definition
// they fetched or created; otherwise (indexManagement NoValidation) the
// first NodeVectors fetches the definition. It is safe for concurrent use.
type vectorReads struct{ state atomic.Int32 }

func (v *vectorReads) reset() { v.state.Store(vectorsUnknown) }

func (v *vectorReads) set(readable bool) {
	if readable {
		v.state.Store(vectorsReadable)
	} else {
		v.state.Store(vectorsUnreadable)
	}
}

// vectorsReadableIn reports whether def returns the fields NodeVectors
// reads: the key, the chunk and the vector field are retrievable (an
// attribute left out is the service's default, retrievable) and the
// configuration hides none of them. The indexes Sluice created before
// 2026-11-22 made the vector field not retrievable; LlamaIndex.TS leaves
// it retrievable unless hiddenFieldKeys names it, as Sluice now does.
func (c *Config) vectorsReadableIn(def IndexDefinition) bool {
	hidden := c.hidden()
	byName := make(map[string]Field, len(def.Fields))
	for _, f := range def.Fields {
		byName[f.Name] = f
	}
	for _, name := range c.vectorFields() {
		f, ok := byName[name]
		if hidden[name] || !ok || (f.Retrievable != nil && !*f.Retrievable) {
			return false
		}
	}
	return true
}

// vectorFields are the fields NodeVectors selects.
func (c *Config) vectorFields() []string {
	return []string{c.IDFieldKey, c.ChunkFieldKey, c.EmbeddingFieldKey}
}

// LendsVectors reports whether NodeVectors returns vectors, as far as the
// store knows without asking the service: the index's definition, read by
// ValidateIndex or written by CreateIndex, returns the vector field and
// the chunk. Before either (indexManagement NoValidation), it reports
// false, though NodeVectors may then learn otherwise.
func (s *Store) LendsVectors() bool {
	return s.vectors.state.Load() == vectorsReadable
}

// NodeVectors returns those of the nodes ids the index holds, with their
// id, chunk text and vector (no metadata), so that a run writes a chunk
// whose text a node it committed holds with that node's vector instead of
// embedding it again (it makes Store a pipeline.VectorReader). An index
// that does not return its vector field or its chunk (see LendsVectors;
// its definition is read once if no ValidateIndex did) lends nothing:
// NodeVectors then returns no node and sends no search. An identity that
// may not read index definitions (403) is lent nothing either.
func (s *Store) NodeVectors(ctx context.Context, ids []string) ([]sink.Node, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	readable, err := s.vectorsReadable(ctx)
	if err != nil || !readable {
		return nil, err
	}
	sel := strings.Join(s.cfg.vectorFields(), ",")
	var nodes []sink.Node
	for _, g := range chunkStrings(dedupe(ids), vectorIDsPerQuery) {
		err := s.scan(ctx, "read vectors", searchIn(s.cfg.IDFieldKey, g), sel, len(g), func(_ string, d map[string]any) error {
			nodes = append(nodes, s.cfg.fromDocument(d))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// vectorsReadable reports whether the index returns the fields NodeVectors
// reads, reading its definition the first time when neither ValidateIndex
// nor CreateIndex told the store. Concurrent first callers may each read
// it; they learn the same.
func (s *Store) vectorsReadable(ctx context.Context) (bool, error) {
	switch s.vectors.state.Load() {
	case vectorsReadable:
		return true, nil
	case vectorsUnreadable:
		return false, nil
	}
	def, err := s.GetIndex(ctx)
	if statusOf(err) == http.StatusForbidden {
		s.vectors.set(false)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	readable := s.cfg.vectorsReadableIn(def)
	s.vectors.set(readable)
	return readable, nil
}
