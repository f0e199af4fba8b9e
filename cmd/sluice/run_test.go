package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// TestReportPathCheckedFirst checks that a --report file that cannot be
// written is refused before anything is opened, read or embedded (exit 2,
// naming the flag and the path), by run and failed retry.
func TestReportPathCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/good.md": "Some text that is fine.", "corpus/bad.md": "PK\x03\x04\x00\x00binary"})
	writeFiles(t, dir, map[string]string{"a-folder/x": ""})
	for _, report := range []string{filepath.Join(dir, "missing", "r.json"), filepath.Join(dir, "a-folder")} {
		stdout, stderr, code := sluice(t, dir, "run", "corpus", "--report", report)
		if code != exitUsage || !strings.Contains(stderr, "--report "+report) || stdout != "" {
			t.Errorf("run --report %s: exit %d, stdout %q, stderr %q; want exit 2 naming --report and the path, before the run", report, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, ".sluice")); !os.IsNotExist(err) {
			t.Errorf("run --report %s opened the state or the store before failing (%v)", report, err)
		}
	}
	// failed retry, after a run that recorded bad.md.
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != exitPartial {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	report := filepath.Join(dir, "missing", "r.json")
	if stdout, stderr, code := sluice(t, dir, "failed", "retry", "corpus", "--report", report); code != exitUsage || !strings.Contains(stderr, "--report "+report) || stdout != "" {
		t.Errorf("failed retry: exit %d, stdout %q, stderr %q; want exit 2 naming --report", code, stdout, stderr)
	}
	// A writable path is left as it was found: no empty report from the check.
	ok := filepath.Join(dir, "ok.json")
	if err := checkReportPath(ok); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ok); !os.IsNotExist(err) {
		t.Errorf("the check left %s behind (%v)", ok, err)
	}
}

