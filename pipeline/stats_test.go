package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// stableMetadata walks cfg like the default source but gives each file
// metadata that does not change when the file is edited or touched (no
// size, no dates), so that an edited document's unchanged chunks are kept
// as they are instead of having their metadata rewritten.
func stableMetadata(cfg reader.Config) FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		return reader.Walk(ctx, cfg, func(f reader.File, err error) error {
			if err == nil {
				f.Metadata = map[string]any{reader.KeyFileName: f.Metadata[reader.KeyFileName]}
			}
			return fn(f, err)
		})
	}
}

// TestStatsReachTotals runs twice over a folder, with a change in between,
// and checks that the second run's progress counters end at their totals:
// every pre-scanned byte is done, read or not, and every chunk is written
// or skipped.
func TestStatsReachTotals(t *testing.T) {
	const edited = "d01/f01.md"
	// The closures below get the subtest's setup: they fail it with in.t.
	tests := []struct {
		name   string
		stable bool           // stableMetadata as the source of both runs
		change func(*incr)    // between the runs
		second func(*Options) // options of the second run
		check  func(*testing.T, Snapshot, *Report, *incr)
	}{
		{
			name: "every file unchanged",
			check: func(t *testing.T, s Snapshot, rep *Report, _ *incr) {
				if rep.FilesUnchanged != 6 || s.BytesRead != 0 || s.Chunks != 0 {
					t.Errorf("unchanged %d, read %d bytes, %d chunks; want 6, 0, 0", rep.FilesUnchanged, s.BytesRead, s.Chunks)
				}
			},
		},
		{
			name:   "touched file hashed",
			stable: true,
			change: func(in *incr) {
				later := time.Now().Add(time.Hour)
				if err := os.Chtimes(filepath.Join(in.root, edited), later, later); err != nil {
					in.t.Fatal(err)
				}
			},
			check: func(t *testing.T, s Snapshot, rep *Report, in *incr) {
				fi, err := os.Stat(filepath.Join(in.root, edited))
				if err != nil {
					t.Fatal(err)
				}
				if rep.FilesUnchanged != 6 || s.BytesRead != fi.Size() {
					t.Errorf("unchanged %d, read %d bytes; want 6, %d (the touched file's hash)", rep.FilesUnchanged, s.BytesRead, fi.Size())
				}
			},
		},
		{
			name:   "edited file reuses chunks",
			stable: true,
			change: func(in *incr) { in.editSentence(edited, "Sentence 12 ", "A new sentence. ") },
			check: func(t *testing.T, s Snapshot, rep *Report, _ *incr) {
				if rep.FilesUpdated != 1 || rep.ChunksReused == 0 || rep.ChunksWritten == 0 {
					t.Fatalf("updated %d, reused %d, written %d; want 1 and both > 0", rep.FilesUpdated, rep.ChunksReused, rep.ChunksWritten)
				}
				if s.ChunksSkipped != int64(rep.ChunksReused) || s.ChunksDone != int64(rep.ChunksWritten) {
					t.Errorf("ChunksSkipped %d, ChunksDone %d; want the %d reused and the %d written", s.ChunksSkipped, s.ChunksDone, rep.ChunksReused, rep.ChunksWritten)
				}
			},
		},
		{
			name: "embedder rejects a chunk",
			change: func(in *incr) {
				in.editSentence(edited, "Sentence 12 ", "POISON here. ")
				in.emb.poison = "POISON"
			},
			check: checkOneFailed,
		},
		{
			name: "store rejects a chunk",
			change: func(in *incr) {
				in.editSentence(edited, "Sentence 12 ", "REJECT here. ")
				in.store.reject = "REJECT"
			},
			check: checkOneFailed,
		},
		{
			name: "a file the walk cannot take",
			change: func(in *incr) {
				if err := os.Symlink("missing.md", filepath.Join(in.root, "d01/broken.md")); err != nil {
					in.t.Skipf("no symlinks here: %v", err)
				}
			},
			check: func(t *testing.T, s Snapshot, rep *Report, _ *incr) {
				if rep.FilesFailed != 1 || s.FilesFailed != 1 || rep.FilesUnchanged != 6 {
					t.Errorf("failed %d (stats %d), unchanged %d; want the broken symlink and 6", rep.FilesFailed, s.FilesFailed, rep.FilesUnchanged)
				}
			},
		},
		{
			name:   "dry run",
			stable: true,
			change: func(in *incr) { in.editSentence(edited, "Sentence 12 ", "A new sentence. ") },
			second: func(o *Options) { o.DryRun = true },
			check: func(t *testing.T, s Snapshot, rep *Report, _ *incr) {
				if s.ChunksDone != 0 || s.ChunksSkipped == 0 || rep.ChunksPlanned == 0 {
					t.Errorf("ChunksDone %d, ChunksSkipped %d, planned %d; want 0, > 0, > 0", s.ChunksDone, s.ChunksSkipped, rep.ChunksPlanned)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(6))
			stable := func(o *Options) {
				if tt.stable {
					o.Source = stableMetadata(o.Reader)
				}
			}
			in.run(stable)
			if tt.change != nil {
				tt.change(in)
			}
			stats := new(Stats)
			rep := in.run(func(o *Options) {
				stable(o)
				o.Prescan, o.Stats = true, stats
				if tt.second != nil {
					tt.second(o)
				}
			})
			s := stats.Snapshot()
			if !s.ScanDone || s.FilesTotal != int64(rep.FilesSeen) || s.FilesDone != s.FilesTotal {
				t.Errorf("scan done %v, files %d/%d, %d seen; want true and all of them", s.ScanDone, s.FilesDone, s.FilesTotal, rep.FilesSeen)
			}
			if s.BytesTotal == 0 || s.BytesDone != s.BytesTotal {
				t.Errorf("bytes done %d of %d, want all of them", s.BytesDone, s.BytesTotal)
			}
			if s.ChunksDone+s.ChunksSkipped != s.Chunks {
				t.Errorf("chunks written %d + skipped %d of %d, want all of them", s.ChunksDone, s.ChunksSkipped, s.Chunks)
			}
			tt.check(t, s, rep, in)
		})
	}
}

