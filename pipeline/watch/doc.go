// Package watch keeps a vector index in step with a live folder. A Loop
// first reconciles the folder with the index (the incremental logic of a
// nightly run), then feeds the documents named by debounced file-system
// events (reader.Watcher) through the same pipeline, state store and failure
// handling as a batch run.
//
// One goroutine owns a Loop: it coalesces events into a set of pending
// document ids and processes them in rounds of at most Config.MaxBatch ids.
// Changed documents go through pipeline.Run; removed documents lose their
// nodes and their manifest record, even if a file stands at their path
// again by then (the watcher reports its return as a change of its own).
// With an embedder that is not local, the vectors of the removed documents
// are kept in memory (at most 16 MiB of them, the oldest dropped first) and
// lent to later rounds (pipeline.Options.Vectors): a document that comes
// back, or a folder renamed, is written with them instead of being
// embedded again.
// A folder created since the watcher started is swept once quiet
// (reader.Sweep): the documents below it whose file is gone are removed,
// for a whole-folder round may have read files there that were gone before
// the watcher could look into it. Lost events (a kernel queue overflow, a
// folder that could not be watched), a pending set larger than
// Config.MaxPending and the optional periodic safety rescan all lead to a
// full reconciliation instead, so nothing is silently lost and the pending
// set stays bounded however large a burst is (the watcher and the manifest
// still hold one entry per file). A full reconciliation that fails paths
// which then turn out to be gone, removed while it walked, is followed by
// one more, which deletes their documents. Folders that the system's watch limit
// keeps from being watched are counted (Loop.Unwatched, warned about once)
// and tried again, each time with a full reconciliation, every minute (or
// Config.RescanInterval, if shorter) until they are watched; one that is
// removed or moved away meanwhile is swept, as the watcher never listed its
// documents.
//
// The watcher follows the folder as a batch run walks it: folders are
// watched whatever their name, documents reached through symbolic links are
// updated when their targets change, a symbolic link that cannot be
// followed (its target missing, say) is a failed document that keeps its
// earlier chunks, as in a batch run, a path that turns from file into
// folder (or back) loses its old document, a change of permissions retries
// a document, and a folder that cannot be watched is recorded as a failed
// document (`sluice failed list`) until its permissions allow it.
//
// If the folder itself is removed or renamed away (even if a folder appears
// again at its path), or its path comes to lead to another folder (a
// symbolic link switched, a folder above it renamed and another put in its
// place), the watcher cannot follow it: Run returns an error wrapping
// reader.ErrRootGone that names the folder, and the index is left as it
// is, so an unmounted volume does not empty it. Start again once the
// folder is back; the initial reconciliation catches up. A round that
// cannot list the folder (reader.ErrConfig) also stops the Loop instead of
// retrying forever.
//
// Cancelling the context given to Run stops the Loop gracefully: it stops
// taking events, lets the round in flight finish for up to
// Config.GracePeriod, then abandons it (at once with NoGracePeriod). Abort
// abandons it at once. Either way
// the manifest stays consistent: the pipeline records a document only after
// all its chunks are in the store, so the next start converges.
//
// Metrics serves Prometheus metrics of a Loop and its pipeline, with
// /healthz and /readyz probes. /healthz fails (503, with the reason) as soon
// as the Loop stops following the folder (Loop.Healthy): its watcher
// stopped, a round failed for good, or Run returned.
package watch
