package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
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
//   - A document the manifest has no record of may still have nodes in the
//     store, left by a run whose state file was since lost, emptied or
//     pointed elsewhere, unless the store was empty when the run started
//     (EmptyReporter). Before its first new node is written, the ids the
//     store holds for it are recorded as a dead run's (NodeLister), so that
//     those not written again are deleted with the stale chunks. A Full run
//     does the same for every document it writes, keeping its record; with
//     a NodeScanner store it records the ids of every document at once,
//     from one listing of the store, before the walk. A
//     store that cannot list a document's nodes has them deleted
//     (Writer.Delete by the document id) before the first new one is
//     written, the record dropped first.
//   - With Verify, the store is asked about every node the manifest
//     records before the walk (NodeChecker), and the nodes it lacks leave
//     their documents' records, which are marked to be read again
//     (state.Store.Lost): such a document counts as changed, and its
//     chunks whose nodes are missing are embedded and written again, as
//     new ones are, by this run or, should it fail or die, the next. With
//     a NodeScanner store, the nodes it holds for a recorded document that
//     the record does not list are recorded as a dead run's (state.Run.Found)
//     and the record marked to be read again: the document counts as
//     changed, and those nodes are deleted as its stale chunks.
//   - A document that fails keeps the nodes its record lists (none if it
//     had no record): the nodes this run or a dead one wrote for it beyond
//     those are deleted, and so are its pending ids in the manifest. Nodes
//     the store held that the manifest did not know of stay, unless this
//     run wrote them again.
//   - After a complete walk, documents in the manifest that the walk did not
//     find, and that the include/exclude settings select, are deleted from
//     the store and the manifest; so are, in a Full or Verify run,
//     documents the store lists (NodeScanner) that the manifest does not
//     know. A folder the
//     walk could not read protects the documents below it.
//   - A document leaves the dead-letter table when it is ingested, found
//     unchanged, or removed; and, after a complete walk that did not find
//     it, when its file is gone, the exclude settings now leave it out, or
//     it names a folder that can be read again. A run over named files (a
//     retry, a watch round) and a run whose include settings do not select
//     a document leave its entry alone: they did not look at it.

