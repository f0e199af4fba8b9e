package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
)

// Incremental runs (Options.State set) follow these rules:
//
//   - A document whose size, modification time and metadata match its
//     manifest record is unchanged and not read; one whose content hash
//     matches is unchanged and not split.
//   - A changed document's chunks whose node ids are already in the store
//     (its recorded ids, or ids acknowledged by a run that died before
//     finishing it) are not embedded again; if the document's metadata
//     changed they are rewritten without their embeddings.
//   - When every new chunk is acknowledged, the chunks that disappeared are
//     deleted and only then the manifest records the document, so a run
//     killed at any moment converges on the next run.
//   - After a complete walk, documents in the manifest that the walk did not
//     find, and that the include/exclude settings select, are deleted from
//     the store and the manifest. A folder the walk could not read protects
//     the documents below it.

// prepare loads the manifest and checks the embedder.
func (r *run) prepare(ctx context.Context) error {
	st := r.opts.State
	if st == nil {
		return nil
	}
	r.model = r.opts.EmbedderInfo.Key()
	r.journal = !isLocal(r.opts.Embedder)
	if !r.opts.Full {
		if err := st.CheckEmbedder(ctx, r.opts.EmbedderInfo); err != nil {
			return err
		}
	}
	var err error
	if !r.opts.DryRun {
		if r.manifest, err = st.Begin(ctx); err != nil {
			return err
		}
	}
	if !r.fullWalk {
		// A run over named files (a watch round, a retry) looks up just
		// their records: its cost does not grow with the manifest.
		return nil
	}
	if !r.opts.DryRun {
		if err := st.ClearVectors(ctx, r.model); err != nil {
			return err
		}
		if !r.opts.Full {
			if err := st.SetEmbedder(ctx, r.opts.EmbedderInfo); err != nil {
				return err
			}
		}
	}
	stamps, err := st.Stamps(ctx)
	if err != nil {
		return err
	}
	// Stamps has every recorded id: only documents a dead run left
	// uncommitted are still to be known.
	ids, err := st.Uncommitted(ctx)
	if err != nil {
		return err
	}
	r.stamps = stamps
	r.pendingOnly = make(map[string]bool, len(ids))
	for _, id := range ids {
		r.pendingOnly[id] = true
	}
	return nil
}

// plan decides whether a document is unchanged and, if not, loads what the
// store already holds of it. Its errors concern the manifest, not the
// document: they stop the run.
func (r *run) plan(ctx context.Context, d *document) (unchanged bool, err error) {
	st := r.opts.State
	if st == nil {
		return false, nil
	}
	f := d.file
	if r.stamps != nil { // loaded for a whole-folder run: answer most files from memory
		stamp, recorded := r.stamps[f.ID]
		if !recorded && !r.pendingOnly[f.ID] {
			return false, nil
		}
		if recorded && r.fresh(f, d.metaHash, stamp.Size, stamp.MetaHash) && stamp.ModTime.Equal(f.ModTime) {
			return true, nil
		}
	}
	prev, recorded, err := st.Doc(ctx, f.ID)
	if err != nil {
		return false, err
	}
	acked, intended, err := st.Pending(ctx, f.ID)
	if err != nil {
		return false, err
	}
	if !recorded && len(acked)+len(intended) == 0 {
		return false, nil
	}
	d.known = make(map[string]bool)
	if recorded {
		// A copy of the stamp alone: the list of node ids, as long as the
		// document, is not kept once known holds them.
		stamp := prev.Stamp
		d.prev = &stamp
		for _, id := range prev.NodeIDs {
			d.known[id] = true
		}
	}
	for _, id := range acked {
		if _, ok := d.known[id]; !ok {
			d.known[id] = false
		}
	}
	if len(intended) > 0 {
		d.intended = make(map[string]bool, len(intended))
		for _, id := range intended {
			if _, known := d.known[id]; !known {
				d.intended[id] = true
			}
		}
	}
	if !recorded || len(acked)+len(intended) > 0 || !r.fresh(f, d.metaHash, prev.Size, prev.MetaHash) {
		return false, nil
	}
	if prev.ModTime.Equal(f.ModTime) {
		return true, nil
	}
	// Touched but maybe not edited: the content hash decides. A file that
	// cannot be read counts as changed: reading it again fails the document.
	hash, n, err := hashFile(f)
	r.opts.Stats.BytesRead.Add(n)
	if err == nil && hash == prev.Hash {
		d.hash = hash
		return true, nil
	}
	return false, nil
}

// fresh reports whether a file's size and metadata match its record, so
// that its modification time or content hash can prove it unchanged.
func (r *run) fresh(f reader.File, metaHash string, size int64, recordedMeta string) bool {
	return !r.opts.Full && f.Size == size && metaHash == recordedMeta
}