// TestReportWriteFailsAtEnd checks a report that passes the check but
// cannot be written at the end (here /dev/full, whose writes fail with
// ENOSPC): the summary, with its failed documents, is printed all the same
// and the exit code is 1.
func TestReportWriteFailsAtEnd(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/good.md": "Some text that is fine.", "corpus/bad.md": "PK\x03\x04\x00\x00binary"})
	stdout, stderr, code := sluice(t, dir, "run", "corpus", "--report", "/dev/full")
	if code != exitFatal || !strings.Contains(stderr, "writing --report /dev/full: no space left on device; free space on its disk, or name a file on another with --report; the summary is on standard output") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the write error, saying what to do", code, stderr)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("/dev/full is gone after the failed write: %v", err) // only a regular file's partial report is removed
	}
	if !strings.Contains(stdout, "Ingested 1 of 2 files") || !strings.Contains(stdout, "bad.md") {
		t.Errorf("the summary with the failed document is missing: %q", stdout)
	}
	// With --json, the report goes to standard output all the same.
	writeFiles(t, dir, map[string]string{"corpus/good.md": "Some text that changed."})
	stdout, _, code = sluice(t, dir, "run", "corpus", "--report", "/dev/full", "--json")
	var rep struct {
		FilesFailed int `json:"files_failed"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitFatal || rep.FilesFailed != 1 {
		t.Errorf("--json: exit %d, stdout %q (%v); want exit 1 and the report with 1 failed file", code, stdout, err)
	}
}

// TestReportOnFullDisk: a report that a full disk cuts short is removed,
// an earlier report with it (the write truncated it), so that a nightly
// job finds no report rather than a truncated one; the error names the
// file and says to free space, the summary is printed and the exit code is
// 1. A run that could not start says nothing of a summary it did not print.
func TestReportOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/good.md": "Some text that is fine.", "report.json": `{"complete": true}`})
	report := filepath.Join(dir, "report.json")
	defer func(w func(string, []byte, os.FileMode) error) { writeFile = w }(writeFile)
	writeFile = func(name string, data []byte, perm os.FileMode) error {
		if err := os.WriteFile(name, data[:len(data)/2], perm); err != nil {
			t.Error(err)
		}
		return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
	stdout, stderr, code := sluice(t, dir, "run", "corpus", "--report", report)
	want := "writing --report " + report + ": no space left on device, so it was removed; free space on its disk, or name a file on another with --report; the summary is on standard output"
	if code != exitFatal || !strings.Contains(stderr, want) || !strings.Contains(stdout, "Ingested 1 of 1 file") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, the summary and %q", code, stdout, stderr, want)
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("a truncated report is left behind (%v)", err)
	}
	// The store is not a database: the run does not start.
	writeFiles(t, dir, map[string]string{"report.json": `{"complete": true}`, "c.yaml": "sink: {local: {path: not.db}}\n",
		"not.db": strings.Repeat("not a SQLite database. ", 10)})
	stdout, stderr, code = sluice(t, dir, "run", "corpus", "--report", report, "--config", "c.yaml")
	if code != exitFatal || stdout != "" || !strings.Contains(stderr, "no space left on device, so it was removed; free space on its disk, or name a file on another with --report\n") {
		t.Errorf("run that could not start: exit %d, stdout %q, stderr %q; want exit 1 and the write error without a summary", code, stdout, stderr)
	}
}

// TestRunThatCannotStartReports: a run stopped before it reads a document
// (here the Cloud AI Search endpoint refuses connections) still writes its
// report, complete false with the error, over an earlier run's, and
// prints it with --json: a nightly job must not read yesterday's report.
func TestRunThatCannotStartReports(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md":   "Alpha.\n",
		"report.json": `{"complete": true}`,
		"sluice.yaml": `embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch: {endpoint: "http://127.0.0.1:1", indexName: docs, embeddingDimensionality: 16, maxRetries: -1}
`,
	})
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", "")
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-key-123456")
	out, errOut, code := sluice(t, dir, "run", "docs", "--json", "--report", "report.json")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stdout %s stderr %s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	if len(lines) != 1 || lines[0]["complete"] != false || !strings.Contains(fmt.Sprint(lines[0]["error"]), "127.0.0.1:1") {
		t.Errorf("--json printed %q, want one report with complete false and the error naming the endpoint", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil || rep["complete"] != false || rep["error"] == nil {
		t.Errorf("report.json = %s (%v), want the failed run's report, complete false with its error", b, err)
	}
}

// TestRunWarnsWhenNothingMatched checks the warning after a run that
// selected no file of a folder that holds files (the default include
// reads only Markdown): it counts and names them and says how to select
// them. An empty folder, or one whose files were all read, gets no warning.
func TestRunWarnsWhenNothingMatched(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"notes/a.txt": "Plain text.", "notes/sub/b.txt": "More text.", "notes/.hidden/c.txt": "Hidden.",
		"md/a.md": "Markdown.",
	})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string // "" for no warning
	}{
		{[]string{"run", "notes"}, "no file of notes matches source.include [**/*.md], so nothing is read; it holds 2 files that the patterns leave out (a.txt, sub/b.txt); select them with --include"},
		{[]string{"run", "notes", "--dry-run", "--json"}, "it holds 2 files that the patterns leave out"},
		{[]string{"run", "notes", "--exclude", "sub"}, "it holds 1 file that the patterns leave out (a.txt)"},
		{[]string{"run", "notes", "--include", "*.txt"}, ""},
		{[]string{"run", "empty"}, ""},
		{[]string{"run", "md"}, ""},
	}
	for _, tt := range tests {
		_, stderr, code := sluice(t, dir, tt.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tt.args, code, stderr)
		}
		if tt.want == "" && strings.Contains(stderr, "matches source.include") {
			t.Errorf("%v warned: %s", tt.args, stderr)
		}
		if tt.want != "" && !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: stderr does not say %q:\n%s", tt.args, tt.want, stderr)
		}
	}
}

// TestRunFileForFolder: `run` given a file as DIR is a usage error that
// says how to read just that file with the flag run has.
func TestRunFileForFolder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha."})
	_, stderr, code := sluice(t, dir, "run", filepath.Join("docs", "a.md"))
	if want := `pass its folder "docs" as DIR with --include "a.md"`; code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("run docs/a.md: exit %d, stderr %q; want exit 2 saying %s", code, stderr, want)
	}
}

// TestRunFileForFolderGlobName: the --include suggested for a file whose
// name holds glob characters matches that file, as the user then passes
// it.
func TestRunFileForFolderGlobName(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/notes[1].md": "Alpha.", "docs/notes1.md": "Beta."})
	_, stderr, code := sluice(t, dir, "run", filepath.Join("docs", "notes[1].md"))
	want := `--include "notes\\[1\\].md"`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("run docs/notes[1].md: exit %d, stderr %q; want exit 2 saying %s", code, stderr, want)
	}
	stdout, stderr, code := sluice(t, dir, "run", "docs", "--include", `notes\[1\].md`, "--json")
	if code != exitOK || !strings.Contains(stdout, `"files_added":1`) {
		t.Errorf("run docs with the suggested --include: exit %d, stdout %s, stderr %s; want notes[1].md alone added", code, stdout, stderr)
	}
}

// TestJSONLogOfAnArgumentError: with --log-format json, an error in the
// arguments, found before the logger is made, is a JSON line too.
func TestJSONLogOfAnArgumentError(t *testing.T) {
	_, stderr, code := sluice(t, t.TempDir(), "--log-format", "json", "query")
	var line struct {
		Msg      string `json:"msg"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &line); err != nil || code != exitUsage || line.ExitCode != exitUsage || !strings.Contains(line.Msg, "query needs the TEXT") {
		t.Errorf("exit %d, stderr %q (%v); want one JSON line with the error and exit_code %d", code, stderr, err, exitUsage)
	}
}

