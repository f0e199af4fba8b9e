package watch

import (
	"time"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// RoundKind says what a round did.
type RoundKind uint8

// Round kinds.
const (
	// Initial is the reconciliation when the Loop starts.
	Initial RoundKind = iota + 1
	// Rescan is a full reconciliation after lost events, an overflowing
	// pending set, a failed round or the periodic safety rescan.
	Rescan
	// Update processes the documents named by events.
	Update
)

// String returns "initial", "rescan" or "update".
func (k RoundKind) String() string {
	switch k {
	case Initial:
		return "initial"
	case Rescan:
		return "rescan"
	case Update:
		return "update"
	}
	return "RoundKind(?)"
}

// Round describes one completed round of work.
type Round struct {
	// Kind says whether the round reconciled the whole folder or processed
	// the documents named by events.
	Kind RoundKind
	// Changed lists the ids sent to the pipeline (Update rounds only),
	// folders that could not be watched included: they are recorded as
	// failed documents, as a full reconciliation records unreadable folders.
	Changed []string
	// Removed lists the ids deleted from the store and the manifest
	// (Update rounds only; a full reconciliation counts its deletions in
	// Report.FilesDeleted).
	Removed []string
	// Cleared lists the ids whose only record, a dead letter, was cleared
	// because the folder can be watched again or the file that failed is
	// gone (Update rounds only). They held nothing in the store, so they
	// are not counted as removed, as a full reconciliation does not count
	// them either.
	Cleared []string
	// Report is the pipeline's report; nil if the pipeline did not run.
	Report *pipeline.Report
	// Err is the error that stopped the round, nil if it completed.
	// Per-document failures are in Report.Failures, not here.
	Err error
	// Start and End bound the round in time.
	Start, End time.Time
}

// plan is the work of one round, decided by the Loop's goroutine.
type plan struct {
	kind    RoundKind
	changed []string
	removed []string
	failed  []reader.Event // folders that could not be watched
	swept   []string       // folders created since the watcher started: see reader.Sweep
}
