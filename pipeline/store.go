package pipeline

import (
	"context"
	"time"

	"github.com/sluice-dev/sluice/internal/wait"
	"github.com/sluice-dev/sluice/sink"
)

// The interfaces below are optional capabilities of a Writer. Run looks for
// them with a type assertion on Options.Store; a store without one still
// works, as described on each.

// EmptyReporter is implemented by stores that can tell cheaply whether
// they hold any node (sink/local.Store and sink/cloudsearch.Store do). An
// incremental run asks once, at its start: a document the manifest has no
// record of may still have nodes in the store (left there before the state
// file was lost, emptied or pointed elsewhere), so such a document's
// earlier nodes are replaced as NodeLister describes — unless the store
// was empty when the run started, which spares a first bulk load one
// lookup per document. Stores that do not implement it get the lookup for
// every new document: correct, only slower.
type EmptyReporter interface {
	// Empty reports whether the store holds no node at all.
	Empty(ctx context.Context) (bool, error)
}

// SettlingCounter is implemented by EmptyReporter stores whose count of
// nodes, and whose lookups, can lag behind their writes
// (sink/cloudsearch.Store: the service counts and finds the documents it
// has indexed, which it does about a second after acknowledging them). A
// run that finds such a store empty although its manifest records nodes in
// it waits Settle and asks again before it takes the store for lost and
// writes every document again, and a run with Options.Verify asks again
// about the nodes it found missing: a run started right after another must
// not take the nodes just written for gone.
type SettlingCounter interface {
	EmptyReporter
	// Settle is the longest a written node takes to be counted and found.
	Settle() time.Duration
}

// awaitStore waits until the store, a SettlingCounter, has counted and can
// find what was written before the run started (its Settle), or until ctx
// is done. Only the first call of a run waits: the checks that ask a
// lagging store again (checkStoreLost, verify, scanStore) are all about
// writes made before the run.
func (r *run) awaitStore(ctx context.Context, s SettlingCounter) error {
	if r.storeSettled {
		return nil
	}
	if err := wait.Sleep(ctx, s.Settle()); err != nil {
		return err
	}
	r.storeSettled = true
	return nil
}

// NodeScanner is implemented by NodeLister stores that can also list
// every node they hold with its reference document id (sink/local.Store
// from its doc_id index; sink/cloudsearch.Store with a request per 1000
// nodes). A Full or Verify run over a whole folder with a manifest scans
// them once, at its start, and records in the manifest (state.Run.Found)
// the nodes it does not list for their documents:
//
//   - after the walk, it deletes the nodes of every scanned document whose
//     file the walk did not find and that the include/exclude settings
//     select, as it does for the documents the manifest records;
//   - a document it writes needs no lookup of its nodes (NodeLister): a
//     Full run, which writes every document, makes one request per 1000
//     nodes instead of one per document;
//   - with Verify, a recorded document whose nodes in the store include
//     some its record does not list (written behind the manifest's back,
//     or left by an older copy of the state file) is read again, and those
//     nodes are deleted once it is committed, as stale chunks are.
//
// Without it, or when scanning fails with sink.ErrUnsupported (too many
// nodes for the store to list: the run warns and goes on), a run cannot
// know of documents that are in the store but neither in the folder nor in
// the manifest (after the state file was lost): their nodes stay until they
// are deleted by id (`sluice delete --doc-id`) or the index is rebuilt
// (`sluice index delete`, then a run).
type NodeScanner interface {
	NodeLister
	// ScanNodes calls fn with every stored node, a page at a time, until
	// fn returns an error; fn must not keep the slice.
	ScanNodes(ctx context.Context, fn func(nodes []sink.NodeRef) error) error
}

// NodeLister is implemented by stores that can list the node ids of one
// reference document (sink/local.Store and sink/cloudsearch.Store do). Some
// documents may have nodes in the store that the manifest does not list:
// every document of a Full run, and a document the manifest has no record
// of in a store that was not empty. Before writing such a document's new
// nodes, a run records the ids the store holds for it in the manifest
// (state.Run.Found), and deletes those it did not write again only once the
// new ones are acknowledged, as it deletes stale chunks. Readers thus never
// see the document missing, a run killed meanwhile leaves them to the next
// run, and a document that fails keeps the nodes its record lists. A store
// without it gets the older way: such a document's nodes are deleted
// (Writer.Delete by its id) before its new ones are written.
type NodeLister interface {
	// NodeIDs calls fn with the ids of the nodes whose RefDocID is
	// refDocID, a page at a time, until fn returns an error.
	NodeIDs(ctx context.Context, refDocID string, fn func(ids []string) error) error
}

// DimensionChecker is implemented by stores whose vectors must all have
// the length of those they already hold (sink/local.Store). Run calls it
// with the embedder's dimensions before anything is embedded, so that a run
// the store would refuse stops at once, with the store's remedy, instead of
// after paying for embeddings.
type DimensionChecker interface {
	// CheckDimensions returns an error, wrapping a *sink.DimensionError,
	// when the store cannot take vectors of dims dimensions.
	CheckDimensions(ctx context.Context, dims int) error
}

// CheckDimensions returns the error of store's CheckDimensions if store is
// a DimensionChecker, else nil. Run calls it itself; a command can call it
// right after opening the store and the embedder, to refuse a dimension
// change before starting anything.
func CheckDimensions(ctx context.Context, store any, dims int) error {
	if c, ok := store.(DimensionChecker); ok {
		return c.CheckDimensions(ctx, dims)
	}
	return nil
}

// VectorReader is implemented by stores that read back the vectors of the
// nodes they hold (sink/local.Store, sink/cloudsearch.Store). A run with
// an embedder that is not local writes a chunk whose text a committed node
// of the index already holds (in a document copied, renamed, or quoting
// another) with that node's vector instead of embedding it again: the
// manifest names the node (state.Store.NodesOfTexts), the store gives its
// text, which must still be the chunk's, and its vector. A store that
// cannot return the vectors of an index (a Cloud AI Search index whose
// vector field is not retrievable) returns no node, and a store without
// NodeVectors lends nothing: every such chunk is then embedded.
//
// A VectorReader that also has a method LendsVectors() bool tells a dry
// run, which reads no node, whether it would lend any (see
// sink/cloudsearch.Store.LendsVectors).
type VectorReader interface {
	// NodeVectors returns those of the nodes ids the store holds, with
	// their text and vector.
	NodeVectors(ctx context.Context, ids []string) ([]sink.Node, error)
}