// prepare checks the embedder against the manifest and the store and loads
// the manifest.
func (r *run) prepare(ctx context.Context) error {
	st := r.opts.State
	if st != nil && !r.opts.Full {
		if err := st.CheckEmbedder(ctx, r.opts.EmbedderInfo); err != nil {
			return err
		}
	}
	if !r.opts.DryRun {
		// Before anything is embedded: a store that cannot take the
		// vectors would refuse them only after they were paid for.
		if err := CheckDimensions(ctx, r.opts.Store, r.opts.Embedder.Dimensions()); err != nil {
			return err
		}
	}
	if st == nil {
		if r.opts.DryRun && r.fullWalk {
			// A dry run without a manifest plans what a run with an
			// empty one would do: with Full, remove the documents a
			// NodeScanner store lists whose files are gone.
			return r.scanStore(ctx)
		}
		return nil
	}
	r.model = r.opts.EmbedderInfo.Key()
	r.journal = !IsLocal(r.opts.Embedder)
	var err error
	if !r.opts.DryRun {
		if r.manifest, err = st.Begin(ctx); err != nil {
			return err
		}
		if e, ok := r.opts.Store.(EmptyReporter); ok {
			if r.storeEmpty, err = e.Empty(ctx); err != nil {
				return err
			}
		}
		if err := r.checkStoreLost(ctx); err != nil {
			return err
		}
		if err := r.checkManifestLost(ctx); err != nil {
			return err
		}
		if r.opts.Full {
			// Before anything is written: a run that stops part-way
			// must leave no record vouching for vectors of either
			// model (see state.Store.ChangeEmbedder).
			if err := st.ChangeEmbedder(ctx, r.opts.EmbedderInfo); err != nil {
				return err
			}
		}
	}
	// Chunks cut with other splitter settings are not what this run would
	// cut: every document is split again (the chunks whose text and place
	// are unchanged keep their vectors). The new settings are recorded
	// before anything is written, with every record marked to be read
	// again (state.Store.ChangeSplitting), so that a run that stops
	// part-way leaves no record taken for chunks cut with the settings of
	// the next run, whichever they are. A run over named files (`sluice
	// failed retry`) does the same: it splits its files again, and leaves
	// the others to the next run over the folder.
	if recorded, ok, err := st.Splitting(ctx); err != nil {
		return err
	} else if want := r.splitting(); ok && recorded != want {
		if !r.opts.Full {
			r.resplit = true
			msg := "splitter settings changed since the last run: every document is split again; chunks whose text is unchanged keep their vectors"
			if !r.fullWalk {
				msg = "splitter settings changed since the last run over the whole folder: these documents are split again, and every other by the next run over the folder; chunks whose text is unchanged keep their vectors"
			}
			r.opts.Logger.Info(msg, "was", recorded.String(), "now", want.String())
		}
		if !r.opts.DryRun {
			if err := st.ChangeSplitting(ctx, want); err != nil {
				return err
			}
		}
	} else if !ok && !r.opts.DryRun {
		// None recorded: a first run (or one after `index delete`), or
		// a manifest written before Sluice recorded them, whose chunks
		// are taken as cut with these. They are recorded before anything
		// is written, as ChangeSplitting records other ones: a first run
		// that stops part-way must leave the documents it committed to
		// be split again by a next run with other settings, not taken
		// for unchanged.
		if err := st.SetSplitting(ctx, want); err != nil {
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
	if err := r.verify(ctx); err != nil {
		return err
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
	// A run that died while writing a recorded document may have left
	// chunks, or metadata, that its record does not list: the document is
	// read again, as the manifest's NodeCounts has a run over named files
	// do, even if its file is as recorded.
	if ids, err = st.Unsettled(ctx); err != nil {
		return err
	}
	r.unsettled = make(map[string]bool, len(ids))
	for _, id := range ids {
		r.unsettled[id] = true
	}
	fails, err := st.Failures(ctx)
	if err != nil {
		return err
	}
	r.failed = make(map[string]bool, len(fails))
	for _, f := range fails {
		r.failed[f.ID] = true
	}
	return r.scanStore(ctx)
}

// checkStoreLost writes every document whole again when the store is
// empty although the manifest records nodes known to be in it
// (HasStoredNodes; not those a run only meant to write when a refused
// write stopped it): the index was deleted and created again, or emptied,
// behind the manifest's back, and trusting the manifest would leave it
// empty while reporting every document unchanged. The manifest's records still say which nodes each document
// had, so that documents whose files are gone are forgotten as usual. A
// store whose count lags its writes (SettlingCounter) is asked again
// first.
func (r *run) checkStoreLost(ctx context.Context) error {
	if !r.storeEmpty || r.rewrite {
		return nil
	}
	lost, err := r.opts.State.HasStoredNodes(ctx)
	if err != nil || !lost {
		return err
	}
	if s, ok := r.opts.Store.(SettlingCounter); ok {
		if err := r.awaitStore(ctx, s); err != nil {
			return err
		}
		if r.storeEmpty, err = s.Empty(ctx); err != nil || !r.storeEmpty {
			return err // the nodes had just not been counted yet
		}
	}
	// Recorded, so that a document this run does not write back (it
	// fails, it is not in a watch round, the run is killed) is read and
	// written whole by a later run, whatever that run finds the store.
	if err := r.opts.State.LostAll(ctx); err != nil {
		return err
	}
	r.rewrite, r.report.StoreLost = true, true
	r.opts.Logger.Warn("the store holds no node, but the manifest records nodes written to it (was the index deleted, emptied or created again?): every document is written again",
		"scope", r.opts.State.Scope())
	return nil
}

// checkManifestLost warns when a run over the whole folder that removes
// only the documents the manifest knows (neither Full nor Verify) finds
// nodes in the store although the manifest records none: the state file
// was lost, emptied or pointed elsewhere, `sluice index delete` was cut
// short after dropping the manifest, or another tool wrote the index. The
// documents the walk finds replace their earlier nodes as usual, but the
// nodes of documents whose files are gone would stay without a word.
// Removing them here would also remove what another folder, with a
// manifest of its own, wrote to the same index; a Full or Verify run does
// so on request.
func (r *run) checkManifestLost(ctx context.Context) error {
	if _, ok := r.opts.Store.(EmptyReporter); !ok || r.storeEmpty || !r.fullWalk || r.opts.Full || r.opts.Verify {
		return nil
	}
	known, err := r.opts.State.HasNodes(ctx)
	if err != nil || known {
		return err
	}
	r.report.UnknownNodes = true
	r.opts.Logger.Warn("the store holds nodes, but the manifest records none (was the state file lost, emptied or pointed elsewhere, an index deletion cut short, or did another tool write the index?): documents found in the folder replace their earlier nodes, but nodes of documents whose files are gone stay; run again with --verify to remove them (it removes every document in the store whose file the walk does not find)",
		"scope", r.opts.State.Scope())
	return nil
}

// scanStore lists the nodes of a NodeScanner store for a Full or Verify
// run over the whole folder (a dry run too), and records in the manifest
// those it does not list for their documents (see NodeScanner): the
// documents the manifest does not know go to storeDocs, for conclude to
// delete those whose files are gone, and a recorded document's unlisted
// nodes make it read again (unlisted). The nodes of documents the run does
// not select are left alone: it would not write those documents. A store
// whose reads lag its writes (SettlingCounter) may still list nodes deleted
// just before the run: they are asked about again after Settle (the first
// maxRecheck unlisted nodes of recorded documents, and one node of each
// document the manifest does not know).
func (r *run) scanStore(ctx context.Context) error {
	sc, ok := r.opts.Store.(NodeScanner)
	if !ok || !(r.opts.Full || r.opts.Verify) || r.storeEmpty {
		return nil
	}
	scan := storeScan{run: r, docs: make(map[string]bool)}
	if _, lags := r.opts.Store.(SettlingCounter); lags {
		scan.checker, _ = r.opts.Store.(NodeChecker)
	}
	r.storeDocs = make(map[string]storeDoc)
	err := sc.ScanNodes(ctx, func(page []sink.NodeRef) error {
		if err := scan.page(ctx, page); err != nil {
			return &stopError{err}
		}
		return nil
	})
	var stop *stopError
	switch {
	case errors.As(err, &stop):
		return stop.err
	case errors.Is(err, sink.ErrUnsupported):
		// Too many nodes to list on this store (an index whose key is not
		// sortable), or its doc_id cannot be read: the run goes on as
		// with a store that cannot list.
		r.storeDocs = nil
		r.opts.Logger.Warn("cannot list the nodes of the store, so documents whose files are gone stay in it if the manifest does not know them (delete them with `sluice delete --doc-id`), and chunks written into it behind the manifest's back are not found",
			"err", err)
		return nil
	case err != nil:
		return fmt.Errorf("pipeline: listing the nodes of the store: %w", err)
	}
	return scan.finish(ctx)
}

// storeScan is what scanStore gathers while the store lists its nodes.
type storeScan struct {
	run *run
	// checker is set for a store whose reads lag its writes: the first
	// maxRecheck unlisted nodes of recorded documents (suspects) wait to
	// be asked about again after Settle.
	checker  NodeChecker
	suspects []state.NodeRef
	docs     map[string]bool // recorded documents with unlisted nodes
	badIDs   int             // nodes whose id or document id is not UTF-8
	badID    sink.NodeRef    // the first of them
}

// page deals with one page of the store's listing.
func (s *storeScan) page(ctx context.Context, page []sink.NodeRef) error {
	r := s.run
	refs := make([]state.NodeRef, 0, len(page))
	for _, n := range page {
		if !utf8.ValidString(n.ID) || !utf8.ValidString(n.RefDocID) {
			// Written by another tool: the manifest stores text, so
			// such a node could be neither recorded nor deleted.
			if s.badIDs++; s.badIDs == 1 {
				s.badID = n
			}
			continue
		}
		if _, ok := r.stamps[n.RefDocID]; !ok && !r.pendingOnly[n.RefDocID] {
			d := r.storeDocs[n.RefDocID]
			d.nodes++
			d.sample = cmp.Or(d.sample, n.ID)
			r.storeDocs[n.RefDocID] = d
		}
		if r.selects(n.RefDocID) {
			refs = append(refs, state.NodeRef{Doc: n.RefDocID, ID: n.ID})
		}
	}
	if r.opts.State == nil { // a dry run without a manifest plans removals only
		return nil
	}
	unlisted, err := r.opts.State.Unlisted(ctx, refs)
	if err != nil {
		return err
	}
	var found, extra []state.NodeRef
	for _, n := range unlisted {
		_, recorded := r.stamps[n.Doc]
		switch {
		case !recorded:
			found = append(found, n)
		case s.checker != nil && len(s.suspects) < maxRecheck:
			s.suspects = append(s.suspects, n)
		default:
			extra = append(extra, n)
		}
	}
	if err := r.found(ctx, found); err != nil {
		return err
	}
	return r.unlisted(ctx, extra, s.docs)
}

// finish asks a lagging store again about what its listing found, and
// reports what the listing found that the manifest did not list.
func (s *storeScan) finish(ctx context.Context) error {
	r := s.run
	if s.badIDs > 0 {
		r.opts.Logger.Warn("the store holds nodes whose id or document id is not valid UTF-8 (written by another tool): they are left alone; delete them with that tool",
			"nodes", s.badIDs, "first", fmt.Sprintf("%+q", s.badID.ID), "doc", fmt.Sprintf("%+q", s.badID.RefDocID))
	}
	if s.checker != nil && (len(s.suspects) > 0 || len(r.storeDocs) > 0) {
		if err := r.awaitStore(ctx, r.opts.Store.(SettlingCounter)); err != nil {
			return err
		}
		if err := s.recheck(ctx); err != nil {
			return err
		}
	}
	if v := r.report.Verify; v != nil && v.NodesUnlisted > 0 {
		v.DocumentsUnlisted = len(s.docs)
		first := slices.Sorted(maps.Keys(s.docs))
		r.opts.Logger.Warn("the store holds chunks that the manifest does not list for their documents (written into the index behind the manifest's back, or an older state file): their documents are read again, which deletes such chunks unless the files still have them",
			"chunks", v.NodesUnlisted, "documents", v.DocumentsUnlisted, "first", first[:min(len(first), 5)])
	}
	return nil
}

// storeDoc is what a listing of the store found of a document the
// manifest does not know: its number of nodes, and one of their ids.
type storeDoc struct {
	nodes  int
	sample string
}

// recheck asks a store whose reads lag, after Settle, about the nodes its
// listing found that may have been deleted just before the run: the
// suspected unlisted nodes of recorded documents, of which those still
// held are unlisted, and one node of each document the manifest does not
// know, whose document is dropped from storeDocs (and from the manifest,
// which recorded its nodes as found) if the node is gone.
func (s *storeScan) recheck(ctx context.Context) error {
	r := s.run
	for page := range slices.Chunk(s.suspects, verifyPage) {
		held, _, err := lookUp(ctx, s.checker, page)
		if err != nil {
			return err
		}
		if err := r.unlisted(ctx, held, s.docs); err != nil {
			return err
		}
	}
	samples := make([]state.NodeRef, 0, len(r.storeDocs))
	for doc, d := range r.storeDocs {
		samples = append(samples, state.NodeRef{Doc: doc, ID: d.sample})
	}
	for page := range slices.Chunk(samples, verifyPage) {
		_, gone, err := lookUp(ctx, s.checker, page)
		if err != nil {
			return err
		}
		ids := make([]string, len(gone))
		for i, n := range gone {
			ids[i] = n.Doc
			delete(r.storeDocs, n.Doc)
		}
		if len(ids) > 0 && !r.opts.DryRun {
			if err := r.opts.State.Forget(ctx, ids...); err != nil {
				return err
			}
		}
	}
	return nil
}

// found records, in a real run, nodes the store holds that the manifest
// did not list (state.Run.Found).
func (r *run) found(ctx context.Context, nodes []state.NodeRef) error {
	if r.opts.DryRun || len(nodes) == 0 {
		return nil
	}
	return r.manifest.Found(ctx, nodes)
}

// unlisted deals with nodes the listing of the store found for recorded
// documents whose records do not list them: they are recorded (found), so
// that the run deletes them once it has read their documents again
// (reread), unless the documents still have them; a dry run plans their
// deletion, and Report.Verify counts them. docs collects their documents.
func (r *run) unlisted(ctx context.Context, nodes []state.NodeRef, docs map[string]bool) error {
	if len(nodes) == 0 {
		return nil
	}
	if err := r.found(ctx, nodes); err != nil {
		return err
	}
	for _, n := range nodes {
		if !docs[n.Doc] {
			docs[n.Doc] = true
			r.reread(n.Doc)
		}
	}
	if r.opts.DryRun {
		r.report.ChunksDeleted += len(nodes)
	}
	if v := r.report.Verify; v != nil {
		v.NodesUnlisted += len(nodes)
	}
	return nil
}

// reread makes a recorded document count as changed, so that it is read
// again: its record no longer says what the store holds.
func (r *run) reread(doc string) {
	if st, ok := r.stamps[doc]; ok {
		st.Size = state.LostSize
		r.stamps[doc] = st
	}
	if r.missing != nil {
		r.missing.docs[doc] = true
	}
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
		if recorded && !r.unsettled[f.ID] && r.fresh(f, d.metaHash, stamp.Size, stamp.MetaHash) && sameTimes(stamp, f) {
			return true, nil
		}
	}
	prev, recorded, err := st.Stamp(ctx, f.ID)
	if err != nil {
		return false, err
	}
	committed, pending, err := st.NodeCounts(ctx, f.ID)
	if err != nil {
		return false, err
	}
	if !recorded && pending == 0 {
		return false, nil
	}
	if recorded {
		d.prev = &prev
		if pending == 0 && r.fresh(f, d.metaHash, prev.Size, prev.MetaHash) {
			if unchanged, err := r.sameContent(ctx, d); err != nil || unchanged {
				return unchanged, err
			}
		}
	} else {
		committed = 0
	}
	return false, r.loadNodes(ctx, d, committed+pending)
}

// sameContent reports whether a recorded document whose size and metadata
// match its record is unchanged: its times match the record's, or else its
// content hash does. A file touched, or replaced by one of the same size
// and time (another change stamp), may not have been edited. A file that
// cannot be read counts as changed: reading it again fails the document.
// Its error is that of ctx.
func (r *run) sameContent(ctx context.Context, d *document) (bool, error) {
	if sameTimes(*d.prev, d.file) {
		return true, nil
	}
	hash, n, err := hashFile(ctx, d.file)
	r.addRead(n)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err == nil && hash == d.prev.Hash {
		d.hash = hash
		return true, nil
	}
	return false, nil
}

// loadNodes loads into d.nodes the node ids the store may hold for a
// changed document that the manifest knows: those of its record (d.prev
// set), less those a dry run with Verify found missing, which it plans as
// written again (a real run recorded them lost), and the pending ids of a
// run that did not commit it. They stream from the manifest into the
// compact set, whose room n (a count of them) is made at once: no list of
// them as strings is held, nor grown.
func (r *run) loadNodes(ctx context.Context, d *document, n int) error {
	st := r.opts.State
	nodes := newNodeSet(n)
	if d.prev != nil {
		err := st.EachNodeID(ctx, d.file.ID, func(id string) {
			if !r.missing.has(id) {
				nodes.add(id, nodeRecorded)
			}
		})
		if err != nil {
			return err
		}
	}
	err := st.EachPending(ctx, d.file.ID, func(id string, acked bool) {
		if acked {
			nodes.add(id, nodeAcked)
		} else {
			nodes.add(id, nodeIntended)
		}
	})
	if err != nil {
		return err
	}
	nodes.freeze()
	d.nodes = nodes
	return nil
}

// sameTimes reports whether a file's modification time and change stamp
// (reader.File.Change) are those of its record, so that, with fresh, it
// counts as unchanged without reading it. A record without a stamp (from
// before schema 5) matches only a file without one: the first run after
// the upgrade hashes each file once and records its stamp.
func sameTimes(st state.Stamp, f reader.File) bool {
	return st.ModTime.Equal(f.ModTime) && st.Change == f.Change
}

// racyWindow covers the coarsest granularity of file times in use (2 s on
// FAT; 1 s on HFS+, ext3 and some NFS servers; a clock tick of a few
// milliseconds for Linux file systems before multigrain timestamps).
const racyWindow = 2 * time.Second

// racyModTime is the modification time recorded for a "racy" file, one
// modified less than racyWindow before the run started: a second write
// within the granularity of its times, after the run read it, could leave
// its size and times (and change stamp) as they were, and the fast path
// would take the file for unchanged for good (git's "racy" files). No file
// has this time, so the next run compares the file's content hash instead,
// and then records its times if they have settled.
var racyModTime = time.Unix(0, -1)

// recordedTimes returns the modification time and change stamp to record
// for f: its own, or racyModTime for a racy file.
func (r *run) recordedTimes(f reader.File) (time.Time, string) {
	if f.ModTime.After(r.racyFrom) {
		return racyModTime, f.Change
	}
	return f.ModTime, f.Change
}

// fresh reports whether a file's size and metadata match its record, so
// that its modification time or content hash can prove it unchanged; never
// in a Full run or one whose splitter settings changed, nor for a document
// Verify found nodes of missing.
func (r *run) fresh(f reader.File, metaHash string, size int64, recordedMeta string) bool {
	return !r.rewrite && !r.resplit && f.Size == size && metaHash == recordedMeta && !r.missing.damaged(f.ID)
}

// hashBlock is how much of a file hashFile reads between looks at its
// context.
const hashBlock = 256 << 10

// hashFile returns the hex SHA-256 of the file f and the bytes it read. It
// stops with ctx.Err() when ctx is done, so that a large file does not hold
// up the end of a run or of a watch round.
func hashFile(ctx context.Context, f reader.File) (string, int64, error) {
	c, err := reader.Open(f)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	buf := make([]byte, hashBlock)
	for {
		if err := ctx.Err(); err != nil {
			return "", c.BytesRead(), err
		}
		_, err := c.Read(buf)
		if err == io.EOF {
			return c.Sum(), c.BytesRead(), nil
		}
		if err != nil {
			return "", c.BytesRead(), err
		}
	}
}

// mustClear reports whether a document about to be read may have nodes in
// the store that the manifest does not list, unless the store was empty
// when the run started: in a Full run any document (the manifest is not
// trusted); otherwise, with a NodeLister store, one without a record (a
// dead run may have recorded only part of a listing: listing again is
// harmless), and with another store, one the manifest knows nothing of.
func (r *run) mustClear(d *document) bool {
	if r.opts.State == nil || r.opts.DryRun || r.storeEmpty {
		return false
	}
	if r.lister != nil && d.prev == nil {
		return true
	}
	return r.opts.Full || !d.inManifest()
}

// stopError carries an error of the store or the manifest out of a
// document's splitting: it stops the run instead of failing the document.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// clearEarlier deals with the nodes a document may have in the store beyond
// what the manifest lists, if mustClear said so, before its first chunk is
// emitted: a document that cannot even be opened keeps them (deadLetter
// only has them recorded). A NodeLister
// store's ids for the document are recorded in the manifest (Run.Found),
// and commit deletes those the run did not write again once the new ones
// are acknowledged. Another store's nodes of the document are deleted now;
// a document the manifest records loses its record first, so that a run
// that dies after the delete leaves a document the next run takes for new,
// never a record of deleted nodes.
func (r *run) clearEarlier(ctx context.Context, d *document) error {
	if !d.clear {
		return nil
	}
	d.clear = false
	if r.storeDocs != nil {
		// Recorded already, from the listing of every node of the store
		// (scanStore; clearEarlier runs in real runs only).
		d.found = true
		return nil
	}
	if r.lister != nil {
		err := r.lister.NodeIDs(ctx, d.file.ID, func(ids []string) error {
			nodes := make([]state.NodeRef, len(ids))
			for i, id := range ids {
				nodes[i] = state.NodeRef{Doc: d.file.ID, ID: id}
			}
			if err := r.manifest.Found(ctx, nodes); err != nil {
				return &stopError{err}
			}
			return nil
		})
		var stop *stopError
		if err != nil && !errors.As(err, &stop) {
			err = &stopError{fmt.Errorf("pipeline: listing the earlier nodes of %s: %w", d.file.ID, err)}
		}
		d.found = err == nil
		return err
	}
	if d.inManifest() {
		if err := r.opts.State.Reset(ctx, d.file.ID); err != nil {
			return &stopError{err}
		}
		d.cleared = true
	}
	if err := r.opts.Store.Delete(ctx, d.file.ID); err != nil {
		return &stopError{fmt.Errorf("pipeline: deleting the earlier nodes of %s: %w", d.file.ID, err)}
	}
	return nil
}

// unchanged counts a skipped document, refreshing its record's
// modification time and change stamp when only those changed. A document
// found unchanged is in the store as recorded: it leaves the dead-letter
// table.
func (r *run) unchanged(ctx context.Context, d *document) error {
	switch {
	case r.opts.DryRun:
	case d.prev != nil && !sameTimes(*d.prev, d.file):
		mtime, change := r.recordedTimes(d.file)
		if err := r.opts.State.Touch(ctx, d.file.ID, mtime, change); err != nil {
			return err
		}
	case r.failed[d.file.ID] || (!r.fullWalk && r.opts.State != nil):
		// A whole-folder run knows the dead letters; a run over named
		// files does not, and its few files cost one statement each.
		if err := r.opts.State.ClearFailure(ctx, d.file.ID); err != nil {
			return err
		}
	}
	r.opts.Stats.BytesDone.Add(d.file.Size)
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
		// Every chunk that matched a recorded id accounts for one of them.
		return d.unmatched(), nil
	}
	n := 0
	switch {
	case d.cleared:
		// Deleted by clearEarlier: the recorded chunks that did not come
		// back.
		n = d.unmatched()
	case d.inManifest() || d.found:
		// Only a document the manifest knew, or whose nodes in the store
		// it has just recorded, can have stale nodes.
		var err error
		if n, err = r.deleteStale(ctx, d.file.ID); err != nil {
			return 0, err
		}
	}
	stamp := state.Stamp{Hash: o.hash, Size: d.file.Size, MetaHash: d.metaHash}
	stamp.ModTime, stamp.Change = r.recordedTimes(d.file)
	model := r.model
	if !r.journal {
		model = "" // nothing to release
	}
	return n, r.manifest.Commit(ctx, d.file.ID, stamp, model)
}

// stalePage is how many stale node ids of a document commit deletes at a
// time: one DeleteNodes call, one transaction of the local store. Stale ids
// come sorted by id, which scatters them over the store's rows, so a page
// costs about one written database page per node; larger pages share more
// of them. Re-splitting a document of 121,376 chunks with another chunkSize
// (118,767 stale) took 56–61 s with pages of 1,000 and 46–50 s with pages
// of 10,000, whose ids take about 1 MB.
const stalePage = 10000

// deleteStale deletes from the store, stalePage at a time, the stale nodes
// of document id (state.Run.StalePage) and returns how many there were. A
// huge document whose chunks all go stale (its metadata changed, or it is
// split with other settings) thus costs no list of them. Each page leaves
// the document's record before it is deleted (state.Run.Withdraw), but
// stays stale, so that the pages follow one another. A run whose deletes
// stop part-way (the store fails, the process dies) leaves the document
// uncommitted and the next run deletes them again; should the file be
// restored meanwhile to the version they belong to, that run writes them
// again instead of taking them for stored.
func (r *run) deleteStale(ctx context.Context, id string) (int, error) {
	n := 0
	for after := ""; ; {
		page, err := r.manifest.StalePage(ctx, id, after, stalePage)
		if err != nil {
			return 0, err
		}
		if len(page) > 0 {
			if err := r.manifest.Withdraw(ctx, id, page); err != nil {
				return 0, err
			}
			if err := r.opts.Store.DeleteNodes(ctx, page); err != nil {
				return 0, fmt.Errorf("pipeline: deleting %d stale chunks of %s: %w", len(page), id, err)
			}
		}
		n += len(page)
		if len(page) < stalePage {
			return n, nil
		}
		after = page[len(page)-1]
	}
}

// deadLetter records a failed document for `sluice failed`, after
// rollback. It returns the number of chunks rollback deleted.
func (r *run) deadLetter(ctx context.Context, d *document, cause error) (int, error) {
	if r.opts.State == nil || r.opts.DryRun || d.file.ID == "" {
		return 0, nil
	}
	if d.clear && (r.storeDocs != nil || r.lister != nil) {
		// It failed before its first chunk (it could not be opened or
		// read): the manifest still learns its nodes in the store, which
		// it keeps, so that they go with it once its file is gone.
		if err := r.clearEarlier(ctx, d); err != nil {
			return 0, err // stops the run, as it does for a document that has chunks
		}
	}
	n, err := r.rollback(ctx, d)
	if err != nil {
		return n, err
	}
	return n, r.opts.State.Fail(ctx, d.file.ID, cause.Error(), time.Now())
}

// rollbackPage is how many node ids of a failed document rollback deletes
// at a time.
const rollbackPage = 1000

// rollback returns the store to a failed document's record: the nodes this
// run or a dead one wrote for it that the record does not list are deleted
// (a document with no record keeps none), then its pending ids. Chunks
// written before the document failed, such as those of a large file split
// as a stream before an invalid byte, thus never stay in the index. Should
// the run die meanwhile, the pending ids left make the next run finish the
// job: Retract first marks the ids as maybe stored. It returns the number
// of chunks deleted that the store had acknowledged.
func (r *run) rollback(ctx context.Context, d *document) (int, error) {
	if r.manifest == nil {
		return 0, nil
	}
	// d.rewrote: committed nodes may carry this run's metadata (reused
	// chunks of a document whose metadata changed) or vectors (Full).
	stored, err := r.manifest.Retract(ctx, d.file.ID, d.rewrote)
	if err != nil {
		return 0, err
	}
	after := ""
	for {
		ids, err := r.manifest.Written(ctx, d.file.ID, after, rollbackPage)
		if err != nil || len(ids) == 0 {
			if err == nil {
				err = r.manifest.Abandon(ctx, d.file.ID)
			}
			return stored, err
		}
		if err := r.opts.Store.DeleteNodes(ctx, ids); err != nil {
			return 0, fmt.Errorf("pipeline: rolling back %s, which failed: deleting %d of its chunks: %w", d.file.ID, len(ids), err)
		}
		after = ids[len(ids)-1]
	}
}

// conclude removes the documents whose source is gone, after a complete walk.
func (r *run) conclude(ctx context.Context) error {
	st := r.opts.State
	if (st == nil && !r.opts.DryRun) || !r.fullWalk {
		return nil
	}
	// Documents first recorded by this run were all seen: only those known
	// before it can be missing.
	ids := slices.Sorted(maps.Keys(r.stamps))
	ids = append(ids, slices.Sorted(maps.Keys(r.pendingOnly))...)
	ids = append(ids, slices.Sorted(maps.Keys(r.storeDocs))...)
	var gone, unknown []string
	for _, id := range ids {
		if !r.seen[id] && r.selects(id) && !r.protected(id) {
			gone = append(gone, id)
			if _, ok := r.storeDocs[id]; ok {
				unknown = append(unknown, id)
			}
		}
	}
	if len(unknown) > 0 {
		// Left by a lost state file, or written by another writer of the
		// same index: either way the folder does not hold them.
		r.opts.Logger.Warn("removing documents that the store holds and the manifest does not know, whose files are not in the folder (left by a lost state file, or written into this index from another folder)",
			"documents", len(unknown), "first", unknown[0])
	}
	for batch := range slices.Chunk(gone, RemoveBatch) {
		n, err := r.removeDocuments(ctx, batch)
		if err != nil {
			return err
		}
		r.report.FilesDeleted += len(batch)
		r.report.ChunksDeleted += n
	}
	if r.opts.DryRun {
		return nil
	}
	cfg := r.opts.Reader.WithDefaults()
	for _, id := range slices.Sorted(maps.Keys(r.failed)) {
		if r.seen[id] || r.protected(id) || !settled(cfg, id) {
			continue
		}
		if err := st.ClearFailure(ctx, id); err != nil {
			return err
		}
		r.opts.Logger.Debug("dead letter cleared", "doc", id)
	}
	if err := st.SetEmbedder(ctx, r.opts.EmbedderInfo); err != nil {
		return err
	}
	return st.SetSplitting(ctx, r.splitting())
}

// splitting returns the settings the run splits documents with.
func (r *run) splitting() state.Splitting {
	c := r.opts.Splitter.Config()
	return state.Splitting{ChunkSize: c.ChunkSize, ChunkOverlap: c.ChunkOverlap}
}

// settled reports whether a dead-lettered document that a complete walk did
// not find needs no retry any more: the settings cfg (defaults applied)
// select it, so its file is gone; or its file is gone anyway; or the
// exclude settings leave it out; or it names a folder that can be read
// again. A file that only the include settings leave out stays listed: the
// run did not look at it (a run with a narrower --include is partial).
func settled(cfg reader.Config, id string) bool {
	if cfg.Match(id) || cfg.Excludes(id) {
		return true
	}
	p := filepath.Join(cfg.Dir, filepath.FromSlash(id))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	case fi.IsDir():
		return readableDir(p)
	}
	return false
}

