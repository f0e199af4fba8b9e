package pipeline

import "sync/atomic"

// Stats are live counters of a running pipeline. They are safe to read
// while the pipeline runs; the progress display, watch mode's metrics and
// benchmarks read them.
//
// Counters of work done reach their totals when a run completes:
//
//   - FilesDone against FilesTotal, and BytesDone against BytesTotal: a
//     document is done, and its bytes with it, when it completes, as the
//     report counts it: ingested (every chunk in the store), found
//     unchanged, read to hash it or not at all (the common case of an
//     incremental run), or failed, a file the walk could not take
//     included. BytesRead, which counts the bytes actually read, is the
//     throughput, not the progress: it stays below BytesTotal when files
//     are skipped, and a touched file read once to hash it and again to
//     split it counts twice. A document being split also counts the
//     bytes read so far in BytesPartial, so BytesDone + BytesPartial
//     moves while a large file is ingested.
//   - ChunksDone + ChunksSkipped against Chunks: every chunk the splitter
//     produced is either written (ChunksDone) or needs no write
//     (ChunksSkipped).
//
// The totals come from the pre-scan (Options.Prescan), a walk of its own:
// a file added, removed or resized between it and the run's walk makes the
// done counters end above or below them.
type Stats struct {
	FilesTotal  atomic.Int64 // files found by the pre-scan, per-file problems included (0 until it ends)
	BytesTotal  atomic.Int64 // bytes of those files
	ScanDone    atomic.Bool  // the pre-scan has finished; the totals are final
	FilesSeen   atomic.Int64 // files taken by the walk
	FilesDone   atomic.Int64 // documents finished, ingested, unchanged or failed
	FilesFailed atomic.Int64 // documents failed
	// BytesRead counts the source bytes read, to split or to hash a file;
	// Report.BytesRead counts the bytes one run added to it (the whole
	// value unless the Stats served earlier runs, as a watch loop's do).
	BytesRead atomic.Int64
	// BytesDone counts the bytes of the documents done (FilesDone), by
	// their size when the walk found them. It is the progress to compare
	// with BytesTotal.
	BytesDone atomic.Int64
	// BytesPartial counts the bytes read so far of the documents being
	// split that are not done yet, each up to its size: BytesDone +
	// BytesPartial is the progress of a run whose documents are large,
	// which BytesDone alone shows only as each completes. It is 0 when
	// the run ends, stopped or not: a document the run did not finish
	// leaves it then.
	BytesPartial atomic.Int64
	Chunks       atomic.Int64 // chunks produced by the splitter, reused ones included
	// ChunksDone counts the chunks written to the store: new nodes added
	// with their embeddings, plus reused nodes whose metadata alone was
	// rewritten (sink.MetadataUpdater). Report.ChunksWritten counts only
	// the former, and Report.ChunksReused includes the latter.
	ChunksDone atomic.Int64
	// ChunksSkipped counts the chunks that needed no write: already in the
	// store as they are (an incremental run's unchanged chunks), dropped
	// because their document failed, or only planned by a dry run. Once
	// every document has completed, ChunksDone + ChunksSkipped == Chunks.
	ChunksSkipped atomic.Int64
	Tokens        atomic.Int64 // tokens embedded
	Batches       atomic.Int64 // embedding batches sent
}

// Snapshot is a point-in-time copy of Stats.
type Snapshot struct {
	FilesTotal, BytesTotal                         int64
	ScanDone                                       bool
	FilesSeen, FilesDone, FilesFailed              int64
	BytesRead, Chunks, ChunksDone, Tokens, Batches int64
	BytesDone, ChunksSkipped, BytesPartial         int64
}

// Snapshot copies the counters. Each counter is read atomically, but not
// all of them at one instant: a counter of work done is read before the
// counter of the work it completes (ChunksDone and ChunksSkipped before
// Chunks, FilesFailed before FilesDone before FilesSeen), BytesDone
// before BytesPartial, which a completing document leaves first, and ScanDone
// before the totals, so that a snapshot never shows more done than
// produced, nor a finished pre-scan without its totals.
func (s *Stats) Snapshot() Snapshot {
	var v Snapshot
	v.ScanDone = s.ScanDone.Load()
	v.FilesTotal = s.FilesTotal.Load()
	v.BytesTotal = s.BytesTotal.Load()
	v.BytesDone = s.BytesDone.Load()
	v.BytesPartial = s.BytesPartial.Load()
	v.FilesFailed = s.FilesFailed.Load()
	v.FilesDone = s.FilesDone.Load()
	v.FilesSeen = s.FilesSeen.Load()
	v.BytesRead = s.BytesRead.Load()
	v.ChunksDone = s.ChunksDone.Load()
	v.ChunksSkipped = s.ChunksSkipped.Load()
	v.Chunks = s.Chunks.Load()
	v.Tokens = s.Tokens.Load()
	v.Batches = s.Batches.Load()
	return v
}