// checkOneFailed checks a second run in which the edited document failed
// and its chunks were dropped.
func checkOneFailed(t *testing.T, s Snapshot, rep *Report, _ *incr) {
	t.Helper()
	if rep.FilesFailed != 1 || s.FilesFailed != 1 || s.ChunksSkipped == 0 {
		t.Errorf("failed %d (stats %d), ChunksSkipped %d; want 1, 1, > 0", rep.FilesFailed, s.FilesFailed, s.ChunksSkipped)
	}
}

// editSentence rewrites the file name with its first old replaced by new.
func (in *incr) editSentence(name, old, new string) {
	in.t.Helper()
	body, err := os.ReadFile(filepath.Join(in.root, name))
	if err != nil {
		in.t.Fatal(err)
	}
	if !strings.Contains(string(body), old) {
		in.t.Fatalf("%s has no %q", name, old)
	}
	in.write(name, strings.Replace(string(body), old, new, 1))
}

// TestSnapshotNeverShowsMoreDoneThanTotal takes snapshots while another
// goroutine counts as the pipeline does: a chunk is produced before it is
// written or skipped, a document is taken before it is done and done before
// it is counted failed, and the pre-scan's totals are stored before
// ScanDone. Whenever the snapshot is taken, it must not show more done than
// produced, nor a finished pre-scan without its totals. The counters are
// loaded one by one, so only the order of the loads guarantees this; with
// the totals loaded first, the check fails within a few thousand
// snapshots on any machine with two cores.
func TestSnapshotNeverShowsMoreDoneThanTotal(t *testing.T) {
	var s Stats
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Chunks.Add(1)
			if i%2 == 0 {
				s.ChunksDone.Add(1)
			} else {
				s.ChunksSkipped.Add(1)
			}
			s.FilesSeen.Add(1)
			s.FilesDone.Add(1)
			s.FilesFailed.Add(1)
			if i == 1000 {
				s.FilesTotal.Store(7)
				s.BytesTotal.Store(70)
				s.ScanDone.Store(true)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	// For as long as the counting goroutine takes to count 100,000
	// chunks, however late it starts.
	for i := 0; ; i++ {
		v := s.Snapshot()
		if v.ChunksDone+v.ChunksSkipped > v.Chunks || v.FilesDone > v.FilesSeen || v.FilesFailed > v.FilesDone ||
			(v.ScanDone && (v.FilesTotal != 7 || v.BytesTotal != 70)) {
			t.Fatalf("snapshot %d: %+v: more done than produced, or totals missing after the scan", i, v)
		}
		if v.Chunks >= 100000 {
			break
		}
	}
}

// TestBytesDoneWhenDocumentsComplete checks that a document's bytes count
// as done when the document completes, as FilesDone counts it, not when
// the splitter is through with it: files split while the embedder lags
// behind are not done, or the ETA would take them for done.
func TestBytesDoneWhenDocumentsComplete(t *testing.T) {
	files := map[string]string{}
	var total int64
	for i := range 4 {
		body := paragraphText(fmt.Sprint("topic", i), 3)
		files[fmt.Sprintf("f%d.md", i)] = body
		total += int64(len(body))
	}
	emb := &fakeEmbedder{dims: 8, block: make(chan struct{})}
	stats := new(Stats)
	opts := baseOptions(t, writeTree(t, files), emb, newMemStore())
	opts.Stats, opts.SplitConcurrency = stats, 1
	cfg := opts.Reader
	var held Snapshot
	walked := 0
	opts.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
		return reader.Walk(ctx, cfg, func(f reader.File, err error) error {
			if err := fn(f, err); err != nil {
				return err
			}
			if walked++; walked == 4 {
				// The queue of walked files holds two: the one splitter
				// has taken the second file, so it is through with the
				// first, and the held embedder lets no document complete.
				held = stats.Snapshot()
				close(emb.block)
			}
			return nil
		})
	}
	rep, err := Run(context.Background(), opts)
	if err != nil || rep.FilesIngested != 4 {
		t.Fatalf("Run = %+v, %v; want 4 files ingested", rep, err)
	}
	if held.Chunks == 0 || held.FilesDone != 0 || held.BytesDone != 0 {
		t.Errorf("with the embedder held: %d chunks split, %d files and %d bytes done; want some, 0 and 0", held.Chunks, held.FilesDone, held.BytesDone)
	}
	if s := stats.Snapshot(); s.FilesDone != 4 || s.BytesDone != total {
		t.Errorf("at the end: %d files and %d bytes done, want 4 and %d", s.FilesDone, s.BytesDone, total)
	}
}

