package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluice-dev/sluice/sink"
)

// coded is an error with an SQLite result code, as the driver's.
type coded int

func (c coded) Error() string { return fmt.Sprintf("sqlite error (%d)", int(c)) }
func (c coded) Code() int     { return int(c) }

// TestFileErrorsSayWhatToDo checks the message of each kind of file fault:
// it names the file and sink.local.path and says what to do. Which result
// codes make which fault (extended and wrapped ones too) is tested once, in
// internal/sqlitefault.
func TestFileErrorsSayWhatToDo(t *testing.T) {
	s := &Store{path: "/data/index.db"}
	for _, tt := range []struct {
		name string
		err  error
		kind error // nil: not the file's fault
		say  string
	}{
		{"cantopen", coded(sqlite3.SQLITE_CANTOPEN), ErrAccess, "check the permissions of /data/index.db (sink.local.path)"},
		{"readonly", coded(sqlite3.SQLITE_READONLY), ErrAccess, "check the permissions of /data/index.db (sink.local.path)"},
		{"corrupt", coded(sqlite3.SQLITE_CORRUPT), ErrDamaged, "local: count nodes in /data/index.db: sqlite error (11); /data/index.db (sink.local.path) is damaged: delete it (`sluice index delete`, with this command's --config if it has one) and run again, or set sink.local.path to a new file"},
		{"not a database", coded(sqlite3.SQLITE_NOTADB), ErrDamaged, "(sink.local.path) is damaged or not a SQLite database"},
		{"busy", coded(sqlite3.SQLITE_BUSY), nil, "local: count nodes in /data/index.db: sqlite error (5)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.wrap("count nodes", tt.err)
			if tt.kind == nil {
				var fe *FileError
				if errors.As(err, &fe) || err.Error() != tt.say {
					t.Errorf("wrap = %v, want %q", err, tt.say)
				}
				return
			}
			if !errors.Is(err, tt.kind) || !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.say) {
				t.Errorf("wrap = %v; want %v saying %q", err, tt.kind, tt.say)
			}
		})
	}
}

// TestDamagedStore overwrites a store's pages with garbage: Open, or the
// first read or write, fails with ErrDamaged naming the file, its setting
// and `sluice index delete`.
func TestDamagedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		mustAdd(t, s, node(fmt.Sprint("n", i), fmt.Sprint("d", i), strings.Repeat("some words ", 200), 1, 2))
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[pageSize:], bytes.Repeat([]byte{0xA5}, len(data)-pageSize))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	s, err = Open(ctx, Config{Path: path})
	if err == nil {
		defer s.Close()
		if _, err = s.GetNodes(ctx, nil, nil, 0); err == nil {
			_, err = s.Add(ctx, []sink.Node{node("x", "d", "t", 1, 2)})
		}
	}
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" (sink.local.path) is damaged") || !strings.Contains(err.Error(), "`sluice index delete`") {
		t.Fatalf("damaged store: %v; want ErrDamaged naming %s, sink.local.path and `sluice index delete`", err, path)
	}
}

// TestUnwritableFolder: a store in a folder the process cannot write is a
// matter of permissions.
func TestUnwritableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any folder")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "index.db")
	s, err := Open(context.Background(), Config{Path: path})
	if err == nil {
		s.Close()
		t.Fatal("Open in a read-only folder succeeded")
	}
	if !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), "check the permissions of "+path+" (sink.local.path)") {
		t.Fatalf("Open = %v; want ErrAccess saying to check the permissions of %s", err, path)
	}
}

// TestUnwritableWALFiles: an access error names the -wal and -shm files
// this process may not write, except a write refused because the store was
// opened for reading only, whose cause is not those files.
func TestUnwritableWALFiles(t *testing.T) {
	saved := unwritable
	t.Cleanup(func() { unwritable = saved })
	unwritable = func(path string) []string { return []string{path + "-wal", path + "-shm"} }
	const stuck = "/data/index.db-wal and /data/index.db-shm belong to another user"
	for _, tt := range []struct {
		name string
		err  error
		want bool // the message names the files
	}{
		{"access", coded(sqlite3.SQLITE_READONLY), true},
		{"opened for reading only", readOnlyError{}, false},
	} {
		err := asFileError("/data/index.db", "add nodes", tt.err)
		if err == nil || !errors.Is(err, ErrAccess) || strings.Contains(err.Error(), stuck) != tt.want {
			t.Errorf("%s: asFileError = %v; want ErrAccess, naming the files: %v", tt.name, err, tt.want)
		}
	}
}
