package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink/local"
)

// TestReadersCreateNothing: the commands that only read the index or the
// manifest create neither. Without a store they say how to build one;
// without a manifest they see an empty one, and a dry run plans every
// document as new.
func TestReadersCreateNothing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n"})
	tests := []struct {
		args []string
		code int
		want string // in stdout, or in stderr when code is not 0
	}{
		{[]string{"query", "pelicans"}, exitFatal, "does not exist yet: run `sluice run`"},
		// A mode the local store lacks is a usage error, store or not.
		{[]string{"query", "pelicans", "--mode", "semantic_hybrid"}, exitUsage, "semantic_hybrid: the local store has no semantic ranker"},
		{[]string{"get"}, exitFatal, "does not exist yet: run `sluice run`"},
		{[]string{"delete", "--doc-id", "a.md"}, exitFatal, "does not exist yet: run `sluice run`"},
		{[]string{"index", "stats"}, exitFatal, "does not exist yet: run `sluice run`"},
		{[]string{"failed", "list"}, exitOK, "no failed documents"},
		{[]string{"failed", "retry", "docs", "--dry-run"}, exitOK, "no failed documents"},
		// A writer, but with nothing to retry it has nothing to create.
		{[]string{"failed", "retry", "docs"}, exitOK, "no failed documents"},
		{[]string{"run", "docs", "--dry-run", "--json"}, exitOK, `"files_added":1`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := sluice(t, dir, tt.args...)
			got := out
			if tt.code != exitOK {
				got = errOut
			}
			if code != tt.code || !strings.Contains(got, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.code, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ".sluice")); !os.IsNotExist(err) {
				t.Fatalf(".sluice exists after %v (%v): a reader created the store or the manifest", tt.args, err)
			}
		})
	}
}

// TestDeleteUnknownDocument: deleting a document the manifest does not know
// says so, with a hint about document ids, instead of claiming a delete; a
// document the manifest knows only as a dead letter is known.
func TestDeleteUnknownDocument(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md":     "Alpha document about pelicans.\n",
		"docs/empty.md": "", // a dead letter: it never had a record
	})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitPartial {
		t.Fatalf("run: exit %d, want 3 (empty.md failed): %s", code, errOut)
	}
	for _, tt := range []struct{ id, want string }{
		{"docs/a.md", "is not in the manifest"},
		{"a.md", "deleted the nodes of document"},
		{"empty.md", "deleted the nodes of document"},
	} {
		if out, errOut, code := sluice(t, dir, "delete", "--doc-id", tt.id); code != exitOK || !strings.Contains(out, tt.want) {
			t.Errorf("delete --doc-id %s: exit %d, %q %q; want %q", tt.id, code, out, errOut, tt.want)
		}
	}
	if out, _, _ := sluice(t, dir, "failed", "list"); !strings.Contains(out, "no failed documents") {
		t.Errorf("after deleting empty.md, failed list says %q; want its dead letter gone", out)
	}
}

// TestDryRunFullPlansForgottenDocuments: after the manifest is lost, `run
// --dry-run --full` plans the removal of a local store's document whose
// file is gone, as `run --full` then does, and removes nothing itself.
func TestDryRunFullPlansForgottenDocuments(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha document about pelicans.\n",
		"docs/b.md": "Bravo document about herons.\n",
	})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	for _, p := range []string{".sluice/state.db", "docs/b.md"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"run", "docs", "--full", "--dry-run", "--json"},
		{"run", "docs", "--full", "--json"},
	} {
		out, errOut, code := sluice(t, dir, args...)
		if code != exitOK || !strings.Contains(out, `"files_deleted":1`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want b.md deleted", args, code, out, errOut)
		}
		got, _, _ := sluice(t, dir, "get", "--json")
		if wantB := args[3] == "--dry-run"; strings.Contains(got, `"doc_id":"b.md"`) != wantB {
			t.Errorf("after %v, b.md in the store: %v; want %v", args, !wantB, wantB)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "state.db")); err != nil {
		t.Errorf("the run after the dry run wrote no manifest: %v", err)
	}
}

// TestReadersOnFullDisk: on a full disk, where opening the store or the
// manifest for writing fails (it writes their schema), the commands that
// only read them still work, reading them for reading only.
func TestReadersOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n", "docs/bad.md": "PK\x03\x04\x00\x00binary"})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitPartial {
		t.Fatalf("run: exit %d, stderr %q", code, errOut)
	}
	full := errors.New("database or disk is full (13)")
	saveLocal, saveState := openLocal, openState
	defer func() { openLocal, openState = saveLocal, saveState }()
	openLocal = func(_ context.Context, cfg local.Config) (*local.Store, error) {
		return nil, &local.FileError{Path: cfg.Path, Op: "open", Err: full, Kind: local.ErrFull}
	}
	openState = func(_ context.Context, path, _ string) (*state.Store, error) {
		return nil, &state.FileError{Path: path, Op: "preparing", Err: full, Kind: state.ErrFull}
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"failed", "list"}, exitOK, "bad.md"},
		{[]string{"run", "docs", "--dry-run"}, exitPartial, "Dry run over 2 files (0 new, 0 changed, 1 unchanged"},
		{[]string{"run", "docs", "--dry-run", "--verify"}, exitPartial, "Dry run over 2 files"},
		{[]string{"get", "--doc-id", "a.md"}, exitOK, "pelicans"},
		{[]string{"query", "pelicans"}, exitOK, "a.md"},
		{[]string{"index", "stats"}, exitOK, "nodes       1"},
		{[]string{"doctor"}, exitOK, "✓ manifest"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := sluice(t, dir, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.code, tt.want)
			}
		})
	}
}