// gatedStore is a memStore whose first Add reports the live counters, then
// waits for release: a run caught in the middle of one document.
type gatedStore struct {
	*memStore
	stats   *Stats
	once    sync.Once
	seen    chan Snapshot
	release chan struct{}
}

func (s *gatedStore) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	s.once.Do(func() {
		s.seen <- s.stats.Snapshot()
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	})
	return s.memStore.Add(ctx, nodes)
}

// largeDocument returns the options of a run over one document that is
// split as a stream, writing to store and counting in stats, and the
// document's size.
func largeDocument(t *testing.T, store Writer, stats *Stats) (Options, int64) {
	t.Helper()
	body := paragraphText("stream", 400)
	opts := baseOptions(t, writeTree(t, map[string]string{"big.md": body}), &fakeEmbedder{dims: 4}, store)
	opts.Stats = stats
	opts.StreamThreshold = 1024
	return opts, int64(len(body))
}

// TestStatsLargeDocumentInProgress: a document split as a stream shows the
// bytes read so far, in BytesRead and BytesPartial, before it completes;
// when it completes they move to BytesDone, and the run ends with
// BytesPartial at 0 and every byte read counted once.
func TestStatsLargeDocumentInProgress(t *testing.T) {
	stats := new(Stats)
	store := &gatedStore{memStore: newMemStore(), stats: stats, seen: make(chan Snapshot, 1), release: make(chan struct{})}
	opts, size := largeDocument(t, store, stats)

	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(context.Background(), opts)
		done <- result{rep, err}
	}()
	var mid Snapshot
	select {
	case mid = <-store.seen:
	case res := <-done:
		t.Fatalf("the run ended before its first write: %+v, %v", res.rep, res.err)
	}
	close(store.release)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if mid.BytesDone != 0 || mid.BytesPartial <= 0 || mid.BytesPartial > size || mid.BytesRead != mid.BytesPartial {
		t.Errorf("mid-document: done %d, partial %d, read %d; want 0 done and 0 < partial = read <= %d",
			mid.BytesDone, mid.BytesPartial, mid.BytesRead, size)
	}
	end := stats.Snapshot()
	if res.rep.FilesIngested != 1 || end.BytesDone != size || end.BytesPartial != 0 || end.BytesRead != size || res.rep.BytesRead != size {
		t.Errorf("at the end: ingested %d, done %d, partial %d, read %d (report %d); want 1, %d, 0, %d, %d",
			res.rep.FilesIngested, end.BytesDone, end.BytesPartial, end.BytesRead, res.rep.BytesRead, size, size, size)
	}
}

// cancellingStore cancels the run on its first Add and fails it: a run
// stopped in the middle of a document streamed from disk.
type cancellingStore struct {
	*memStore
	cancel context.CancelFunc
}

func (s *cancellingStore) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	s.cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStatsStoppedRunLeavesNoPartialBytes: a run cancelled while a large
// document is being split ends with BytesPartial at 0, as Stats promises,
// so that Stats shared by later runs (a watch loop's rounds) do not carry
// the stopped document's bytes as progress.
func TestStatsStoppedRunLeavesNoPartialBytes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, _ := largeDocument(t, &cancellingStore{memStore: newMemStore(), cancel: cancel}, new(Stats))
	rep, err := Run(ctx, opts)
	if err == nil {
		t.Fatal("the cancelled run reported no error")
	}
	s := opts.Stats.Snapshot()
	if s.BytesRead == 0 || s.BytesDone != 0 {
		t.Fatalf("read %d, done %d; want the document read in part and not done", s.BytesRead, s.BytesDone)
	}
	if s.BytesPartial != 0 {
		t.Errorf("BytesPartial = %d after the run; want 0", s.BytesPartial)
	}
	if rep == nil || rep.BytesRead != s.BytesRead {
		t.Errorf("report %+v; want BytesRead %d", rep, s.BytesRead)
	}
}