// TestRunWarnsUnescapedPattern: an --exclude that names a file literally
// but, being a glob, does not match it is warned about, naming the flag,
// with the pattern that would; the escaped pattern does exclude it. From
// the configuration file, the warning names the setting.
func TestRunWarnsUnescapedPattern(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/[x].md": "Draft.", "docs/a.md": "Other."})
	out, stderr, code := sluice(t, dir, "run", "docs", "--exclude", "[x].md", "--dry-run")
	if code != 0 || !strings.Contains(stderr, `--exclude \"[x].md\" does not match [x].md, which is there`) || !strings.Contains(stderr, "write '[[]x].md'") {
		t.Errorf("exit %d, stderr %q; want a warning with the escaped pattern", code, stderr)
	}
	if !strings.Contains(out, "over 2 files") {
		t.Errorf("stdout %q: the unescaped pattern should exclude nothing", out)
	}
	out, stderr, code = sluice(t, dir, "run", "docs", "--exclude", "[[]x].md", "--dry-run")
	if code != 0 || strings.Contains(stderr, "does not match") || !strings.Contains(out, "over 1 file") {
		t.Errorf("escaped: exit %d, stdout %q, stderr %q; want [x].md excluded and no warning", code, out, stderr)
	}
	// From the configuration file, the warning names the setting.
	writeFiles(t, dir, map[string]string{"sluice.yaml": "source: {exclude: [\"[x].md\"]}\n"})
	_, stderr, code = sluice(t, dir, "run", "docs", "--dry-run")
	if code != 0 || !strings.Contains(stderr, `source.exclude \"[x].md\" does not match [x].md, which is there`) {
		t.Errorf("from the file: exit %d, stderr %q; want the warning naming source.exclude", code, stderr)
	}
}

// TestInterruptedRunSaysSo: a run interrupted while a request is under way
// exits 1 saying it was interrupted, how far it got and to run again; its
// message does not end in "context canceled", although the error still
// wraps it.
func TestInterruptedRunSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const key = "sk-interrupt-test"
	t.Setenv("SLUICE_INTERRUPT_KEY", key)
	_, url := embedtest.Start(t, embedtest.Options{Key: key, Dimensions: 16, FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultStall}, OnStall: cancel})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md":   "Alpha document about pelicans.\n",
		"sluice.yaml": "embedder: {provider: openai, model: m, dimensions: 16, baseURL: \"" + url + "/v1\", apiKeyEnv: SLUICE_INTERRUPT_KEY}\n",
	})
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := execute(ctx, []string{"run", "docs"}, &stdout, &stderr)
	msg := strings.TrimSpace(stderr.String())
	if code != exitFatal || !strings.Contains(msg, "sluice: interrupted after 0 documents; the store is consistent, run again to finish") ||
		strings.HasSuffix(msg, "context canceled") {
		t.Errorf("exit %d, stderr %q; want exit 1 saying it was interrupted and to run again", code, msg)
	}
}
