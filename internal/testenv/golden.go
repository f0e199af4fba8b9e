package testenv

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// update is the -update flag of every test binary that imports testenv:
// registered here, once, so that no package registers its own.
var update = flag.Bool("update", false, "rewrite the golden files that tests compare their output with (testenv.Golden), instead of comparing")

// Golden compares got with the golden file at path (a path relative to
// the package folder, such as filepath.Join("testdata", "x.golden"),
// since go test runs a package's tests there). Byte for byte: callers
// that must normalise their output (sort it, strip times) do so before.
//
// When they differ, Golden fails the test with t.Errorf, so the test goes
// on, with a message that names the file, shows the first differing line
// of each side and a line diff, and gives the command that rewrites the
// file. A golden file that is missing or unreadable fails the test with
// t.Fatalf.
//
// With the -update flag (go test ./pkg -run TestX -update) Golden instead
// writes got to path, creating its folder if need be, and does not touch
// a file that already holds got. Review the rewritten file with git diff
// before committing it.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	golden(t, path, got, *update)
}

// golden is Golden with the value of -update given, for its own tests.
func golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	want, err := os.ReadFile(path)
	if update {
		if err == nil && bytes.Equal(got, want) {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: cannot create the folder of %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: cannot rewrite %s: %v", path, err)
		}
		t.Logf("golden: rewrote %s (-update); review it with git diff", path)
		return
	}
	name := shownPath(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("golden file %s does not exist; create it with\n\t%s", name, updateCommand(t))
	}
	if err != nil {
		t.Fatalf("golden file %s: %v", name, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	t.Errorf("output differs from golden file %s (got %d bytes, the file %d)\n%s\n"+
		"diff (- golden file, + got):\n%s"+
		"if the new output is right, rewrite the file with\n\t%s\nand review the change with git diff",
		name, len(got), len(want), firstDifference(want, got), lineDiff(want, got), updateCommand(t))
}

// moduleRoot returns the folder of the go.mod at or above the working
// directory (root "" when there is none) and that working directory.
func moduleRoot() (root, wd string) {
	wd, err := os.Getwd()
	if err != nil {
		return "", ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, wd
		}
		if dir == filepath.Dir(dir) {
			return "", wd
		}
	}
}

// packageDir returns the working directory, the folder of the package
// under test, relative to the module root in go test's form: "./sink/local",
// or "." when it cannot tell.
func packageDir() string {
	root, wd := moduleRoot()
	if root == "" {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

// shownPath names a relative golden file from the module root, as in
// "sink/local/testdata/getnodes.golden", so that a failure says which
// package it belongs to; other paths stay as they are.
func shownPath(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return strings.TrimPrefix(filepath.ToSlash(filepath.Join(packageDir(), path)), "./")
}

// updateCommand is the go test command that reruns t's top-level test
// with -update.
func updateCommand(t testing.TB) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test %s -run '^%s$' -update", packageDir(), regexp.QuoteMeta(top))
}

// excerptWidth is how many bytes of a long line firstDifference shows on
// each side of the first differing byte.
const excerptWidth = 60

// firstDifference describes where got first differs from want: line and
// column (in bytes, from 1), and that line of each, quoted so that white
// space and control characters show, cut around the difference when long.
func firstDifference(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	start := bytes.LastIndexByte(got[:i], '\n') + 1 // the same in want
	line := bytes.Count(got[:i], []byte("\n")) + 1
	return fmt.Sprintf("first difference at line %d, column %d:\n\tgolden: %s\n\tgot:    %s",
		line, i-start+1, excerpt(want, start, i), excerpt(got, start, i))
}

// excerpt quotes the line of b that starts at start, cut to excerptWidth
// bytes either side of offset at.
func excerpt(b []byte, start, at int) string {
	if start >= len(b) {
		return "(end of file)"
	}
	end := len(b)
	if j := bytes.IndexByte(b[start:], '\n'); j >= 0 {
		end = start + j + 1 // the newline shows as \n
	}
	from, to := start, end
	prefix, suffix := "", ""
	if at-from > excerptWidth {
		from, prefix = at-excerptWidth, "..."
	}
	if to-at > excerptWidth {
		to, suffix = at+excerptWidth, "..."
	}
	return prefix + fmt.Sprintf("%q", b[from:to]) + suffix
}

// maxDiffLines is how many changed and context lines lineDiff shows at
// most, and maxDiffCells the largest files (lines of want times lines of
// got) it diffs: a diff of files that long is not read.
const (
	maxDiffLines = 200
	maxDiffCells = 1 << 20
)

// lineDiff returns a unified diff, by lines with 3 lines of context (go-udiff,
// the Go tools' diff), from want to got, ending in a newline and without
// its ---/+++ header, cut after maxDiffLines lines.
func lineDiff(want, got []byte) string {
	if n, m := len(splitLines(want)), len(splitLines(got)); n*m > maxDiffCells {
		return fmt.Sprintf("\t(too long to diff: %d lines against %d)\n", n, m)
	}
	d := udiff.Unified("golden", "got", string(want), string(got))
	_, d, _ = strings.Cut(d, "+++ got\n")
	var out strings.Builder
	shown := 0
	for line := range strings.SplitAfterSeq(d, "\n") {
		// Hunk headers and "\ No newline at end of file" do not count.
		if !strings.HasPrefix(line, "@@") && !strings.HasPrefix(line, "\\") {
			if shown == maxDiffLines {
				fmt.Fprintf(&out, "... (diff cut at %d lines)\n", maxDiffLines)
				break
			}
			shown++
		}
		out.WriteString(line)
	}
	return out.String()
}

// splitLines splits b after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
