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

// diffContext is how many unchanged lines lineDiff shows around a change,
// maxDiffLines how many lines it shows at most, and maxDiffCells the
// largest table (lines of want times lines of got) it computes a diff
// with.
const (
	diffContext  = 3
	maxDiffLines = 200
	maxDiffCells = 1 << 20
)

// lineDiff returns a unified diff, by lines, from want to got, ending in
// a newline. A line without a newline at the end of the file is followed
// by a "\ No newline at end of file" line, as diff does.
func lineDiff(want, got []byte) string {
	a, b := splitLines(want), splitLines(got)
	if len(a)*len(b) > maxDiffCells {
		return fmt.Sprintf("\t(too long to diff: %d lines against %d)\n", len(a), len(b))
	}
	// lcs[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type edit struct {
		op   byte // ' ', '-' or '+'
		line string
		i, j int // the line's index in a and in b, before it
	}
	var edits []edit
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			edits = append(edits, edit{' ', a[i], i, j})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			edits = append(edits, edit{'+', b[j], i, j})
			j++
		default:
			edits = append(edits, edit{'-', a[i], i, j})
			i++
		}
	}

	var out strings.Builder
	shown := 0
	for k := 0; k < len(edits); {
		if edits[k].op == ' ' {
			k++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext lines after the last change less than
		// 2*diffContext unchanged lines further on.
		first := max(k-diffContext, 0)
		last := k
		for n := k; n < len(edits); n++ {
			if edits[n].op != ' ' {
				last = n
			} else if n-last > 2*diffContext {
				break
			}
		}
		end := min(last+diffContext+1, len(edits))
		var na, nb int
		for _, e := range edits[first:end] {
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(edits[first].i, na), hunkRange(edits[first].j, nb))
		for _, e := range edits[first:end] {
			if shown == maxDiffLines {
				fmt.Fprintf(&out, "... (diff cut at %d lines)\n", maxDiffLines)
				return out.String()
			}
			shown++
			out.WriteByte(e.op)
			out.WriteString(strings.TrimSuffix(e.line, "\n"))
			out.WriteByte('\n')
			if !strings.HasSuffix(e.line, "\n") {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return out.String()
}

// hunkRange formats the start (from 1) and length of a hunk's lines as
// diff does: "3,4", "3" for one line, "2,0" for none after line 2.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits b after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
