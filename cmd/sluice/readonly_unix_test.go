//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
)

// TestReadOnlyUser: a user who may read the store, the manifest and their
// folder but write none of them runs the read-only commands, on a store at
// rest and on one a writer holds open, and creates no file doing so; the
// commands that write still fail, naming the file, its setting and the
// remedy. As root the commands run in a child process as user nobody; as
// another user, in this process, with write access taken away.
func TestReadOnlyUser(t *testing.T) {
	dir := testenv.OpenTempDir(t)
	writeFiles(t, dir, map[string]string{
		"docs/a.md":     "Alpha document about pelicans.\n",
		"docs/b.md":     "Bravo document about herons.\n",
		"docs/empty.md": "", // a dead letter for `failed list`
	})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitPartial {
		t.Fatalf("run: exit %d, want 3 (empty.md failed): %s", code, errOut)
	}
	meta := filepath.Join(dir, ".sluice")
	run := readOnlyRunner(t, dir, meta)

	type command struct {
		args []string
		code int
		want []string // in stdout when code is 0 or 3, else in stderr
	}
	readers := []command{
		{[]string{"query", "pelicans", "--mode", "sparse", "--json"}, exitOK, []string{`"doc_id":"a.md"`}},
		{[]string{"query", "herons", "--mode", "hybrid", "--json"}, exitOK, []string{`"doc_id":"b.md"`}},
		{[]string{"get", "--json"}, exitOK, []string{`"doc_id":"a.md"`, `"doc_id":"b.md"`}},
		{[]string{"index", "stats", "--json"}, exitOK, []string{`"dimensions":1536`}},
		{[]string{"index", "validate"}, exitOK, []string{"is valid"}},
		{[]string{"doctor"}, exitOK, []string{"✓ local store"}},
		{[]string{"failed", "list"}, exitOK, []string{"empty.md"}},
		{[]string{"run", "docs", "--dry-run", "--json"}, exitPartial, []string{`"files_unchanged":2`}},
	}
	writers := []command{
		{[]string{"run", "docs"}, exitFatal, []string{"(state.path)", "check the permissions"}},
		{[]string{"delete", "--doc-id", "a.md"}, exitFatal, []string{"(sink.local.path)", "check the permissions"}},
		{[]string{"index", "create"}, exitFatal, []string{"(sink.local.path)", "check the permissions"}},
	}
	check := func(t *testing.T, tt command, extra ...string) {
		t.Helper()
		before := listFiles(t, meta)
		out, errOut, code := run(tt.args...)
		got := out
		if tt.code != exitOK && tt.code != exitPartial {
			got = errOut
		}
		for _, w := range append(tt.want, extra...) {
			if !strings.Contains(got, w) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.code, w)
			}
		}
		if code != tt.code {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit %d", code, out, errOut, tt.code)
		}
		if after := listFiles(t, meta); after != before {
			t.Errorf("the files of %s changed:\nbefore %s\nafter  %s", meta, before, after)
		}
	}

	t.Run("at rest", func(t *testing.T) {
		if names := listFiles(t, meta); strings.Contains(names, "-wal") || strings.Contains(names, "-shm") {
			t.Fatalf("store not at rest: %s", names)
		}
		for _, tt := range append(readers, writers...) {
			t.Run(strings.Join(tt.args, " "), func(t *testing.T) { check(t, tt) })
		}
	})

	t.Run("writer holds the store", func(t *testing.T) {
		// A writer that opened the store while it could, and committed a
		// node after: the readers see it through the writer's -wal and
		// -shm, which they may only read.
		allowWrites(t, meta)
		w, err := local.Open(context.Background(), local.Config{Path: filepath.Join(meta, "index.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		denyWrites(t, meta)
		late := sink.Node{ID: "late", RefDocID: "late.md", Text: "A late note about storks.", Embedding: make([]float32, 1536)}
		late.Embedding[0] = 1
		if _, err := w.Add(context.Background(), []sink.Node{late}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(meta, "index.db-wal")); err != nil {
			t.Fatalf("the writer has no -wal file: %v", err)
		}
		for _, tt := range []command{
			{[]string{"query", "storks", "--mode", "sparse", "--json"}, exitOK, []string{`"doc_id":"late.md"`}},
			{[]string{"get", "--ids", "late", "--json"}, exitOK, []string{`"doc_id":"late.md"`}},
			{[]string{"index", "stats", "--json"}, exitOK, []string{`"documents":3`}},
			{[]string{"failed", "list"}, exitOK, []string{"empty.md"}},
		} {
			t.Run(strings.Join(tt.args, " "), func(t *testing.T) { check(t, tt) })
		}
	})
}

// TestReadOnlyFiles: a user who may write the folder of the store and the
// manifest but not their files reads them without leaving a -shm or -wal
// file behind: SQLite creates them for every connection that may, but only
// one that may write the database removes them, and a writer running as
// another user could not write those of the reader (its `sluice run` would
// fail as if the database were read-only). As root the commands run as
// user nobody; as another user, in this process.
func TestReadOnlyFiles(t *testing.T) {
	dir := testenv.OpenTempDir(t)
	writeFiles(t, dir, map[string]string{
		"docs/a.md":     "Alpha document about pelicans.\n",
		"docs/empty.md": "", // a dead letter for `failed list`
	})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitPartial {
		t.Fatalf("run: exit %d, want 3 (empty.md failed): %s", code, errOut)
	}
	meta := filepath.Join(dir, ".sluice")
	chmodAll(t, meta, 0o777, 0o444)
	t.Cleanup(func() { allowWrites(t, meta) })
	run := func(args ...string) (string, string, int) { return sluice(t, dir, args...) }
	if os.Geteuid() == 0 {
		run = nobodyRunner(t, dir)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string // in stdout
	}{
		{[]string{"query", "pelicans", "--mode", "sparse", "--json"}, exitOK, `"doc_id":"a.md"`},
		{[]string{"get", "--json"}, exitOK, `"doc_id":"a.md"`},
		{[]string{"index", "stats", "--json"}, exitOK, `"dimensions":1536`},
		{[]string{"index", "validate"}, exitOK, "is valid"},
		{[]string{"doctor"}, exitOK, "✓ local store"},
		{[]string{"failed", "list"}, exitOK, "empty.md"},
		{[]string{"run", "docs", "--dry-run", "--json"}, exitPartial, `"files_unchanged":1`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			before := listFiles(t, meta)
			out, errOut, code := run(tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.code, tt.want)
			}
			if after := listFiles(t, meta); after != before {
				t.Errorf("the files of %s changed:\nbefore %s\nafter  %s", meta, before, after)
			}
		})
	}
	allowWrites(t, meta)
	writeFiles(t, dir, map[string]string{"docs/b.md": "Bravo document about herons.\n"})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitPartial {
		t.Fatalf("run after the readers: exit %d, want 3 (empty.md failed): %s", code, errOut)
	}
}

