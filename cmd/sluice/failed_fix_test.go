package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// failures reads the dead-letter table of the default configuration in
// the current directory.
func failures(t *testing.T) []state.Failure {
	t.Helper()
	st, err := state.Open(context.Background(), DefaultConfig().State.Path, sinkScope(DefaultConfig()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fails, err := st.Failures(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fails
}

// deadLetters lists the ids of the dead-letter table (see failures).
func deadLetters(t *testing.T) []string {
	t.Helper()
	ids := []string{}
	for _, f := range failures(t) {
		ids = append(ids, f.ID)
	}
	return ids
}

// TestFailedRetryObeysSourceSettings: `failed retry` replays only the
// dead letters the source settings select and that are files; it leaves
// the others listed for a full run, which clears what is excluded, gone or
// readable again.
func TestFailedRetryObeysSourceSettings(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	writeFiles(t, docs, map[string]string{"a.md": "ok.", "bin.md": "x\x00y", "notes.txt": "Plain text.", "sub/c.md": "See."})
	if _, _, code := sluice(t, work, "run", "docs"); code != exitPartial {
		t.Fatalf("first run: exit %d, want 3", code)
	}
	// Entries a run over other settings, or over an unreadable folder,
	// left behind.
	st, err := state.Open(context.Background(), DefaultConfig().State.Path, sinkScope(DefaultConfig()))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"notes.txt", "sub"} {
		if err := st.Fail(context.Background(), id, "earlier failure", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	out, errOut, code := sluice(t, work, "failed", "retry", "docs", "--json")
	if code != exitPartial {
		t.Fatalf("retry: exit %d, want 3 (bin.md is still binary); stderr %s", code, errOut)
	}
	rep := jsonLines(t, out)
	if len(rep) != 1 || rep[0]["files_seen"] != float64(1) || rep[0]["files_ingested"] != float64(0) {
		t.Errorf("retry report %v, want bin.md alone retried", rep)
	}
	if !strings.Contains(errOut, "not retrying 2 entries") || !strings.Contains(errOut, "--include with a pattern that selects the documents retries them") || !strings.Contains(errOut, "notes.txt, sub") {
		t.Errorf("retry does not say what it skipped: %q", errOut)
	}
	if got, want := deadLetters(t), []string{"bin.md", "notes.txt", "sub"}; !slices.Equal(got, want) {
		t.Errorf("after retry, dead letters = %v, want %v", got, want)
	}

	if err := os.WriteFile(filepath.Join(work, "sluice.yaml"), []byte("source: {exclude: [\"bin.md\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := sluice(t, work, "failed", "retry", "docs"); code != exitOK || !strings.Contains(out, "no failed documents to retry with these settings; 3 failed entries are left as they are") {
		t.Errorf("retry with bin.md excluded: exit %d, %q %q; want nothing retried, saying 3 entries were left", code, out, errOut)
	}
	if _, errOut, code := sluice(t, work, "run", "docs"); code != exitOK {
		t.Fatalf("run with bin.md excluded: exit %d: %s", code, errOut)
	}
	// notes.txt is outside source.include: the run did not look at it.
	if got, want := deadLetters(t), []string{"notes.txt"}; !slices.Equal(got, want) {
		t.Errorf("after a full run, dead letters = %v, want %v", got, want)
	}
	// --include selects it for the retry, as it would for a run.
	if out, errOut, code := sluice(t, work, "failed", "retry", "docs", "--include", "**/*.txt", "--json"); code != exitOK || len(jsonLines(t, out)) != 1 || jsonLines(t, out)[0]["files_ingested"] != 1.0 {
		t.Errorf("retry --include '**/*.txt': exit %d, %q %q; want notes.txt ingested", code, out, errOut)
	}
	if got := deadLetters(t); len(got) != 0 {
		t.Errorf("after retry --include, dead letters = %v, want none", got)
	}
}

// TestFailedRetryNothingToRetryJSON: with nothing to retry, --json still
// prints a report (empty, complete) and --report still writes one, so that
// scripts reading them work whatever the dead-letter table holds.
func TestFailedRetryNothingToRetryJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha."})
	for _, setup := range []string{"no manifest", "no dead letters"} {
		if setup == "no dead letters" {
			if _, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
		}
		out, stderr, code := sluice(t, dir, "failed", "retry", "docs", "--json", "--report", "r.json")
		lines := jsonLines(t, out)
		if code != exitOK || len(lines) != 1 || lines[0]["complete"] != true || lines[0]["files_seen"] != 0.0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one complete, empty JSON report", setup, code, out, stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, "r.json"))
		if err != nil || !strings.Contains(string(data), `"complete": true`) {
			t.Errorf("%s: --report file %q, %v; want the empty report", setup, data, err)
		}
		os.Remove(filepath.Join(dir, "r.json"))
	}
}

// TestFailedRetryOtherFolder: `failed retry` pointed at a folder that holds
// none of the failed documents (the default source.dir instead of the
// folder the run read) is a usage error naming the folder, and leaves the
// dead letters' reasons and attempts as they were.
func TestFailedRetryOtherFolder(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, filepath.Join(work, "docs"), map[string]string{"a.md": "ok.", "bin.md": "x\x00y"})
	if _, _, code := sluice(t, work, "run", "docs"); code != exitPartial {
		t.Fatalf("first run: exit %d, want 3", code)
	}
	before := failureRecords(t)
	out, errOut, code := sluice(t, work, "failed", "retry")
	if code != exitUsage || !strings.Contains(errOut, "none of the 1 failed document to retry is under") || !strings.Contains(errOut, "sluice failed retry DIR") {
		t.Errorf("retry over the wrong folder: exit %d, %q %q; want 2 and the folder named", code, out, errOut)
	}
	if after := failureRecords(t); !slices.Equal(after, before) {
		t.Errorf("dead letters changed from %v to %v", before, after)
	}
}

// failureRecords lists the dead-letter table (see failures) as
// "id attempts reason" lines.
func failureRecords(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range failures(t) {
		out = append(out, fmt.Sprintf("%s %d %s", f.ID, f.Attempts, f.Reason))
	}
	return out
}

// TestFailedRetryKeepsGoneFiles: a failed document whose file `failed retry
// DIR` does not find stays failed, with its earlier chunks: DIR may not be
// the folder the failed run read, so a file missing there is not proof that
// it is gone (a run deletes a file that vanished while it was read only
// because its own walk listed it).
func TestFailedRetryKeepsGoneFiles(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	writeFiles(t, docs, map[string]string{"a.md": "Alpha text.", "b.md": "Bravo text."})
	if _, errOut, code := sluice(t, work, "run", "docs"); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	writeFiles(t, docs, map[string]string{"a.md": "x\x00a", "b.md": "x\x00b"})
	if _, _, code := sluice(t, work, "run", "docs"); code != exitPartial {
		t.Fatalf("second run: exit %d, want 3", code)
	}
	writeFiles(t, filepath.Join(work, "other"), map[string]string{"a.md": "Alpha text, fixed."})
	out, errOut, code := sluice(t, work, "failed", "retry", "other", "--json")
	if code != exitPartial {
		t.Fatalf("retry: exit %d, want 3 (b.md still failed): %s", code, errOut)
	}
	for _, want := range []string{`"files_ingested":1`, `"files_deleted":0`, `"files_failed":1`, "gone for good"} {
		if !strings.Contains(out, want) {
			t.Errorf("retry report lacks %s:\n%s", want, out)
		}
	}
	if got := deadLetters(t); !slices.Equal(got, []string{"b.md"}) {
		t.Errorf("dead letters = %v, want [b.md]", got)
	}
	st, err := state.Open(context.Background(), DefaultConfig().State.Path, sinkScope(DefaultConfig()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rec, _, err := st.Doc(context.Background(), "b.md"); err != nil || len(rec.NodeIDs) == 0 {
		t.Errorf("b.md's record lost its chunks (%d node ids, err %v); they stay until a run over the whole folder", len(rec.NodeIDs), err)
	}
}
