package pipeline

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// Deleter removes every node of a reference document from a vector store;
// Writer and sink.VectorStore implement it.
type Deleter interface {
	Delete(ctx context.Context, refDocID string) error
}

// RemoveDocument removes a document from the store and then from the
// manifest, in that order: a process killed in between, or a store delete
// that fails, leaves the manifest record, so the removal is retried (the
// next run over the folder deletes again the nodes of a recorded document
// whose file is gone). The other order could leave nodes that no record
// points to. Run's removal of documents whose file is gone, watch mode's
// and `sluice delete` all go through it.
func RemoveDocument(ctx context.Context, store Deleter, manifest *state.Store, docID string) error {
	if err := store.Delete(ctx, docID); err != nil {
		return fmt.Errorf("pipeline: deleting the nodes of %s: %w", docID, err)
	}
	if err := manifest.Forget(ctx, docID); err != nil {
		return fmt.Errorf("pipeline: forgetting %s in the manifest: %w", docID, err)
	}
	return nil
}
