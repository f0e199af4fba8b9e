package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// progress shows a running pipeline's counters: a redrawn status line on a
// terminal, or a log line every few seconds otherwise.
type progress struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// startProgress starts the display; Stop ends it and waits for it.
func startProgress(ctx context.Context, w io.Writer, stats *pipeline.Stats, log *slog.Logger) *progress {
	ctx, cancel := context.WithCancel(ctx)
	p := &progress{cancel: cancel}
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	interval := 5 * time.Second
	if tty {
		interval = 200 * time.Millisecond
	}
	start := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case <-t.C:
				v := viewProgress(stats.Snapshot(), time.Since(start))
				if tty {
					fmt.Fprint(w, "\r\033[K"+v.line())
				} else {
					log.Info("progress", v.attrs()...)
				}
			}
		}
	}()
	return p
}

// Stop ends the display; calling it twice is harmless.
func (p *progress) Stop() {
	p.once.Do(func() {
		p.cancel()
		p.wg.Wait()
	})
}

// progressView is what the progress display shows of a snapshot. Progress
// counts work done whichever way it was done: bytes of documents ingested,
// found unchanged or failed (BytesDone) plus the bytes read so far of the
// documents being split (BytesPartial, so that one large file shows its
// progress too), chunks written or needing no write (ChunksDone +
// ChunksSkipped, the latter also shown apart), so an incremental run ends
// at its totals. The throughput is of bytes actually read; estimate gives
// the ETA.
type progressView struct {
	s          pipeline.Snapshot
	bytesDone  int64
	chunksDone int64
	rate       float64 // MB/s
	eta        time.Duration
	etaKnown   bool
}

func viewProgress(s pipeline.Snapshot, elapsed time.Duration) progressView {
	v := progressView{s: s, bytesDone: s.BytesDone + s.BytesPartial, chunksDone: s.ChunksDone + s.ChunksSkipped}
	if s.ScanDone {
		// A file that grew since the pre-scan can take the count past it.
		v.bytesDone = min(v.bytesDone, s.BytesTotal)
	}
	secs := elapsed.Seconds()
	if secs > 0 {
		v.rate = float64(s.BytesRead) / 1e6 / secs
	}
	v.eta, v.etaKnown = estimate(s, v.bytesDone, secs)
	return v
}

// line renders files, chunks, bytes, throughput and ETA.
func (v progressView) line() string {
	s := v.s
	files := fmt.Sprintf("%d", s.FilesDone)
	bytes := mb(v.bytesDone)
	if s.ScanDone {
		files += fmt.Sprintf("/%d", s.FilesTotal)
		bytes += "/" + mb(s.BytesTotal)
	}
	chunks := fmt.Sprintf("%d/%d", v.chunksDone, s.Chunks)
	if s.ChunksSkipped > 0 {
		chunks += fmt.Sprintf(" (%d skipped)", s.ChunksSkipped)
	}
	line := fmt.Sprintf("files %s · chunks %s · %s · %.1f MB/s", files, chunks, bytes, v.rate)
	if s.FilesFailed > 0 {
		line += fmt.Sprintf(" · %d failed", s.FilesFailed)
	}
	if v.etaKnown {
		line += " · ETA " + v.eta.String()
	}
	return line
}

// attrs returns the progress as log attributes, for a log collector to
// read without parsing the status line: the totals once the pre-scan has
// found them, the ETA in seconds once it is known.
func (v progressView) attrs() []any {
	s := v.s
	a := []any{"status", v.line(), "files_done", s.FilesDone, "files_failed", s.FilesFailed,
		"chunks_done", v.chunksDone, "chunks", s.Chunks, "bytes_done", v.bytesDone}
	if s.ScanDone {
		a = append(a, "files_total", s.FilesTotal, "bytes_total", s.BytesTotal)
	}
	if v.etaKnown {
		a = append(a, "eta_seconds", int64(v.eta/time.Second))
	}
	return a
}

// estimate returns the time left, once the pre-scan has given the totals:
// the bytes not yet read at the rate bytes were done, or, when reading runs
// ahead of embedding and writing (a slow provider: up to
// pipeline.memoryBudgetMB of documents are read ahead), the chunks split
// but not yet settled at the rate chunks were settled, whichever is
// longer. There is none while chunks wait and none has been settled yet,
// and none when, early on, a few bytes done of many make an ETA longer than
// a Duration holds.
func estimate(s pipeline.Snapshot, done int64, secs float64) (time.Duration, bool) {
	if !s.ScanDone || secs <= 0 {
		return 0, false
	}
	left, known := 0.0, false // seconds
	if done > 0 && s.BytesTotal > done {
		left, known = float64(s.BytesTotal-done)/float64(done)*secs, true
	}
	if settled := s.ChunksDone + s.ChunksSkipped; s.Chunks > settled {
		if settled == 0 {
			// Chunks wait and none has been embedded and written yet (a
			// provider slow to answer, or not answering): their rate is
			// not known, and the bytes read say nothing of it.
			return 0, false
		}
		left, known = max(left, float64(s.Chunks-settled)/float64(settled)*secs), true
	}
	if eta := left * float64(time.Second); known && eta < math.MaxInt64 {
		return time.Duration(eta).Round(time.Second), true
	}
	return 0, false
}