// readableDir reports whether the folder at p can be listed.
func readableDir(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == nil || errors.Is(err, io.EOF)
}

// removeDocuments deletes every node of documents whose source is gone (in
// a dry run, only counts them) and returns the number of chunks the store
// held for them: those the manifest knew them by, which include those the
// listing of the store recorded (Run.Found); in a dry run, which records
// nothing, those the listing counted for documents the manifest does not
// know. The caller counts the documents in the report.
func (r *run) removeDocuments(ctx context.Context, ids []string) (n int, err error) {
	if r.opts.DryRun {
		n, err = r.plannedRemoval(ctx, ids)
	} else {
		n, err = RemoveDocuments(ctx, r.opts.Store, r.opts.State, ids)
	}
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		r.opts.Logger.Debug("document deleted", "doc", id)
	}
	return n, nil
}

// plannedRemoval counts the chunks a removal of the documents ids would
// delete, in a dry run: those the manifest knows them by, and those the
// listing of the store counted for documents the manifest does not know.
func (r *run) plannedRemoval(ctx context.Context, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		n += r.storeDocs[id].nodes
		if st := r.opts.State; st != nil {
			stored, err := st.StoredCount(ctx, id)
			if err != nil {
				return 0, err
			}
			n += stored
		}
	}
	return n, nil
}

