package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code != exitFatal || !strings.Contains(stderr, "writing --report") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the write error", code, stderr)
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