// aboutCost prints an estimated cost to four decimals, or says that it is
// below 0.0001 rather than print a cost that is not 0 as "0.0000".
func aboutCost(c float64) string {
	if c < 0.00005 {
		return "less than 0.0001"
	}
	return fmt.Sprintf("about %.4f", c)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// printSummary prints the end-of-run summary.
func printSummary(w io.Writer, r *pipeline.Report) {
	files := fmt.Sprintf("%d new, %d changed, %d unchanged, %d deleted, %d failed",
		r.FilesAdded, r.FilesUpdated, r.FilesUnchanged, r.FilesDeleted, r.FilesFailed)
	if r.DryRun {
		fmt.Fprintf(w, "Dry run over %s (%s): would embed %s, %d tokens", plural(r.FilesSeen, "file", "files"), files, plural(r.ChunksPlanned, "chunk", "chunks"), r.TokensPlanned)
		if r.EstimatedCost > 0 {
			fmt.Fprintf(w, " (%s at the configured price)", aboutCost(r.EstimatedCost))
		}
		if r.ChunksCopied > 0 {
			fmt.Fprintf(w, ", write %s with the vector of a node of the same text", plural(r.ChunksCopied, "chunk", "chunks"))
		}
		fmt.Fprintf(w, ", and delete %s; nothing was embedded or written.\n", plural(r.ChunksDeleted, "chunk", "chunks"))
	} else {
		written := plural(r.ChunksWritten, "chunk", "chunks") + " written"
		if r.ChunksCopied > 0 {
			written += fmt.Sprintf(" (%d with the vector of a node of the same text)", r.ChunksCopied)
		}
		fmt.Fprintf(w, "Ingested %d of %s (%s): %s, %d reused, %d deleted; %d tokens embedded; %s read in %.1fs (%.1f MB/s).\n",
			r.FilesIngested, plural(r.FilesSeen, "file", "files"), files, written, r.ChunksReused, r.ChunksDeleted, r.TokensEmbedded, mb(r.BytesRead), r.Seconds, r.MBPerSecond())
	}
	printVerify(w, r)
	printEmbedding(w, r.Embedding)
	if r.FilesFailed == 0 {
		return
	}
	if r.DryRun {
		// Nothing was recorded: `sluice failed` would not list them.
		fmt.Fprintf(w, "%s would fail (a dry run records nothing; a run lists them in `sluice failed list`):\n", plural(r.FilesFailed, "file", "files"))
	} else {
		fmt.Fprintf(w, "%s failed (see `sluice failed list`, replay with `sluice failed retry`):\n", plural(r.FilesFailed, "file", "files"))
	}
	for _, f := range r.Failures {
		msg := f.Error
		if !strings.Contains(msg, f.Path) && !strings.Contains(msg, reader.Printable(f.Path)) {
			msg = reader.Printable(f.Path) + ": " + msg
		}
		fmt.Fprintf(w, "  %s\n", reader.Printable(msg))
	}
}

// printEmbedding prints the requests a remote embedder sent, with the 429s
// and retries its retries absorbed: a run slowed by throttling says so.
func printEmbedding(w io.Writer, e *pipeline.EmbeddingReport) {
	if e == nil || e.Requests == 0 {
		return
	}
	fmt.Fprintf(w, "Embedding API: %s, %d throttled (HTTP 429), %s.", plural(int(e.Requests), "request", "requests"), e.Throttled, plural(int(e.Retries), "retry", "retries"))
	if e.Throttled > 0 {
		fmt.Fprint(w, " The provider rate-limited this run: set embedder.requestsPerMinute and tokensPerMinute to at most its quota.")
	}
	fmt.Fprintln(w)
}

// printVerify prints what --verify found, if the run verified the store.
func printVerify(w io.Writer, r *pipeline.Report) {
	v := r.Verify
	if v == nil {
		return
	}
	switch {
	case v.NodesChecked == 0:
		fmt.Fprint(w, "Verified the store: the manifest records no chunk to look up.")
	case v.NodesMissing == 0:
		fmt.Fprintf(w, "Verified the store: it holds all %s the manifest records.", plural(v.NodesChecked, "chunk", "chunks"))
	default:
		again := "were written again"
		if r.DryRun {
			again = "would be written again"
		}
		fmt.Fprintf(w, "Verified the store: %d of the %s the manifest records were missing, in %s; those the files still have %s.",
			v.NodesMissing, plural(v.NodesChecked, "chunk", "chunks"), plural(v.Documents, "file", "files"), again)
	}
	if v.NodesUnlisted > 0 {
		again := "were read again"
		if r.DryRun {
			again = "would be read again"
		}
		fmt.Fprintf(w, " It also held %s of %s that the manifest did not list: those files %s, which deletes such chunks unless a file still has them or fails.",
			plural(v.NodesUnlisted, "chunk", "chunks"), plural(v.DocumentsUnlisted, "file", "files"), again)
	}
	fmt.Fprintln(w)
}
