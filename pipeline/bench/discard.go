package bench

import (
	"context"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/sink"
)

// Discard is a store that accepts every node and keeps none, so that a
// benchmark measures the embedding path alone. Its zero value is ready.
type Discard struct{}

// Add returns the ids of nodes and stores nothing.
func (Discard) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids, nil
}

// DeleteNodes does nothing.
func (Discard) DeleteNodes(ctx context.Context, ids []string) error { return ctx.Err() }

// Delete does nothing.
func (Discard) Delete(ctx context.Context, refDocID string) error { return ctx.Err() }

var _ pipeline.Writer = Discard{}
