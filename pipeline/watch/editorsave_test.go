package watch

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoDebounceEditorSave saves a document of many chunks as editors do,
// with debouncing off: the file is moved away (vim's backup, JetBrains'
// safe write) and the new one, one sentence longer, takes its place. The
// save is an update that embeds the chunk that changed, not a removal
// followed by an addition that embeds every chunk anew.
func TestNoDebounceEditorSave(t *testing.T) {
	e := newEnv(t)
	e.cfg.Debounce = NoDebounce
	var b strings.Builder
	for i := range 400 {
		b.WriteString("word" + strconv.Itoa(i))
		if i%10 == 9 {
			b.WriteString(".\n")
		} else {
			b.WriteString(" ")
		}
	}
	text := b.String()
	e.writeFile("doc.md", text)
	e.start(nil)
	e.waitReady()
	all := len(nodesOf(t, e.store))
	if all < 6 {
		t.Fatalf("doc.md has %d chunks; the test needs more", all)
	}

	from := e.log.len()
	e.writeFile("doc.md.tmp", text+"One more sentence at the end.\n") // an editor's temporary name: ignored
	if err := os.Rename(e.path("doc.md"), e.path("doc.md~")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(e.path("doc.md.tmp"), e.path("doc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(e.path("doc.md~")); err != nil {
		t.Fatal(err)
	}
	e.wait()

	written := 0
	for _, r := range e.log.since(from) {
		if slices.Contains(r.Removed, "doc.md") {
			t.Errorf("a round removed doc.md, which was only saved")
		}
		if r.Report != nil && !slices.Contains(r.Changed, syncName) {
			written += r.Report.ChunksWritten
		}
	}
	if written > 2 {
		t.Errorf("the save wrote %d chunks of %d, want the last one or two only", written, all)
	}
	e.checkClean()
}
