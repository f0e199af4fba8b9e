package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/reader"
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
					t.Fatal(err)
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
			change: func(in *incr) { in.write(edited, editSentence(t, in, "Sentence 12 ", "A new sentence. ")) },
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
				in.write(edited, editSentence(t, in, "Sentence 12 ", "POISON here. "))
				in.emb.poison = "POISON"
			},
			check: checkOneFailed,
		},
		{
			name: "store rejects a chunk",
			change: func(in *incr) {
				in.write(edited, editSentence(t, in, "Sentence 12 ", "REJECT here. "))
				in.store.reject = "REJECT"
			},
			check: checkOneFailed,
		},
		{
			name:   "dry run",
			stable: true,
			change: func(in *incr) { in.write(edited, editSentence(t, in, "Sentence 12 ", "A new sentence. ")) },
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
			if !s.ScanDone || s.FilesTotal != 6 || s.FilesDone != 6 {
				t.Errorf("scan done %v, files %d/%d; want true, 6/6", s.ScanDone, s.FilesDone, s.FilesTotal)
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

// editSentence returns the edited file's text with old replaced by new.
func editSentence(t *testing.T, in *incr, old, new string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(in.root, "d01/f01.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), old) {
		t.Fatalf("d01/f01.md has no %q", old)
	}
	return strings.Replace(string(body), old, new, 1)
}