// gone reports whether a document that failed with err is to be deleted
// rather than failed: its file vanished after the source listed it and is
// still gone, or a folder stands in its place (an rm -rf or a branch switch
// running during the walk), while
// the source folder (Options.Reader.Dir) is still there. A folder that
// vanished whole (an unmounted disk) keeps its documents, as does a run
// without a manifest to delete them by, and one with Options.KeepVanished.
func (r *run) gone(d *document, err error) bool {
	if r.opts.KeepVanished || (r.opts.State == nil && !r.opts.DryRun) || d.file.ID == "" || !errors.Is(err, reader.ErrVanished) {
		return false
	}
	dir := r.opts.Reader.Dir
	if dir == "" && r.fullWalk {
		dir = r.opts.Reader.WithDefaults().Dir
	}
	if dir == "" || !readableDir(dir) {
		return false // a source of its own without a folder, or the folder itself vanished
	}
	return reader.Gone(dir, d.file.ID) || folderAt(dir, d.file.ID)
}

// folderAt reports whether a folder (not a link to one) stands at the
// document id under dir: a file removed and replaced by a folder since the
// walk listed it, whose files the next walk lists as documents of their
// own.
func folderAt(dir, id string) bool {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(id)))
	return err == nil && fi.IsDir()
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

// TextKey identifies a chunk text across documents, as the vector journal
// and a VectorSource know it.
func TextKey(text string) string { return textKey(text) }

// textKey identifies a chunk text in the vector journal, across documents.
func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}
