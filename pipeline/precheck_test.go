package pipeline

import (
	"strings"
	"testing"
)

// TestStreamedFileFailsBeforeWriting: a file split as a stream whose bad
// byte (not UTF-8, a NUL) lies near its end fails before any of its chunks
// is embedded or written, in the first run as in each run that retries it
// while it is unchanged; before, every such run embedded and wrote the
// chunks before the bad byte and then deleted them again (a 30 MB file
// with a bad byte at its end: 17,000 chunks written and deleted per run).
// A dry run plans none of its chunks, as the run embeds none.
func TestStreamedFileFailsBeforeWriting(t *testing.T) {
	body := paragraphText("streamed", 30000) // about 2.2 MB: past the splitter's first 1 MiB window
	tests := []struct {
		name, tail, want string
	}{
		{"invalid UTF-8 at the end", "caf\xe9", "not valid UTF-8: bad byte at offset"},
		{"NUL byte at the end", "\x00", "binary file: NUL byte at offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"good.md": "Good text stays.", "big.md": body + tt.tail})
			stream := func(o *Options) { o.StreamThreshold = 1024 }
			dry := in.run(func(o *Options) { stream(o); o.DryRun = true })
			if dry.FilesFailed != 1 || dry.ChunksPlanned != 1 {
				t.Errorf("dry run: %d failed, %d chunks planned; want big.md failed and good.md's one chunk planned", dry.FilesFailed, dry.ChunksPlanned)
			}
			for i := range 2 {
				rep := in.run(stream)
				if rep.FilesFailed != 1 || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Error, "big.md: "+tt.want) {
					t.Fatalf("run %d: %d failed %v; want big.md failed saying %q", i+1, rep.FilesFailed, rep.Failures, tt.want)
				}
				if wantWritten := 1 - i; rep.ChunksWritten != wantWritten || rep.ChunksDeleted != 0 {
					t.Errorf("run %d: %d chunks written, %d deleted; want %d written (good.md's, first run) and none deleted", i+1, rep.ChunksWritten, rep.ChunksDeleted, wantWritten)
				}
				if n := len(in.texts("big.md")); n != 0 {
					t.Errorf("run %d: big.md has %d nodes in the store, want none", i+1, n)
				}
			}
		})
	}
}
