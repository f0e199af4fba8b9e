package pipeline

import (
	"encoding/json"
	"time"
)

// Report summarises one run. Its JSON shape is part of the command-line
// contract (`sluice run --json`, `--report FILE`): keys may be added, never
// renamed.
type Report struct {
	// FilesSeen counts the files the walk selected, good or bad.
	FilesSeen int `json:"files_seen"`
	// FilesIngested counts documents whose chunks were all written; in a
	// dry run (DryRun true), the documents that would have been.
	FilesIngested int `json:"files_ingested"`
	// FilesAdded and FilesUpdated split FilesIngested into documents new
	// to the store and documents that changed.
	FilesAdded   int `json:"files_added"`
	FilesUpdated int `json:"files_updated"`
	// FilesUnchanged counts documents skipped because they had not changed.
	FilesUnchanged int `json:"files_unchanged"`
	// FilesDeleted counts documents removed from the store because their
	// source file is gone, among them files that vanished after the walk
	// listed them (see Options.KeepVanished).
	FilesDeleted int `json:"files_deleted"`
	// FilesFailed counts documents listed in Failures.
	FilesFailed int `json:"files_failed"`
	// Failures lists every document that failed, with the reason.
	Failures []Failure `json:"failures"`
	// ChunksWritten counts nodes written to the store.
	ChunksWritten int `json:"chunks_written"`
	// ChunksReused counts chunks already in the store that were kept
	// without embedding them again.
	ChunksReused int `json:"chunks_reused"`
	// ChunksCopied counts chunks written with the vector of a node of the
	// same text that the index held (in a document copied, renamed, or
	// quoting another), instead of embedding them again: with an embedder
	// that is not local, into a store that reads vectors back
	// (VectorReader). They are among ChunksWritten. In a dry run, the
	// chunks that the manifest says would be, which ChunksPlanned leaves
	// out.
	ChunksCopied int `json:"chunks_copied,omitempty"`
	// ChunksDeleted counts nodes removed from the store: stale chunks of
	// changed documents, and those that failed documents had written
	// beyond their record.
	ChunksDeleted int `json:"chunks_deleted"`
	// TokensEmbedded counts the tokens sent to the embedder.
	TokensEmbedded int64 `json:"tokens_embedded"`
	// BytesRead counts the source bytes read.
	BytesRead int64 `json:"bytes_read"`
	// Seconds is the wall-clock duration of the run.
	Seconds float64 `json:"seconds"`
	// DryRun is true when nothing was embedded or written.
	DryRun bool `json:"dry_run,omitempty"`
	// ChunksPlanned counts the chunks a dry run would embed.
	ChunksPlanned int `json:"chunks_planned,omitempty"`
	// TokensPlanned counts the tokens a dry run would embed.
	TokensPlanned int64 `json:"tokens_planned,omitempty"`
	// EstimatedCost is the embedding cost of TokensEmbedded (TokensPlanned
	// in a dry run) at the configured price per million tokens. With a
	// price configured, the JSON report has it even when it is 0.
	EstimatedCost float64 `json:"estimated_cost,omitempty"`
	// priced is true when a price per million tokens was configured, so
	// that EstimatedCost is an answer, 0 included.
	priced bool
	// Complete is false when the run stopped before its end: the store, the
	// embedder or the manifest failed, or it was interrupted. The files
	// seen but in no other count were not finished; the next run takes
	// them up.
	Complete bool `json:"complete"`
	// Error says why an incomplete run stopped (the error Run returned;
	// for an interrupted run, that it was interrupted and can be run
	// again); empty for a complete run.
	Error string `json:"error,omitempty"`
	// Interrupted is true when an incomplete run stopped because its
	// context was cancelled (Ctrl-C, SIGTERM).
	Interrupted bool `json:"interrupted,omitempty"`
	// StoreLost is true when the store was empty although the manifest
	// recorded nodes in it (the index was deleted, emptied or created
	// again since the last run): every document was written again.
	StoreLost bool `json:"store_lost,omitempty"`
	// UnknownNodes is true when a run over the whole folder, neither Full
	// nor Verify, found nodes in the store although the manifest recorded
	// none (the state file was lost, emptied or pointed elsewhere, an
	// index deletion was cut short, or another tool wrote the index): the
	// documents the run wrote replaced their earlier nodes, but those of
	// documents whose files are gone stay until a Full or Verify run.
	UnknownNodes bool `json:"unknown_nodes,omitempty"`
	// Verify is what a run with Options.Verify found, nil for other runs
	// and for runs that wrote every document anyway (Full, StoreLost).
	Verify *VerifyReport `json:"verify,omitempty"`
	// Embedding counts the run's requests to the embedding provider, for
	// an embedder that keeps embedder.Stats (the HTTP clients); nil for a
	// local embedder and in a dry run.
	Embedding *EmbeddingReport `json:"embedding,omitempty"`
}

// MarshalJSON encodes r as its fields' tags say, except that a dry run's
// report always has chunks_planned and tokens_planned, 0 included: they
// are its answer, which scripts read; so is estimated_cost, 0 included,
// when a price was configured.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without methods, so that Marshal does not recurse
	// The outer fields shadow the embedded ones of the same names; nil, they
	// are left out as those would be at 0.
	out := struct {
		plain
		EstimatedCost *float64 `json:"estimated_cost,omitempty"`
		ChunksPlanned *int     `json:"chunks_planned,omitempty"`
		TokensPlanned *int64   `json:"tokens_planned,omitempty"`
	}{plain: plain(r)}
	if r.priced {
		out.EstimatedCost = &r.EstimatedCost
	}
	if r.DryRun {
		out.ChunksPlanned, out.TokensPlanned = &r.ChunksPlanned, &r.TokensPlanned
	}
	return json.Marshal(out)
}

// EmbeddingReport counts a run's requests to the embedding provider, so a
// nightly job sees throttling that its retries absorbed.
type EmbeddingReport struct {
	// Requests counts the HTTP requests sent, retries included.
	Requests int64 `json:"requests"`
	// Throttled counts the requests the provider answered 429 for a rate
	// limit: the budgets (requestsPerMinute, tokensPerMinute) exceed the
	// quota it grants, or another client shares it.
	Throttled int64 `json:"http_429"`
	// Retries counts the requests that retried a failed one.
	Retries int64 `json:"retries"`
}

// Failure is one document that could not be ingested.
type Failure struct {
	// Path is the document id: the root-relative path of the file.
	Path string `json:"path"`
	// Error says what went wrong and, where possible, how to fix it.
	Error string `json:"error"`
}

// MBPerSecond returns the read throughput of the run in MB/s (10^6 bytes).
func (r *Report) MBPerSecond() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.BytesRead) / 1e6 / r.Seconds
}

func (r *Report) setDuration(d time.Duration) { r.Seconds = d.Seconds() }
