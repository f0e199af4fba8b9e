//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSplitOffsetsAreFileOffsets checks that `split --json` counts start and
// end in bytes of the file, UTF-8 byte-order mark included, both for a file
// read whole and for one streamed.
func TestSplitOffsetsAreFileOffsets(t *testing.T) {
	const mark = "\xEF\xBB\xBF"
	para := "One sentence here. Another one there, with a comma.\n\n\n"
	files := map[string]string{
		"plain.md":    "Abc. Def.\n",
		"bom.md":      mark + "Abc. Def.\n",
		"bom-long.md": mark + strings.Repeat(para, 40),
		"streamed.md": mark + strings.Repeat(para, streamSplitAbove/len(para)+1),
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	tests := []struct {
		file      string
		wantStart int // of the first chunk
	}{
		{"plain.md", 0}, {"bom.md", 3}, {"bom-long.md", 3}, {"streamed.md", 3},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, stderr, code := sluice(t, dir, "split", tt.file, "--chunk-size", "64", "--chunk-overlap", "8", "--json")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := jsonLines(t, out)
			if len(lines) == 0 {
				t.Fatal("no chunks")
			}
			if got := int(lines[0]["start"].(float64)); got != tt.wantStart {
				t.Errorf("first chunk starts at %d, want %d", got, tt.wantStart)
			}
			body := files[tt.file]
			for _, l := range lines {
				start, end := int(l["start"].(float64)), int(l["end"].(float64))
				if start < 0 || end > len(body) || start > end || body[start:end] != l["text"] {
					t.Fatalf("chunk %v: bytes %d-%d of the file are not its text %.40q", l["index"], start, end, l["text"])
				}
			}
		})
	}
}

// splitDeadline bounds a `split` that must not block.
const splitDeadline = 20 * time.Second

// splitWithin runs `sluice split args...` in dir and fails the test if it
// does not finish within splitDeadline; it then opens the named pipes in
// pipes for writing, which releases a read blocked on them.
func splitWithin(t *testing.T, dir string, pipes []string, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(dir)
	type result struct {
		out, stderr string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, stderr, code := sluice(t, "", append([]string{"split"}, args...)...)
		done <- result{out, stderr, code}
	}()
	timer := time.NewTimer(splitDeadline)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.stderr, r.code
	case <-timer.C:
		for _, p := range pipes {
			if w, err := os.OpenFile(filepath.Join(dir, p), os.O_RDWR, 0); err == nil {
				defer w.Close()
			}
		}
		<-done
		t.Fatalf("split %v still running after %v: it blocks on a named pipe", args, splitDeadline)
		return "", "", 0
	}
}

// TestSplitRefusesNonRegularFiles checks that `split` reports a named pipe
// (also through a symlink), a directory and a device as failed files (exit 3)
// at once, instead of waiting for a writer, and still splits the others.
func TestSplitRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"ok.md": "Fine text. More of it.\n", "folder.md/x.md": "x"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := splitWithin(t, dir, []string{"pipe.md"}, "pipe.md", "link.md", "folder.md", "/dev/null", "ok.md")
	if code != exitPartial {
		t.Errorf("exit %d, want %d (some files failed): %s", code, exitPartial, stderr)
	}
	want := "sluice: pipe.md: not a regular file (a named pipe)\n" +
		"sluice: link.md: not a regular file (a named pipe)\n" +
		"sluice: folder.md: not a regular file (a directory)\n" +
		"sluice: /dev/null: not a regular file (a character device)\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if !strings.Contains(out, "Fine text. More of it.") {
		t.Errorf("the regular file was not split: %q", out)
	}
}

// TestSplitErrorsSayHowToFixTheFile checks that `split` tells what is wrong
// with each file and how to fix the file, never suggesting source settings,
// which split does not read.
func TestSplitErrorsSayHowToFixTheFile(t *testing.T) {
	tests := []struct {
		file, body, want string
	}{
		{"bin.md", "a\x00b", "binary file: NUL byte at offset 1"},
		{"latin1.md", "caf\xe9", "not valid UTF-8: bad byte at offset 3; re-save it as UTF-8"},
		{"u16le.md", "\xFF\xFEh\x00i\x00", "UTF-16 text, not UTF-8 (little-endian byte-order mark FF FE); re-save it as UTF-8"},
		{"u16be.md", "\xFE\xFF\x00h\x00i", "UTF-16 text, not UTF-8 (big-endian byte-order mark FE FF); re-save it as UTF-8"},
		{"u32.md", "\xFF\xFE\x00\x00h\x00\x00\x00", "UTF-32 text, not UTF-8 (little-endian byte-order mark FF FE 00 00); re-save it as UTF-8"},
		{"empty.md", "", "empty file: nothing to index; write text into it"},
		{"blank.md", " \n\t\n", "empty file: nothing to index (only white space, 4 bytes); write text into it"},
	}
	dir := t.TempDir()
	files := map[string]string{}
	var args []string
	var want strings.Builder
	for _, tt := range tests {
		files[tt.file] = tt.body
		args = append(args, tt.file)
		want.WriteString("sluice: " + tt.file + ": " + tt.want + "\n")
	}
	writeFiles(t, dir, files)
	out, stderr, code := sluice(t, dir, append([]string{"split"}, args...)...)
	if code != exitPartial || out != "" {
		t.Errorf("exit %d with output %q, want %d and none", code, out, exitPartial)
	}
	if stderr != want.String() {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want.String())
	}
	if strings.Contains(stderr, "source.") {
		t.Errorf("split suggests a source setting:\n%s", stderr)
	}
}

// TestSplitFlagErrorNamesFlag: a bad --chunk-size is a usage error that
// names the flag, and the help shows one default per flag.
func TestSplitFlagErrorNamesFlag(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "Some text.\n"})
	// Only the flags given are named, each with its value.
	for _, tt := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--chunk-size", "3"}, "sluice: --chunk-size 3: splitter.chunkSize: 3 is invalid", "--chunk-overlap"},
		{[]string{"--chunk-overlap", "2000"}, "sluice: --chunk-overlap 2000: splitter.chunkOverlap: 2000 is invalid", "--chunk-size"},
		{[]string{"--chunk-size", "10", "--chunk-overlap", "10"}, "sluice: --chunk-size 10 --chunk-overlap 10: splitter.chunkOverlap: 10 is invalid", "--chunk-size or --chunk-overlap"},
	} {
		_, stderr, code := sluice(t, dir, append([]string{"split", "a.md"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, tt.not) {
			t.Errorf("split %v: exit %d, %q; want exit %d saying %q, without %q", tt.args, code, stderr, exitUsage, tt.want, tt.not)
		}
	}
	out, _, _ := sluice(t, dir, "split", "--help")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "--chunk-") && strings.Count(line, "default") != 1 {
			t.Errorf("help line %q: want exactly one default", line)
		}
	}
}
