package pipeline

import "sync/atomic"

// Stats are live counters of a running pipeline. They are safe to read
// while the pipeline runs; the progress display, watch mode's metrics and
// benchmarks read them.
//
// Two pairs of counters measure progress, and both reach their total when
// a run completes:
//
//   - BytesDone against BytesTotal: every file the pre-scan counted is done
//     once, whether it was read, found unchanged without being read (the
//     common case of an incremental run) or failed. BytesRead, which counts
//     the bytes actually read, is the throughput, not the progress: it
//     stays below BytesTotal when files are skipped, and a touched file
//     read once to hash it and again to split it counts twice.
//   - ChunksDone + ChunksSkipped against Chunks: every chunk the splitter
//     produced is either written (ChunksDone) or needs no write
//     (ChunksSkipped).
type Stats struct {
	FilesTotal  atomic.Int64 // files found by the pre-scan (0 until it ends)
	BytesTotal  atomic.Int64 // bytes of those files
	ScanDone    atomic.Bool  // the pre-scan has finished; the totals are final
	FilesSeen   atomic.Int64 // files taken by the walk
	FilesDone   atomic.Int64 // documents finished, ingested, unchanged or failed
	FilesFailed atomic.Int64 // documents failed
	// BytesRead counts the source bytes read, to split or to hash a file;
	// Report.BytesRead is its value at the end of the run.
	BytesRead atomic.Int64
	// BytesDone counts the bytes of the files the splitter is through
	// with, by their size when the walk found them: read and split, found
	// unchanged (read to hash them, or not at all) or failed. It is the
	// progress to compare with BytesTotal.
	BytesDone atomic.Int64
	Chunks    atomic.Int64 // chunks produced by the splitter, reused ones included
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
	BytesDone, ChunksSkipped                       int64
}

// Snapshot copies the counters. Each counter is read atomically, but not
// all of them at one instant.
func (s *Stats) Snapshot() Snapshot {
	return Snapshot{
		FilesTotal:    s.FilesTotal.Load(),
		BytesTotal:    s.BytesTotal.Load(),
		ScanDone:      s.ScanDone.Load(),
		FilesSeen:     s.FilesSeen.Load(),
		FilesDone:     s.FilesDone.Load(),
		FilesFailed:   s.FilesFailed.Load(),
		BytesRead:     s.BytesRead.Load(),
		BytesDone:     s.BytesDone.Load(),
		Chunks:        s.Chunks.Load(),
		ChunksDone:    s.ChunksDone.Load(),
		ChunksSkipped: s.ChunksSkipped.Load(),
		Tokens:        s.Tokens.Load(),
		Batches:       s.Batches.Load(),
	}
}
