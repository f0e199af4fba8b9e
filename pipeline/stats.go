package pipeline

import "sync/atomic"

// Stats are live counters of a running pipeline. They are safe to read
// while the pipeline runs; the progress display, watch mode's metrics and
// benchmarks read them.
type Stats struct {
	FilesTotal  atomic.Int64 // files found by the pre-scan (0 until it ends)
	BytesTotal  atomic.Int64 // bytes of those files
	ScanDone    atomic.Bool  // the pre-scan has finished; the totals are final
	FilesSeen   atomic.Int64 // files taken by the walk
	FilesDone   atomic.Int64 // documents finished, ingested or failed
	FilesFailed atomic.Int64 // documents failed
	BytesRead   atomic.Int64 // source bytes read
	Chunks      atomic.Int64 // chunks produced by the splitter
	ChunksDone  atomic.Int64 // chunks written
	Tokens      atomic.Int64 // tokens embedded
	Batches     atomic.Int64 // embedding batches sent
}

// Snapshot is a point-in-time copy of Stats.
type Snapshot struct {
	FilesTotal, BytesTotal                         int64
	ScanDone                                       bool
	FilesSeen, FilesDone, FilesFailed              int64
	BytesRead, Chunks, ChunksDone, Tokens, Batches int64
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() Snapshot {
	return Snapshot{
		FilesTotal:  s.FilesTotal.Load(),
		BytesTotal:  s.BytesTotal.Load(),
		ScanDone:    s.ScanDone.Load(),
		FilesSeen:   s.FilesSeen.Load(),
		FilesDone:   s.FilesDone.Load(),
		FilesFailed: s.FilesFailed.Load(),
		BytesRead:   s.BytesRead.Load(),
		Chunks:      s.Chunks.Load(),
		ChunksDone:  s.ChunksDone.Load(),
		Tokens:      s.Tokens.Load(),
		Batches:     s.Batches.Load(),
	}
}
