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

// DocsDeleter is implemented by stores that can remove the nodes of many
// reference documents at once (sink/local.Store: one transaction;
// sink/cloudsearch.Store: one search per group of documents).
// RemoveDocuments uses it; other stores get one Delete per document.
type DocsDeleter interface {
	// DeleteDocs removes every node whose RefDocID is one of refDocIDs.
	DeleteDocs(ctx context.Context, refDocIDs []string) error
}

// RemoveBatch is how many documents Run and watch mode remove with one
// RemoveDocuments call.
const RemoveBatch = 500

// RemoveDocument removes a document from the store and then from the
// manifest: RemoveDocuments with one id.
func RemoveDocument(ctx context.Context, store Deleter, manifest *state.Store, docID string) error {
	return RemoveDocuments(ctx, store, manifest, []string{docID})
}

// RemoveDocuments removes documents from the store and then from the
// manifest, in that order: a process killed in between, or a store delete
// that fails, leaves the manifest records, so the removal is retried (the
// next run over the folder deletes again the nodes of a recorded document
// whose file is gone). The other order could leave nodes that no record
// points to. If store is a DocsDeleter, the documents' nodes are deleted
// with one DeleteDocs call, and their records are forgotten in one
// manifest transaction either way, so that removing a folder of thousands
// of files costs a few commits rather than two per file. Run's removal of
// documents whose file is gone, watch mode's and `sluice delete` all go
// through it.
func RemoveDocuments(ctx context.Context, store Deleter, manifest *state.Store, docIDs []string) error {
	if len(docIDs) == 0 {
		return nil
	}
	if dd, ok := store.(DocsDeleter); ok {
		if err := dd.DeleteDocs(ctx, docIDs); err != nil {
			return fmt.Errorf("pipeline: deleting the nodes of %s: %w", docList(docIDs), err)
		}
	} else {
		for _, id := range docIDs {
			if err := store.Delete(ctx, id); err != nil {
				return fmt.Errorf("pipeline: deleting the nodes of %s: %w", id, err)
			}
		}
	}
	if err := manifest.Forget(ctx, docIDs...); err != nil {
		return fmt.Errorf("pipeline: forgetting %s in the manifest: %w", docList(docIDs), err)
	}
	return nil
}

// docList names the documents of a removal in an error: the one id, or the
// count and the first.
func docList(ids []string) string {
	if len(ids) == 1 {
		return ids[0]
	}
	return fmt.Sprintf("%d documents (%s, ...)", len(ids), ids[0])
}