func hashFile(f reader.File) (string, int64, error) {
	c, err := reader.Open(f)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	if _, err := io.Copy(io.Discard, c); err != nil {
		return "", c.BytesRead(), err
	}
	return c.Sum(), c.BytesRead(), nil
}

// unchanged counts a skipped document, refreshing its record's
// modification time when only that changed.
func (r *run) unchanged(ctx context.Context, d *document) error {
	if d.prev != nil && !r.opts.DryRun && !d.prev.ModTime.Equal(d.file.ModTime) {
		if err := r.opts.State.Touch(ctx, d.file.ID, d.file.ModTime); err != nil {
			return err
		}
	}
	r.opts.Stats.FilesDone.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report.FilesUnchanged++
	return nil
}

// commit deletes a completed document's stale chunks and records it in the
// manifest. It returns the number of stale chunks.
func (r *run) commit(ctx context.Context, d *document, o outcome) (int, error) {
	if r.opts.State == nil {
		return 0, nil
	}
	if r.opts.DryRun {
		// Every chunk that matched a recorded id accounts for one of them;
		// node ids are unique within a document.
		return len(d.known) + len(d.intended) - d.matched, nil
	}
	var stale []string
	if d.known != nil || d.intended != nil {
		// Only a document the manifest knew can have stale nodes.
		var err error
		if stale, err = r.manifest.Stale(ctx, d.file.ID); err != nil {
			return 0, err
		}
	}
	if len(stale) > 0 {
		if err := r.opts.Store.DeleteNodes(ctx, stale); err != nil {
			return 0, fmt.Errorf("pipeline: deleting %d stale chunks of %s: %w", len(stale), d.file.ID, err)
		}
	}
	stamp := state.Stamp{Hash: o.hash, Size: d.file.Size, ModTime: d.file.ModTime, MetaHash: d.metaHash}
	model := r.model
	if !r.journal {
		model = "" // nothing to release
	}
	return len(stale), r.manifest.Commit(ctx, d.file.ID, stamp, model)
}

// deadLetter records a failed document for `sluice failed`.
func (r *run) deadLetter(ctx context.Context, d *document, cause error) error {
	if r.opts.State == nil || r.opts.DryRun || d.file.ID == "" {
		return nil
	}
	return r.opts.State.Fail(ctx, d.file.ID, cause.Error(), time.Now())
}

// conclude removes the documents whose source is gone, after a complete walk.
func (r *run) conclude(ctx context.Context) error {
	st := r.opts.State
	if st == nil || !r.fullWalk {
		return nil
	}
	// Documents first recorded by this run were all seen: only those known
	// before it can be missing.
	ids := slices.Sorted(maps.Keys(r.stamps))
	for id := range r.pendingOnly {
		ids = append(ids, id)
	}
	for _, id := range ids {
		if r.seen[id] || !r.opts.Reader.Match(id) || r.protected(id) {
			continue
		}
		if err := r.removeDocument(ctx, id); err != nil {
			return err
		}
	}
	if r.opts.DryRun {
		return nil
	}
	return st.SetEmbedder(ctx, r.opts.EmbedderInfo)
}

// removeDocument deletes every node of a document whose source is gone.
func (r *run) removeDocument(ctx context.Context, id string) error {
	st := r.opts.State
	prev, _, err := st.Doc(ctx, id)
	if err != nil {
		return err
	}
	acked, _, err := st.Pending(ctx, id)
	if err != nil {
		return err
	}
	n := len(prev.NodeIDs) + len(acked)
	if !r.opts.DryRun {
		if err := r.opts.Store.Delete(ctx, id); err != nil {
			return fmt.Errorf("pipeline: deleting the nodes of %s, whose file is gone: %w", id, err)
		}
		if err := st.Forget(ctx, id); err != nil {
			return err
		}
	}
	r.opts.Logger.Debug("document deleted", "doc", id, "chunks", n)
	r.report.FilesDeleted++
	r.report.ChunksDeleted += n
	return nil
}

// protected reports whether id lies under a folder the walk could not read.
func (r *run) protected(id string) bool {
	for _, dir := range r.failedDirs {
		if id == dir || strings.HasPrefix(id, dir+"/") {
			return true
		}
	}
	return false
}

// isDirError reports whether a walk error may hide documents below it.
func isDirError(err error) bool {
	return errors.Is(err, reader.ErrUnreadable) || errors.Is(err, reader.ErrSymlinkLoop) || errors.Is(err, reader.ErrOutsideRoot)
}

// metadataHash identifies the metadata a document's nodes are written with.
func metadataHash(md map[string]any) string {
	h := fnv.New64a()
	for _, k := range slices.Sorted(maps.Keys(md)) {
		fmt.Fprintf(h, "%s\x00%T\x00%v\x00", k, md[k], md[k])
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// textKey identifies a chunk text in the vector journal, across documents.
func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}
