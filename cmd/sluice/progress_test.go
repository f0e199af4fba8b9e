package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline"
)

// TestStatusLine checks the progress line, above all of incremental runs,
// which skip unchanged files and reuse chunks: both count as done, and the
// ETA comes from the bytes left, or from the chunks left when reading runs
// ahead.
func TestStatusLine(t *testing.T) {
	tests := []struct {
		name    string
		s       pipeline.Snapshot
		elapsed time.Duration
		want    string
	}{
		{
			name:    "before the pre-scan ends",
			s:       pipeline.Snapshot{FilesDone: 2, BytesRead: 2e6, BytesDone: 2e6, Chunks: 40, ChunksDone: 30},
			elapsed: 2 * time.Second,
			want:    "files 2 · chunks 30/40 · 2.0 MB · 1.0 MB/s",
		},
		{
			name: "first run, halfway",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 10, BytesTotal: 10e6, FilesDone: 5, BytesRead: 5e6, BytesDone: 5e6,
				Chunks: 100, ChunksDone: 90},
			elapsed: 10 * time.Second,
			want:    "files 5/10 · chunks 90/100 · 5.0 MB/10.0 MB · 0.5 MB/s · ETA 10s",
		},
		{
			name:    "every file unchanged ends at 100%",
			s:       pipeline.Snapshot{ScanDone: true, FilesTotal: 3, BytesTotal: 3e6, FilesDone: 3, BytesDone: 3e6},
			elapsed: 4 * time.Second,
			want:    "files 3/3 · chunks 0/0 · 3.0 MB/3.0 MB · 0.0 MB/s",
		},
		{
			name: "reused chunks count as done",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 4, BytesTotal: 4e6, FilesDone: 4, BytesRead: 1e6, BytesDone: 4e6,
				Chunks: 500, ChunksDone: 3, ChunksSkipped: 497},
			elapsed: 2 * time.Second,
			want:    "files 4/4 · chunks 500/500 (497 skipped) · 4.0 MB/4.0 MB · 0.5 MB/s",
		},
		{
			name: "ETA from the bytes left, skipped ones done",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 10, BytesTotal: 10e6, FilesDone: 4, BytesRead: 1e6, BytesDone: 4e6,
				Chunks: 20, ChunksDone: 5, ChunksSkipped: 15, FilesFailed: 1},
			elapsed: 8 * time.Second,
			// 4 MB done in 8 s: the 6 MB left take 12 s.
			want: "files 4/10 · chunks 20/20 (15 skipped) · 4.0 MB/10.0 MB · 0.1 MB/s · 1 failed · ETA 12s",
		},
		{
			// 1e12 bytes left at 1 byte in 10 s: 1e13 s, past what a
			// time.Duration holds (292 years); converted, it would wrap
			// around to a negative ETA.
			name:    "no ETA too long to hold",
			s:       pipeline.Snapshot{ScanDone: true, FilesTotal: 10, BytesTotal: 1e12, FilesDone: 1, BytesRead: 1, BytesDone: 1},
			elapsed: 10 * time.Second,
			want:    "files 1/10 · chunks 0/0 · 0.0 MB/1000000.0 MB · 0.0 MB/s",
		},
		{
			// One 1 GB file, a quarter read: its partial bytes give the
			// progress, the throughput and the ETA before it completes.
			name: "one large file in progress",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 1, BytesTotal: 1e9, BytesRead: 250e6, BytesPartial: 250e6,
				Chunks: 60000, ChunksDone: 59000},
			elapsed: 25 * time.Second,
			want:    "files 0/1 · chunks 59000/60000 · 250.0 MB/1000.0 MB · 10.0 MB/s · ETA 1m15s",
		},
		{
			// A file that grew after the pre-scan is read past its size.
			name: "never past the total",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 2, BytesTotal: 2e6, FilesDone: 1, BytesRead: 3e6, BytesDone: 1e6,
				BytesPartial: 1.5e6, Chunks: 30, ChunksDone: 20},
			elapsed: time.Second,
			want:    "files 1/2 · chunks 20/30 · 2.0 MB/2.0 MB · 3.0 MB/s · ETA 1s",
		},
		{
			// Everything is read while a slow provider embeds: the chunks
			// left give the ETA, 1,700 at 72 a second.
			name: "reading ahead of the embedder",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 800, BytesTotal: 52.8e6, FilesDone: 300, BytesRead: 52.8e6, BytesDone: 20e6,
				BytesPartial: 32.8e6, Chunks: 3000, ChunksDone: 1296},
			elapsed: 18 * time.Second,
			want:    "files 300/800 · chunks 1296/3000 · 52.8 MB/52.8 MB · 2.9 MB/s · ETA 24s",
		},
		{
			// Everything is read and split, but the provider has not
			// answered yet: the bytes read give no ETA of the embedding.
			name: "no ETA before a chunk is embedded",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 105, BytesTotal: 1.03e6, BytesRead: 1e6, BytesPartial: 1e6,
				Chunks: 330},
			elapsed: 15 * time.Second,
			want:    "files 0/105 · chunks 0/330 · 1.0 MB/1.0 MB · 0.1 MB/s",
		},
		{
			name:    "no ETA before anything is done",
			s:       pipeline.Snapshot{ScanDone: true, FilesTotal: 10, BytesTotal: 10e6},
			elapsed: time.Second,
			want:    "files 0/10 · chunks 0/0 · 0.0 MB/10.0 MB · 0.0 MB/s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := viewProgress(tt.s, tt.elapsed).line(); got != tt.want {
				t.Errorf("status line =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

// TestSummaryFailures: the summary counts failed files in the right
// number and lists each with its path.
func TestSummaryFailures(t *testing.T) {
	for _, tt := range []struct {
		failures []pipeline.Failure
		want     string
	}{
		{[]pipeline.Failure{{Path: "a.md", Error: "a.md: empty"}}, "1 file failed"},
		{[]pipeline.Failure{{Path: "a.md", Error: "empty"}, {Path: "b.md", Error: "b.md: not UTF-8"}}, "2 files failed"},
	} {
		var b strings.Builder
		printSummary(&b, &pipeline.Report{FilesFailed: len(tt.failures), Failures: tt.failures})
		out := b.String()
		if !strings.Contains(out, tt.want+" (see `sluice failed list`") || !strings.Contains(out, "  a.md: empty\n") {
			t.Errorf("summary:\n%s\nwant %q and each failure with its path", out, tt.want)
		}
	}
}

// TestSummaryFailuresPrintable: a failed file's name with a line break or
// an escape sequence is printed quoted, on one line, with no raw control
// character; a dry run's failures are ones that would fail, and the
// summary does not send the user to `sluice failed list`, which a dry run
// does not fill.
func TestSummaryFailuresPrintable(t *testing.T) {
	var b strings.Builder
	printSummary(&b, &pipeline.Report{FilesFailed: 2, Failures: []pipeline.Failure{
		{Path: "new\nline.md", Error: "not valid UTF-8"},
		{Path: "esc\x1b[31mred.md", Error: "reader: esc\x1b[31mred.md: binary file"},
	}})
	out := b.String()
	for _, want := range []string{`  "new\nline.md": not valid UTF-8` + "\n", `  "reader: esc\x1b[31mred.md: binary file"` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary:\n%s\nwant the line %q", out, want)
		}
	}
	if strings.ContainsRune(out, 0x1b) || strings.Count(out, "\n") != 4 {
		t.Errorf("summary %q holds a raw escape or a broken line", out)
	}
	b.Reset()
	printSummary(&b, &pipeline.Report{DryRun: true, FilesFailed: 1, Failures: []pipeline.Failure{{Path: "a.md", Error: "a.md: empty"}}})
	if out := b.String(); !strings.Contains(out, "1 file would fail (a dry run records nothing") || strings.Contains(out, "replay with") {
		t.Errorf("dry-run summary:\n%s", out)
	}
}

// TestSummaryEmbedding: the summary counts a remote embedder's requests,
// 429s and retries, with what to change when the provider throttled, and
// says nothing of a local embedder.
func TestSummaryEmbedding(t *testing.T) {
	for _, tt := range []struct {
		e    *pipeline.EmbeddingReport
		want string // "" for no line
	}{
		{nil, ""},
		{&pipeline.EmbeddingReport{Requests: 1}, "Embedding API: 1 request, 0 throttled (HTTP 429), 0 retries.\n"},
		{&pipeline.EmbeddingReport{Requests: 119, Throttled: 9, Retries: 10}, "Embedding API: 119 requests, 9 throttled (HTTP 429), 10 retries. " +
			"The provider rate-limited this run: set embedder.requestsPerMinute and tokensPerMinute to at most its quota.\n"},
	} {
		var b strings.Builder
		printSummary(&b, &pipeline.Report{Embedding: tt.e})
		_, line, _ := strings.Cut(b.String(), "\n")
		if line != tt.want {
			t.Errorf("summary after its first line:\n%q\nwant\n%q", line, tt.want)
		}
	}
}

// TestProgressLogAttrs checks the fields of the progress log line a log
// collector reads: the counts, the totals only once the pre-scan has them,
// and the ETA in seconds only once it is known.
func TestProgressLogAttrs(t *testing.T) {
	tests := []struct {
		name    string
		s       pipeline.Snapshot
		elapsed time.Duration
		want    string
	}{
		{
			name: "one large file in progress",
			s: pipeline.Snapshot{ScanDone: true, FilesTotal: 1, BytesTotal: 1e9, BytesRead: 250e6, BytesPartial: 250e6,
				Chunks: 60000, ChunksDone: 58000, ChunksSkipped: 1000, FilesFailed: 0},
			elapsed: 25 * time.Second,
			want:    `"files_done":0,"files_failed":0,"chunks_done":59000,"chunks":60000,"bytes_done":250000000,"files_total":1,"bytes_total":1000000000,"eta_seconds":75}`,
		},
		{
			name:    "before the pre-scan ends",
			s:       pipeline.Snapshot{FilesDone: 3, FilesFailed: 1, BytesDone: 5e6, Chunks: 40, ChunksDone: 30},
			elapsed: time.Second,
			want:    `"files_done":3,"files_failed":1,"chunks_done":30,"chunks":40,"bytes_done":5000000}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			v := viewProgress(tt.s, tt.elapsed)
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("progress", v.attrs()...)
			line := strings.TrimSpace(buf.String())
			if !strings.Contains(line, `"status":"`+v.line()+`",`) || !strings.HasSuffix(line, tt.want) {
				t.Errorf("log line\n  %s\nwant the status line and a suffix\n  %s", line, tt.want)
			}
		})
	}
}

// TestSummaryDryRunCost: a dry run's estimated cost is printed to four
// decimals, and one too small for them is not printed as 0.0000, which
// reads as free.
func TestSummaryDryRunCost(t *testing.T) {
	for _, tt := range []struct {
		cost float64
		want string
	}{
		{1.5, "(about 1.5000 at the configured price)"},
		{0.00012, "(about 0.0001 at the configured price)"},
		{0.00001228, "(less than 0.0001 at the configured price)"},
	} {
		var b strings.Builder
		printSummary(&b, &pipeline.Report{DryRun: true, ChunksPlanned: 1, TokensPlanned: 614, EstimatedCost: tt.cost})
		if out := b.String(); !strings.Contains(out, tt.want) {
			t.Errorf("summary with cost %v:\n%s\nwant %q", tt.cost, out, tt.want)
		}
	}
}