// TestForeignWALFiles: the -wal and -shm files of the manifest that another
// user left (an older Sluice reader running as root could create them but
// not remove them) stop the owner's writer; its error names them and says
// what to do, instead of sending the user to the permissions of state.db,
// which are fine. Run as root only: the owner is user nobody.
func TestForeignWALFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the files must belong to another user than the writer")
	}
	dir := testenv.OpenTempDir(t)
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n"})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	meta := filepath.Join(dir, ".sluice")
	// nobody owns the index; root leaves a reader's files behind.
	if err := filepath.WalkDir(meta, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, testenv.Nobody, testenv.Nobody)
	}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"docs/b.md": "Bravo document about herons.\n"})
	run := nobodyRunner(t, dir)
	// The manifest's, then the store's (the manifest is opened first).
	for _, db := range []string{"state.db", "index.db"} {
		path := filepath.Join(meta, db)
		writeFiles(t, meta, map[string]string{db + "-wal": "", db + "-shm": strings.Repeat("\x00", 32<<10)})
		_, errOut, code := run("run", "docs")
		want := path + "-wal and " + path + "-shm belong to another user or are read-only"
		if code != exitFatal || !strings.Contains(errOut, want) || !strings.Contains(errOut, "delete them or give them to this user") {
			t.Errorf("run as the owner with root's files beside %s: exit %d, stderr %q; want exit 1 naming the files: %q", db, code, errOut, want)
		}
		for _, f := range []string{path + "-wal", path + "-shm"} {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, errOut, code := run("run", "docs", "--json"); code != exitOK || !strings.Contains(out, `"files_added":1`) {
		t.Errorf("run after they were deleted: exit %d, stdout %q, stderr %q; want b.md added", code, out, errOut)
	}
}

// readOnlyRunner takes write access to meta and its files away from the
// commands it returns a runner of, and gives it back when the test ends. As
// root, the runner runs the command line in a child process as nobody
// (this test binary, copied where nobody may run it); otherwise in this
// process, as sluice does. It skips the test when it cannot take write
// access away.
func readOnlyRunner(t *testing.T, dir, meta string) func(args ...string) (string, string, int) {
	t.Helper()
	denyWrites(t, meta)
	t.Cleanup(func() { allowWrites(t, meta) })
	if os.Geteuid() != 0 {
		probe := filepath.Join(meta, "probe")
		if f, err := os.Create(probe); err == nil {
			f.Close()
			os.Remove(probe)
			t.Skip("cannot take write access away: the folder stays writable")
		}
		return func(args ...string) (string, string, int) { return sluice(t, dir, args...) }
	}
	return nobodyRunner(t, dir)
}

// nobodyRunner returns a runner of command lines in dir in a child process
// as nobody (this test binary, copied where nobody may run it). Only root
// may call it.
func nobodyRunner(t *testing.T, dir string) func(args ...string) (string, string, int) {
	t.Helper()
	exe := testenv.CopyTestBinary(t, testenv.OpenTempDir(t), "sluice.test")
	return func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), exe, args...)
		cmd.Dir = dir
		// Without the race detector's default second of sleep at exit.
		cmd.Env = append(os.Environ(), cliChildEnv+"=1", "GORACE=atexit_sleep_ms=0")
		cmd.SysProcAttr = testenv.AsNobody()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running %v as nobody: %v", args, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
}

// denyWrites makes dir and its files read-only (and readable) for everyone.
func denyWrites(t *testing.T, dir string) { chmodAll(t, dir, 0o555, 0o444) }

// allowWrites gives the owner of dir and its files write access back.
func allowWrites(t *testing.T, dir string) { chmodAll(t, dir, 0o755, 0o644) }

// chmodAll sets the mode of dir and of the files in it.
func chmodAll(t *testing.T, dir string, dirMode, fileMode os.FileMode) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(dir, e.Name()), fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// listFiles returns the names and sizes of the files in dir, one a line.
func listFiles(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		fmt.Fprintf(&b, "%s %d\n", e.Name(), fi.Size())
	}
	return b.String()
}
