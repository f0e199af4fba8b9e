package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
)

// removeGone removes the documents ids, whose files are gone, from the
// store and the manifest, pipeline.RemoveBatch at a time
// (pipeline.RemoveDocuments). It returns the ids the manifest held as
// documents (committed, or written in part by a run that did not finish
// them), which a whole-folder run would count as deleted, and apart from
// them those whose only record was a dead letter: a folder that can be
// watched again, or a file that failed before it was ever stored. An id
// the manifest knew nothing of (a file created and removed before a round
// read it) is in neither, and costs the store no request: the manifest
// records the nodes of a document before they are written. On error both
// hold the ids of the batches removed before it.
func removeGone(ctx context.Context, opts pipeline.Options, ids []string) (removed, cleared []string, err error) {
	for batch := range slices.Chunk(ids, pipeline.RemoveBatch) {
		var recorded, docs, dead []string
		for _, id := range batch {
			kind, err := recordOf(ctx, opts.State, id)
			if err != nil {
				return removed, cleared, err
			}
			switch kind {
			case document:
				docs = append(docs, id)
			case deadLetter:
				dead = append(dead, id)
			default:
				continue // nothing of it was ever stored: no request to the store
			}
			recorded = append(recorded, id)
		}
		if _, err := pipeline.RemoveDocuments(ctx, opts.Store, opts.State, recorded); err != nil {
			return removed, cleared, err
		}
		removed, cleared = append(removed, docs...), append(cleared, dead...)
	}
	return removed, cleared, nil
}

// goneBelow returns the ids the manifest records below the folders dirs
// whose file is gone, leaving out those of skip: the documents a sweep of
// dirs removes (reader.Sweep). A whole-folder round may have read files in
// a folder created since the watcher started that were gone before the
// watcher could look into it, and no event names them.
func goneBelow(ctx context.Context, opts pipeline.Options, dirs, skip []string) ([]string, error) {
	cfg := opts.Reader.WithDefaults()
	seen := make(map[string]bool, len(skip))
	for _, id := range skip {
		seen[id] = true
	}
	var out []string
	for _, dir := range dirs {
		below, err := opts.State.DocIDsUnder(ctx, dir)
		if err != nil {
			return nil, err
		}
		for _, id := range below {
			if seen[id] {
				continue
			}
			seen[id] = true
			if _, err := reader.Stat(cfg, id); isGone(cfg, id, err) {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// record is what the manifest holds of an id.
type record int

const (
	none       record = iota
	document          // committed, or node ids of a run that did not finish it
	deadLetter        // only a dead letter
)

// recordOf returns what the manifest st holds of id.
func recordOf(ctx context.Context, st *state.Store, id string) (record, error) {
	if doc, err := isDocument(ctx, st, id); err != nil || doc {
		return document, err
	}
	if has, err := st.Has(ctx, id); err != nil || !has {
		return none, err
	}
	return deadLetter, nil
}

// isDocument reports whether the manifest st records id as a document, in
// full or as the node ids of a run that did not finish it. It reads the
// record's stamp and counts the pending ids, never their list, which is as
// long as the document.
func isDocument(ctx context.Context, st *state.Store, id string) (bool, error) {
	if _, ok, err := st.Stamp(ctx, id); err != nil || ok {
		return ok, err
	}
	_, pending, err := st.NodeCounts(ctx, id)
	return pending > 0, err
}

// changedFiles is a pipeline source of the folders that could not be
// watched (failed, reported as failures as Walk reports unreadable folders)
// and of the documents ids under cfg.Dir. Documents whose file is gone are
// not sent to the pipeline but appended to *gone, for removeGone; other
// per-file problems are reported as failures.
func changedFiles(cfg reader.Config, failed []reader.Event, ids []string, gone *[]string) pipeline.FileSource {
	cfg = cfg.WithDefaults()
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, ev := range failed {
			if err := ctx.Err(); err != nil {
				return err
			}
			ferr := ev.Err
			if ferr == nil {
				ferr = &reader.FileError{Path: ev.ID, Err: reader.ErrUnreadable, Detail: "folder cannot be watched"}
			}
			if err := fn(reader.File{ID: ev.ID, Path: filepath.Join(cfg.Dir, filepath.FromSlash(ev.ID))}, ferr); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := reader.Stat(cfg, id)
			if isGone(cfg, id, err) {
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

// isGone reports whether err, from reader.Stat of id, means that no
// document is at id any more, as a Walk would find: the file was removed or
// a folder above it was replaced by a file (reader.ErrVanished), or a
// folder stands at its path now (Walk enters it instead: its files are
// documents of their own).
func isGone(cfg reader.Config, id string, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, reader.ErrVanished):
		return true
	case errors.Is(err, reader.ErrUnreadable):
		fi, serr := os.Stat(filepath.Join(cfg.Dir, filepath.FromSlash(id)))
		return serr == nil && fi.IsDir()
	}
	return false
}
