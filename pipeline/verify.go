package pipeline

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// NodeChecker is implemented by stores that can tell which of a list of
// node ids they hold (sink/local.Store and sink/cloudsearch.Store do). A
// run with Options.Verify needs it: before the walk, it asks the store
// about every node the manifest records, and a document with nodes missing
// (deleted from the index behind the manifest's back: in the portal, by
// another tool, by a restore of an older copy) is not taken as unchanged;
// its missing chunks are embedded and written again, those still stored
// are kept.
type NodeChecker interface {
	// ExistingIDs returns the subset of ids the store holds, as a set.
	ExistingIDs(ctx context.Context, ids []string) (map[string]bool, error)
}

// CanVerify reports whether store can serve Options.Verify: whether it is
// a NodeChecker.
func CanVerify(store Writer) bool {
	_, ok := store.(NodeChecker)
	return ok
}

// VerifyReport is what a run with Options.Verify found.
type VerifyReport struct {
	// NodesChecked is the number of nodes the manifest records for the
	// documents the include/exclude settings select, each looked up in
	// the store.
	NodesChecked int `json:"nodes_checked"`
	// NodesMissing is how many of them the store did not hold. The run
	// writes each again whose chunk the document still has.
	NodesMissing int `json:"nodes_missing"`
	// Documents is the number of documents with nodes missing.
	Documents int `json:"documents"`
	// NodesUnlisted is how many nodes the store holds, for documents the
	// manifest records and the run selects, that their records do not
	// list (found by listing the store: a NodeScanner). Their documents
	// are read again, and the run deletes them as stale chunks.
	NodesUnlisted int `json:"nodes_unlisted"`
	// DocumentsUnlisted is the number of documents with such nodes.
	DocumentsUnlisted int `json:"documents_unlisted"`
}

const (
	// verifyPage is how many recorded node ids verify asks the store
	// about at once.
	verifyPage = 1000
	// maxRecheck bounds the missing ids a SettlingCounter store is asked
	// about again after Settle (and the unlisted nodes of recorded
	// documents that scanStore holds back to ask about): nodes a run wrote
	// or deleted just before are at most a few batches; more than that
	// were lost, or written behind the manifest's back.
	maxRecheck = 10 * verifyPage
)

// missingNodes holds the nodes a dry run with Verify found missing, which
// it cannot record in the manifest (a real run records them with
// state.Store.Lost): their ids, by a 64-bit hash to keep the set small
// however many there are (two ids with one hash would only plan a stored
// chunk as written again), and their documents.
type missingNodes struct {
	seed maphash.Seed
	ids  map[uint64]struct{}
	docs map[string]bool
}

// has reports whether node id was found missing; false for a nil m.
func (m *missingNodes) has(id string) bool {
	if m == nil {
		return false
	}
	_, ok := m.ids[maphash.String(m.seed, id)]
	return ok
}

// damaged reports whether document id has nodes missing; false for a nil m.
func (m *missingNodes) damaged(id string) bool {
	return m != nil && m.docs[id]
}

// verify looks up in the store every node the manifest records for a
// document the run selects, for a run with Options.Verify. A real run
// records those the store does not hold as lost in the manifest
// (state.Store.Lost): their documents' records no longer list them and
// are marked to be read again, so that plan takes them for changed and
// embeds only the missing chunks, and so that a run that fails or dies
// meanwhile leaves them to the next run of any kind. A dry run keeps them
// in r.missing for plan instead. A store whose reads lag its writes
// (SettlingCounter) is asked about the missing ones again after Settle: a
// run right after another must not write again what the other has just
// written. A Full run or one that found the store lost writes every
// document anyway: it checks nothing.
func (r *run) verify(ctx context.Context) error {
	if !r.opts.Verify {
		return nil
	}
	if r.rewrite {
		r.opts.Logger.Info("verify: nothing to check, every document is written again")
		return nil
	}
	checker := r.opts.Store.(NodeChecker) // validate checked it
	settling, _ := r.opts.Store.(SettlingCounter)
	r.opts.Logger.Info("verify: looking up in the store the nodes the manifest records", "per_request", verifyPage)
	rep := &VerifyReport{}
	docs := make(map[string]bool)
	if r.opts.DryRun {
		r.missing = &missingNodes{seed: maphash.MakeSeed(), ids: make(map[uint64]struct{}), docs: docs}
	}
	lose := func(lost []state.NodeRef) error {
		for _, n := range lost {
			docs[n.Doc] = true
			if r.missing != nil {
				r.missing.ids[maphash.String(r.missing.seed, n.ID)] = struct{}{}
			}
		}
		rep.NodesMissing += len(lost)
		if r.opts.DryRun {
			return nil
		}
		return r.opts.State.Lost(ctx, lost)
	}
	var suspects []state.NodeRef
	var after state.NodeRef
	for {
		page, err := r.opts.State.Nodes(ctx, after, verifyPage)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1]
		// Documents the run does not select are not looked at: it would
		// not write their missing nodes again.
		page = slices.DeleteFunc(page, func(n state.NodeRef) bool { return !r.selects(n.Doc) })
		rep.NodesChecked += len(page)
		_, missing, err := lookUp(ctx, checker, page)
		if err != nil {
			return err
		}
		if settling != nil && len(suspects) < maxRecheck {
			k := min(len(missing), maxRecheck-len(suspects))
			suspects, missing = append(suspects, missing[:k]...), missing[k:]
		}
		// Recorded before the next page is read: Lost removes rows
		// behind the paging position only.
		if err := lose(missing); err != nil {
			return err
		}
	}
	if len(suspects) > 0 {
		if err := r.awaitStore(ctx, settling); err != nil {
			return err
		}
		for page := range slices.Chunk(suspects, verifyPage) {
			_, missing, err := lookUp(ctx, checker, page)
			if err != nil {
				return err
			}
			if err := lose(missing); err != nil {
				return err
			}
		}
	}
	rep.Documents = len(docs)
	r.report.Verify = rep
	if rep.NodesMissing == 0 {
		r.opts.Logger.Info("verified: the store holds every node the manifest records", "nodes", rep.NodesChecked)
		return nil
	}
	first := slices.Sorted(maps.Keys(docs))
	if len(first) > 5 {
		first = first[:5]
	}
	r.opts.Logger.Warn(fmt.Sprintf("%d of the %d nodes the manifest records are missing from the store (deleted from the index behind the manifest's back?): the chunks their documents still have are written again", rep.NodesMissing, rep.NodesChecked),
		"documents", rep.Documents, "first", first)
	return nil
}

// lookUp asks the store which nodes of page it holds, and returns those it
// does and those it does not.
func lookUp(ctx context.Context, c NodeChecker, page []state.NodeRef) (held, missing []state.NodeRef, err error) {
	if len(page) == 0 {
		return nil, nil, nil
	}
	ids := make([]string, len(page))
	for i, n := range page {
		ids[i] = n.ID
	}
	has, err := c.ExistingIDs(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline: asking the store which of %d nodes it holds: %w", len(ids), err)
	}
	for _, n := range page {
		if has[n.ID] {
			held = append(held, n)
		} else {
			missing = append(missing, n)
		}
	}
	return held, missing, nil
}