// TestStatsSharedReportBytesRead: runs that share one Stats, as a watch
// loop's rounds do, each report the bytes that run read, not the total of
// the Stats so far.
func TestStatsSharedReportBytesRead(t *testing.T) {
	body := paragraphText("shared", 40)
	root := writeTree(t, map[string]string{"a.md": body})
	stats := new(Stats)
	for i := range 2 {
		opts := baseOptions(t, root, &fakeEmbedder{dims: 4}, newMemStore())
		opts.Stats = stats
		rep, err := Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.BytesRead != int64(len(body)) {
			t.Errorf("run %d: report BytesRead = %d; want %d (Stats hold %d)", i+1, rep.BytesRead, len(body), stats.BytesRead.Load())
		}
	}
	if got := stats.BytesRead.Load(); got != 2*int64(len(body)) {
		t.Errorf("Stats.BytesRead = %d; want %d", got, 2*len(body))
	}
}

// statsEmbedder is a fakeEmbedder that keeps embedder.Stats, as the HTTP
// clients do: each Embed call counts as one request, with one 429 and one
// retry before it.
type statsEmbedder struct{ *fakeEmbedder }

func (e statsEmbedder) Stats() embedder.Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := int64(e.requests)
	return embedder.Stats{Requests: 2 * n, Throttled: n, Retries: n, Succeeded: n}
}

// TestReportCountsEmbeddingRequests: the report counts the requests, 429s
// and retries of its own run (a client may serve several, as a watch
// loop's rounds), and has no such counts for an embedder without Stats or
// in a dry run.
func TestReportCountsEmbeddingRequests(t *testing.T) {
	in := newIncr(t, corpus(3))
	emb := statsEmbedder{in.emb}
	with := func(o *Options) { o.Embedder = emb }
	first := in.run(with)
	calls := int64(in.emb.requests)
	if want := (&EmbeddingReport{Requests: 2 * calls, Throttled: calls, Retries: calls}); first.Embedding == nil || *first.Embedding != *want || calls == 0 {
		t.Errorf("first run: embedding %+v, want %+v", first.Embedding, want)
	}
	if err := os.WriteFile(filepath.Join(in.root, "new.md"), []byte("A new document to embed."), 0o644); err != nil {
		t.Fatal(err)
	}
	second := in.run(with)
	if n := int64(in.emb.requests) - calls; second.Embedding == nil || *second.Embedding != (EmbeddingReport{Requests: 2 * n, Throttled: n, Retries: n}) || n == 0 {
		t.Errorf("second run: embedding %+v, want the %d calls of this run alone", second.Embedding, n)
	}
	if dry := in.run(func(o *Options) { with(o); o.DryRun = true }); dry.Embedding != nil {
		t.Errorf("dry run: embedding %+v, want none", dry.Embedding)
	}
	if plain := in.run(nil); plain.Embedding != nil {
		t.Errorf("embedder without Stats: embedding %+v, want none", plain.Embedding)
	}
}

// TestPartialBytes: a document's progress while it is read is its bytes
// read, up to its listed size; a file that held more than listed when it
// was opened counts the fraction read of its listed size, so its progress
// moves all along its read.
func TestPartialBytes(t *testing.T) {
	tests := []struct {
		name                 string
		read, listed, opened int64
		want                 int64
	}{
		{"as listed", 300, 1000, 1000, 300},
		{"as listed, read whole", 1000, 1000, 1000, 1000},
		{"shrank before it was opened", 300, 1000, 400, 300},
		{"grew fourfold, a quarter read", 1000, 1000, 4000, 250},
		{"grew fourfold, read whole", 4000, 1000, 4000, 1000},
		{"grew again while read", 5000, 1000, 4000, 1000},
		{"listed empty", 300, 0, 4000, 0},
		{"says 0 bytes when opened (/proc)", 300, 0, 0, 0},
		{"a terabyte grown to two", 1 << 40, 1 << 40, 2 << 40, 1 << 39},
	}
	for _, tt := range tests {
		if got := partialBytes(tt.read, tt.listed, tt.opened); got != tt.want {
			t.Errorf("%s: partialBytes(%d, %d, %d) = %d, want %d", tt.name, tt.read, tt.listed, tt.opened, got, tt.want)
		}
	}
}
