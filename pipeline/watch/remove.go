package watch

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
)

// Deleter removes every node of a reference document from a vector store;
// sink.VectorStore and pipeline.Writer implement it.
type Deleter interface {
	Delete(ctx context.Context, refDocID string) error
}

// Remove deletes the documents ids from the store and then from the
// manifest, one at a time, so a process killed in between leaves a record
// whose nodes the next reconciliation deletes again. It returns the number
// of documents removed before an error.
func Remove(ctx context.Context, store Deleter, st *state.Store, ids []string) (int, error) {
	for i, id := range ids {
		if err := store.Delete(ctx, id); err != nil {
			return i, fmt.Errorf("watch: deleting the nodes of %s, whose file is gone: %w", id, err)
		}
		if err := st.Forget(ctx, id); err != nil {
			return i, fmt.Errorf("watch: forgetting %s in the manifest: %w", id, err)
		}
	}
	return len(ids), nil
}

// changedFiles is a pipeline source of the documents ids under cfg.Dir.
// Documents whose file is gone are not sent to the pipeline but appended to
// *gone, for Remove; other per-file problems are reported as failures.
func changedFiles(cfg reader.Config, ids []string, gone *[]string) pipeline.FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := reader.Stat(cfg, id)
			if errors.Is(err, reader.ErrVanished) {
				*gone = append(*gone, id)
				continue
			}
			var ferr *reader.FileError
			if err != nil && !errors.As(err, &ferr) {
				return err
			}
			if f.ID == "" {
				f.ID = id
			}
			if err := fn(f, err); err != nil {
				return err
			}
		}
		return nil
	}
}

// stillGone keeps the ids whose file is really gone and returns the others,
// which came back (a delete followed by a create within one round).
func stillGone(cfg reader.Config, ids []string) (gone, back []string) {
	for _, id := range ids {
		if _, err := reader.Stat(cfg, id); errors.Is(err, reader.ErrVanished) {
			gone = append(gone, id)
		} else {
			back = append(back, id)
		}
	}
	return gone, back
}
