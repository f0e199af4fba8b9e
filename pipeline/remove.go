package pipeline

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// Deleter removes nodes from a vector store: a reference document's, or
// given ones; Writer and sink.VectorStore implement it.
type Deleter interface {
	Delete(ctx context.Context, refDocID string) error
	DeleteNodes(ctx context.Context, ids []string) error
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

// knownPage is how many node ids RemoveDocuments deletes by id at a time.
const knownPage = 1000

// RemoveDocument removes a document from the store and then from the
// manifest: RemoveDocuments with one id.
func RemoveDocument(ctx context.Context, store Deleter, manifest *state.Store, docID string) error {
	_, err := RemoveDocuments(ctx, store, manifest, []string{docID})
	return err
}

// RemoveDocuments removes documents from the store and then from the
// manifest, in that order: a process killed in between, or a store delete
// that fails, leaves the manifest records, so the removal is retried (the
// next run over the folder deletes again the nodes of a recorded document
// whose file is gone). The other order could leave nodes that no record
// points to. Before the first delete, the records are withdrawn
// (state.Store.WithdrawDocs): they keep every node id, but no longer vouch
// for them, so that a file that comes back as it was before the removal is
// done is read and written again rather than taken for stored.
//
// The nodes are deleted twice over: by reference document id (with one
// DeleteDocs call if store is a DocsDeleter, else one Delete each), which
// finds those the manifest does not know (left by a lost state file), and
// by id, the nodes the manifest knows (committed, and pending ids of a run
// that did not finish), which finds those a lookup by document misses. The
// order depends on the store:
//
//   - a store whose lookups lag behind its writes (a SettlingCounter:
//     Cloud AI Search finds a node about a second after acknowledging it)
//     deletes by id first, so that the lookup by document has little left
//     to find, and a node written just before, as when watch mode ingests
//     a file and it is removed a moment later, is deleted all the same;
//   - any other store (sink/local.Store) deletes by document first, which
//     removes the nodes in the order they are stored, and then by id,
//     which finds only the nodes whose document id was changed behind
//     Sluice's back. By id first, every page of ids touched rows all over
//     the store: removing a document of 121,376 chunks from the local store
//     took 22.6 s that way and 7.4 s this way.
//
// The records are forgotten in one manifest transaction, so removing a
// folder of thousands of files costs a few commits rather than two per
// file. Run's removal of documents whose file is gone, watch mode's and
// `sluice delete` all go through it. It returns the number of chunks the
// manifest knew the documents by (committed or acknowledged).
func RemoveDocuments(ctx context.Context, store Deleter, manifest *state.Store, docIDs []string) (int, error) {
	if len(docIDs) == 0 {
		return 0, nil
	}
	known, err := storedCount(ctx, manifest, docIDs)
	if err != nil {
		return 0, fmt.Errorf("pipeline: deleting the nodes of %s: %w", docList(docIDs), err)
	}
	if err := manifest.WithdrawDocs(ctx, docIDs...); err != nil {
		return 0, fmt.Errorf("pipeline: deleting the nodes of %s: %w", docList(docIDs), err)
	}
	_, lags := store.(SettlingCounter)
	if !lags {
		if err := deleteDocs(ctx, store, docIDs); err != nil {
			return 0, err
		}
	}
	if err := deleteKnown(ctx, store, manifest, docIDs); err != nil {
		return 0, fmt.Errorf("pipeline: deleting the nodes of %s: %w", docList(docIDs), err)
	}
	if lags {
		if err := deleteDocs(ctx, store, docIDs); err != nil {
			return 0, err
		}
	}
	if err := manifest.Forget(ctx, docIDs...); err != nil {
		return 0, fmt.Errorf("pipeline: forgetting %s in the manifest: %w", docList(docIDs), err)
	}
	return known, nil
}

// deleteDocs deletes the nodes of the documents docIDs by reference
// document id: with one DeleteDocs call if store is a DocsDeleter, else
// one Delete each.
func deleteDocs(ctx context.Context, store Deleter, docIDs []string) error {
	if dd, ok := store.(DocsDeleter); ok {
		if err := dd.DeleteDocs(ctx, docIDs); err != nil {
			return fmt.Errorf("pipeline: deleting the nodes of %s: %w", docList(docIDs), err)
		}
		return nil
	}
	for _, id := range docIDs {
		if err := store.Delete(ctx, id); err != nil {
			return fmt.Errorf("pipeline: deleting the nodes of %s: %w", id, err)
		}
	}
	return nil
}

// storedCount returns how many nodes of the documents docIDs the store
// held for sure, by the manifest (state.Store.StoredCount): the record's,
// the acknowledged ones and the found ones; the others were only intended
// (maybe stored). A run that stopped, or a document that vanished, while
// reusing the record's chunks has acknowledged some of them again: they
// count once.
func storedCount(ctx context.Context, manifest *state.Store, docIDs []string) (int, error) {
	known := 0
	for _, id := range docIDs {
		n, err := manifest.StoredCount(ctx, id)
		if err != nil {
			return 0, err
		}
		known += n
	}
	return known, nil
}

// deleteKnown deletes by id, knownPage at a time, the nodes the manifest
// records for the documents docIDs, committed or pending, each once
// (state.Store.RecordedIDs). The ids are read from the manifest a page at
// a time, so that removing a document of millions of chunks does not hold
// their list.
func deleteKnown(ctx context.Context, store Deleter, manifest *state.Store, docIDs []string) error {
	page := make([]string, 0, knownPage)
	for _, id := range docIDs {
		for after := ""; ; {
			limit := knownPage - len(page)
			ids, err := manifest.RecordedIDs(ctx, id, after, limit)
			if err != nil {
				return err
			}
			if page = append(page, ids...); len(page) == knownPage {
				if err := store.DeleteNodes(ctx, page); err != nil {
					return err
				}
				page = page[:0]
			}
			if len(ids) < limit { // the document's last page
				break
			}
			after = ids[len(ids)-1]
		}
	}
	if len(page) > 0 {
		return store.DeleteNodes(ctx, page)
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
