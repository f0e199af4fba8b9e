package local

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluice-dev/sluice/sink"
)

// builtStore writes a closed store with two nodes into a new folder and
// returns its path.
func builtStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, node("a", "a.md", "pelicans fish", 1, 0), node("b", "b.md", "herons wade", 0, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenReadOnlyReads: a store opened for reading only (with SQLite's
// locks, and as immutable, as a reader that may not write the folder
// opens a store at rest) answers every read, refuses every write with a
// *FileError naming the file and sink.local.path, and leaves the database
// file as it was.
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
			path := builtStore(t)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var s *Store
			if tt.unlocked {
				s, err = openReaderMode(ctx, path, true)
			} else {
				s, err = OpenReadOnly(ctx, Config{Path: path})
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.ReadOnly() || s.Dimensions() != 2 {
				t.Errorf("ReadOnly %v, Dimensions %d; want true, 2", s.ReadOnly(), s.Dimensions())
			}
			if n, err := s.Count(ctx); n != 2 || err != nil {
				t.Errorf("Count = %d, %v; want 2", n, err)
			}
			res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "herons", TopK: 5})
			if err != nil || len(res) != 1 || res[0].ID != "b" {
				t.Errorf("sparse query = %v, %v; want b", scoredIDs(res), err)
			}
			writes := map[string]error{
				"Delete":         s.Delete(ctx, "a.md"),
				"DeleteNodes":    s.DeleteNodes(ctx, []string{"a"}),
				"DeleteDocs":     s.DeleteDocs(ctx, []string{"a.md"}),
				"UpdateMetadata": s.UpdateMetadata(ctx, []sink.Node{node("a", "a.md", "", 1, 0)}),
			}
			_, writes["Add"] = s.Add(ctx, []sink.Node{node("c", "c.md", "storks", 1, 1)})
			for name, err := range writes {
				if !errors.Is(err, ErrAccess) || !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), path+" (sink.local.path)") {
					t.Errorf("%s = %v; want ErrAccess and ErrReadOnly naming %s (sink.local.path)", name, err, path)
				}
			}
			if n, _ := s.Count(ctx); n != 2 {
				t.Errorf("after the refused writes, %d nodes; want 2", n)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("a reader changed the database file")
			}
		})
	}
}

// TestOpenReadOnlyRefuses: stores a reader cannot use are errors naming
// the file, sink.local.path and the remedy; a reader creates no store.
func TestOpenReadOnlyRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, path string) // nil: no file
		is    error
		want  string
	}{
		{"missing", nil, fs.ErrNotExist, "set sink.local.path to the store's file, or build the store with `sluice run`"},
		{"not set up", func(t *testing.T, path string) { sqlExec(t, path, `CREATE TABLE other (x)`) },
			ErrSchema, "(sink.local.path) has no Sluice tables"},
		{"newer schema", func(t *testing.T, path string) {
			sqlExec(t, path, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '99')`)
		}, ErrSchema, "(sink.local.path) has schema version 99, newer than this Sluice understands (1): upgrade sluice"},
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not sqlite "), 1000), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrDamaged, "(sink.local.path) is damaged or not a SQLite database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "index.db")
			if tt.setup != nil {
				tt.setup(t, path)
			}
			s, err := OpenReadOnly(ctx, Config{Path: path})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenReadOnly = %v; want %v naming %s and saying %q", err, tt.is, path, tt.want)
			}
			if tt.setup == nil {
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("a reader created %v", entries)
				}
			}
		})
	}
}

// TestOpenWritable: Open of a store the process may write opens it for
// writing.
func TestOpenWritable(t *testing.T) {
	if s := openTest(t); s.ReadOnly() {
		t.Error("ReadOnly = true for a store opened by Open; want false")
	}
}

// TestUnlockedReadDamage: a damaged-file error of a store read without
// locks says that a writer that started meanwhile can cause it, and stays
// ErrDamaged.
func TestUnlockedReadDamage(t *testing.T) {
	s := &Store{path: "/data/index.db", unlocked: true}
	err := s.wrap("count nodes", coded(sqlite3.SQLITE_CORRUPT))
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "run the command again first") {
		t.Errorf("wrap = %v; want ErrDamaged saying to run the command again first", err)
	}
}

// sqlExec runs statements on a new database file at path.
func sqlExec(t *testing.T, path, stmts string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
}
