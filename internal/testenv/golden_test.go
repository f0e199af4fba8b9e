package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeTB records what golden reports. Fatalf ends the goroutine, as it
// does a test's, so run golden through runGolden.
type fakeTB struct {
	testing.TB // nil: golden calls none but the methods below
	name       string
	failed     bool
	fatal      bool
	out        strings.Builder
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }

func (f *fakeTB) Logf(format string, args ...any) {
	fmt.Fprintf(&f.out, format+"\n", args...)
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.Logf(format, args...)
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.fatal = true
	runtime.Goexit()
}

// runGolden runs golden with a fakeTB named name, and returns it.
func runGolden(name, path string, got []byte, update bool) *fakeTB {
	f := &fakeTB{name: name}
	done := make(chan struct{})
	go func() {
		defer close(done)
		golden(f, path, got, update)
	}()
	<-done
	return f
}

// TestGolden checks Golden's comparison, its failure messages, and its
// rewriting of the file under -update.
func TestGolden(t *testing.T) {
	const missing = "\x00missing" // a file content meaning no file
	const cmd = `go test ./internal/testenv -run '^TestX$' -update`
	for _, tt := range []struct {
		name   string
		file   string // the golden file's content, or missing
		got    string
		update bool
		failed bool     // Errorf or Fatalf called
		fatal  bool     // Fatalf called
		want   []string // in the messages
		after  string   // the file's content afterwards
	}{
		{name: "equal", file: "a\nb\n", got: "a\nb\n", after: "a\nb\n"},
		{name: "both empty", file: "", got: "", after: ""},
		{
			name: "one line changed", file: "a\nb\nc\n", got: "a\nB\nc\n", failed: true,
			want: []string{
				"output differs from golden file internal/testenv/" + filepath.ToSlash(filepath.Join("testdata-x", "one line changed")) + " (got 6 bytes, the file 6)",
				"first difference at line 2, column 1:\n\tgolden: \"b\\n\"\n\tgot:    \"B\\n\"",
				"@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
				"rewrite the file with\n\t" + cmd,
			},
			after: "a\nb\nc\n",
		},
		{
			name: "line added at the end", file: "a\n", got: "a\nb\n", failed: true,
			want:  []string{"line 2, column 1:\n\tgolden: (end of file)\n\tgot:    \"b\\n\"", "@@ -1 +1,2 @@\n a\n+b\n", cmd},
			after: "a\n",
		},
		{
			name: "line removed", file: "a\nb\nc\n", got: "a\nc\n", failed: true,
			want:  []string{"line 2, column 1:\n\tgolden: \"b\\n\"\n\tgot:    \"c\\n\"", "@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
			after: "a\nb\nc\n",
		},
		{
			name: "no final newline", file: "a\n", got: "a", failed: true,
			want:  []string{"line 1, column 2", "-a\n+a\n\\ No newline at end of file\n"},
			after: "a\n",
		},
		{
			name: "empty output", file: "a\n", got: "", failed: true,
			want:  []string{"(got 0 bytes, the file 2)", "\tgot:    (end of file)", "@@ -1 +0,0 @@\n-a\n"},
			after: "a\n",
		},
		{
			name: "long line cut around the difference", file: strings.Repeat("x", 200) + "1" + strings.Repeat("y", 200),
			got: strings.Repeat("x", 200) + "2" + strings.Repeat("y", 200), failed: true,
			want: []string{
				"line 1, column 201",
				"golden: ...\"" + strings.Repeat("x", excerptWidth) + "1" + strings.Repeat("y", excerptWidth-1) + "\"...",
				"got:    ...\"" + strings.Repeat("x", excerptWidth) + "2" + strings.Repeat("y", excerptWidth-1) + "\"...",
			},
			after: strings.Repeat("x", 200) + "1" + strings.Repeat("y", 200),
		},
		{
			name: "control characters show", file: "a b\n", got: "a\tb\r\n", failed: true,
			want:  []string{"golden: \"a b\\n\"", "got:    \"a\\tb\\r\\n\""},
			after: "a b\n",
		},
		{
			name: "changes far apart make two hunks", file: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", got: "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n", failed: true,
			want:  []string{"@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+ELEVEN\n 12\n"},
			after: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
		},
		{
			name: "missing file", file: missing, got: "a\n", failed: true, fatal: true,
			want:  []string{"golden file internal/testenv/testdata-x/missing file does not exist; create it with\n\t" + cmd},
			after: missing,
		},
		{name: "update rewrites", file: "old\n", got: "new\n", update: true, want: []string{"rewrote"}, after: "new\n"},
		{name: "update creates", file: missing, got: "new\n", update: true, after: "new\n"},
		{name: "update to empty", file: "old\n", got: "", update: true, after: ""},
		{name: "update leaves an equal file", file: "same\n", got: "same\n", update: true, after: "same\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A relative path, as callers give, below a temporary
			// folder made the working directory of a copy of this
			// package's folder layout: the module root with go.mod,
			// then internal/testenv.
			root := t.TempDir()
			pkg := filepath.Join(root, "internal", "testenv")
			if err := os.MkdirAll(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(pkg)
			path := filepath.Join("testdata-x", tt.name)
			if tt.file != missing {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// An old time shows whether golden rewrote the file.
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if tt.file != missing {
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			}

			f := runGolden("TestX/"+tt.name, path, []byte(tt.got), tt.update)

			msg := f.out.String()
			if f.failed != tt.failed || f.fatal != tt.fatal {
				t.Errorf("failed %v, fatal %v; want %v, %v; messages:\n%s", f.failed, f.fatal, tt.failed, tt.fatal, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("messages lack %q:\n%s", w, msg)
				}
			}
			after, err := os.ReadFile(path)
			switch {
			case tt.after == missing:
				if !os.IsNotExist(err) {
					t.Errorf("golden created %s (%v), want it still missing", path, err)
				}
			case err != nil:
				t.Fatal(err)
			case string(after) != tt.after:
				t.Errorf("file holds %q afterwards, want %q", after, tt.after)
			}
			if fi, err := os.Stat(path); err == nil && tt.file == tt.after && !fi.ModTime().Equal(old) {
				t.Errorf("golden rewrote %s, which needed no change", path)
			}
		})
	}
}

// TestGoldenUnwritable checks that -update fails, not passes, when it
// cannot write the golden file.
func TestGoldenUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A golden file below a file: neither the folder nor the file can
	// be made, even by root.
	f := runGolden("TestX", filepath.Join(file, "x.golden"), []byte("x"), true)
	if !f.fatal || !strings.Contains(f.out.String(), "x.golden") {
		t.Errorf("fatal %v, messages %q: want a fatal failure naming x.golden", f.fatal, f.out.String())
	}
}

// TestLineDiff checks lineDiff on the edge cases the table of TestGolden
// leaves out.
func TestLineDiff(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"", "", ""},
		{"", "a\n", "@@ -0,0 +1 @@\n+a\n"},
		{"a\nb\n", "b\n", "@@ -1,2 +1 @@\n-a\n b\n"},
		{"a\nb\nc\nd\n", "x\nb\nc\ny\n", "@@ -1,4 +1,4 @@\n-a\n+x\n b\n c\n-d\n+y\n"},
		{"a", "b", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
	} {
		if got := lineDiff([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("lineDiff(%q, %q) =\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
	long := bytes.Repeat([]byte("x\n"), 2000)
	if got := lineDiff(long, append(long, 'y')); !strings.Contains(got, "too long to diff") {
		t.Errorf("lineDiff of 2000 lines against 2001 = %.200q, want it to give up", got)
	}
	var many, other strings.Builder
	for i := range 500 {
		fmt.Fprintf(&many, "%d\n", i)
		fmt.Fprintf(&other, "%d!\n", i)
	}
	if got := lineDiff([]byte(many.String()), []byte(other.String())); !strings.HasSuffix(got, fmt.Sprintf("... (diff cut at %d lines)\n", maxDiffLines)) ||
		strings.Count(got, "\n") != maxDiffLines+2 {
		t.Errorf("lineDiff of 500 changed lines: %d lines ending %q, want %d lines and a cut", strings.Count(got, "\n"), got[max(len(got)-40, 0):], maxDiffLines+2)
	}
}

// goldenChildEnv, when set, names the golden file that
// TestGoldenFlag's child process compares "child\n" with.
const goldenChildEnv = "SLUICE_TESTENV_GOLDEN_CHILD"

// TestGoldenFlag runs this test binary again, as go test would, to check
// the real flag and a real *testing.T: without -update a mismatch fails
// the test, with -update the file is rewritten and the test passes.
func TestGoldenFlag(t *testing.T) {
	if path := os.Getenv(goldenChildEnv); path != "" {
		Golden(t, path, []byte("child\n"))
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "child.golden")
	if err := os.WriteFile(path, []byte("parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(exe, append([]string{"-test.run=^TestGoldenFlag$", "-test.v"}, args...)...)
		cmd.Env = append(os.Environ(), goldenChildEnv+"="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run()
	if err == nil || !strings.Contains(out, "--- FAIL: TestGoldenFlag") {
		t.Fatalf("a mismatch passed (%v):\n%s", err, out)
	}
	for _, w := range []string{path, `golden: "parent\n"`, `"child\n"`, "-parent", "+child", "go test ./internal/testenv -run '^TestGoldenFlag$' -update"} {
		if !strings.Contains(out, w) {
			t.Errorf("failure lacks %q:\n%s", w, out)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "parent\n" {
		t.Errorf("without -update the golden file became %q", b)
	}

	if out, err := run("-update"); err != nil {
		t.Fatalf("with -update: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "child\n" {
		t.Errorf("with -update the golden file holds %q, want %q", b, "child\n")
	}
	if out, err := run(); err != nil {
		t.Errorf("after -update the test still fails: %v\n%s", err, out)
	}
}
