package state

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// builtManifest writes a closed manifest of scope "x" with a document and
// a dead letter into a new folder and returns its path.
func builtManifest(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, "x")
	if err != nil {
		t.Fatal(err)
	}
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n1")
	if err := s.Fail(ctx, "b.md", "empty file", time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenReadOnlyReads: a manifest opened for reading only (with SQLite's
// locks, and as immutable, as a reader that may not write the folder opens
// one at rest) answers reads, refuses every write with a *FileError naming
// the file and state.path, takes no lock, and leaves the file as it was.
func TestOpenReadOnlyReads(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		unlocked bool
	}{
		{"locked", false},
		{"immutable", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := builtManifest(t)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var s *Store
			if tt.unlocked {
				s, err = openReaderMode(ctx, path, "x", true)
			} else {
				s, err = OpenReadOnly(ctx, path, "x")
			}
			if err != nil {
				t.Fatal(err)
			}
			if d, ok, err := s.Doc(ctx, "a.md"); !ok || err != nil || d.Hash != "h" || !slices.Equal(d.NodeIDs, []string{"n1"}) {
				t.Errorf("Doc(a.md) = %+v, %v, %v", d, ok, err)
			}
			if f, err := s.Failures(ctx); err != nil || len(f) != 1 || f[0].ID != "b.md" {
				t.Errorf("Failures = %v, %v; want b.md", f, err)
			}
			writes := map[string]error{
				"Fail":         s.Fail(ctx, "c.md", "x", time.Now()),
				"Forget":       s.Forget(ctx, "a.md"),
				"Drop":         s.Drop(ctx),
				"SetEmbedder":  s.SetEmbedder(ctx, Embedder{Provider: "hash", Dimensions: 2}),
				"ClearFailure": s.ClearFailure(ctx, "b.md"),
			}
			_, writes["Begin"] = s.Begin(ctx)
			for name, err := range writes {
				if !errors.Is(err, ErrAccess) || !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), path+" (state.path)") {
					t.Errorf("%s = %v; want ErrAccess and ErrReadOnly naming %s (state.path)", name, err, path)
				}
			}
			if s.lock != nil {
				t.Error("a reader took the write lock")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("a reader changed the state file")
			}
		})
	}
}

// TestOpenReadOnlyRefuses: manifests a reader cannot read as they are are
// errors naming the file, state.path and the remedy, and are left alone:
// a reader neither creates a manifest nor upgrades one.
func TestOpenReadOnlyRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		setup string // statements creating the file; "" for no file
		is    error
		want  string
	}{
		{"missing", "", fs.ErrNotExist, "set state.path to the manifest's file"},
		{"no tables", `CREATE TABLE other (x)`, ErrSchema, "(state.path) has no manifest tables"},
		{"schema 1", `CREATE TABLE docs (scope, id)`, ErrSchema, "older Sluice (schema 1, want 5), which this one cannot upgrade"},
		{"schema 2", `CREATE TABLE docs (scope, id); PRAGMA user_version = 2`, ErrSchema, "older Sluice (schema 2, want 5): let a user who may write it upgrade it"},
		{"schema 3", `CREATE TABLE docs (scope, id); PRAGMA user_version = 3`, ErrSchema, "older Sluice (schema 3, want 5): let a user who may write it upgrade it"},
		{"schema 4", `CREATE TABLE docs (scope, id); PRAGMA user_version = 4`, ErrSchema, "older Sluice (schema 4, want 5): let a user who may write it upgrade it"},
		{"newer", `CREATE TABLE docs (scope, id); PRAGMA user_version = 9`, ErrSchema, "newer Sluice (schema 9, want 5): upgrade sluice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			var before []byte
			if tt.setup != "" {
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				_, err = db.Exec(tt.setup)
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
				if before, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			s, err := OpenReadOnly(ctx, path, "x")
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenReadOnly = %v; want %v naming %s and saying %q", err, tt.is, path, tt.want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("a reader changed or created the state file")
			}
		})
	}
}
