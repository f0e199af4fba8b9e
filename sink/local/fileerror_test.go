package local

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluice-dev/sluice/internal/testenv"
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
		{"full", coded(sqlite3.SQLITE_FULL), ErrFull, "local: count nodes in /data/index.db: sqlite error (13); the disk holding /data/index.db (sink.local.path) is full: free space on it (not by deleting the file's -wal"},
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

// TestFullDisk: an Add into a store whose disk is full fails with ErrFull
// and sink.ErrUnavailable (a pipeline stops rather than fail every
// document), naming the file and sink.local.path once and saying to free
// space; nothing of the batch is written and nothing written before is
// lost, and once there is room the same Add succeeds.
func TestFullDisk(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, node("n0", "d0", "the first node", 1, 2))
	testenv.LimitPages(t, s.db, 2)
	batch := make([]sink.Node, 20)
	for i := range batch {
		batch[i] = node(fmt.Sprint("n", i+1), fmt.Sprint("d", i+1), strings.Repeat(fmt.Sprint("words of node ", i, " "), 300), 1, 2)
	}
	_, err := s.Add(ctx, batch)
	if err == nil {
		t.Fatal("Add into a full store succeeded")
	}
	msg := err.Error()
	if !errors.Is(err, ErrFull) || !errors.Is(err, sink.ErrUnavailable) {
		t.Errorf("Add = %v; want ErrFull and sink.ErrUnavailable", err)
	}
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != len(batch) {
		t.Errorf("Add = %v; want a *sink.WriteError failing the %d nodes", err, len(batch))
	}
	for _, want := range []string{"transaction rolled back, no node of the batch of 20 was written: ", "database or disk is full (13); ",
		"the disk holding " + s.Path() + " (sink.local.path) is full: free space on it", "-wal"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Add = %s\nwant it to say %q", msg, want)
		}
	}
	if n := strings.Count(msg, "local: "); n != 1 {
		t.Errorf("Add = %s\nwant one \"local: \", not %d", msg, n)
	}
	if n, err := s.Count(ctx); err != nil || n != 1 {
		t.Errorf("Count = %d, %v after the failed Add; want 1", n, err)
	}
	testenv.LimitPages(t, s.db, 1<<20) // space freed
	if _, err := s.Add(ctx, batch); err != nil {
		t.Fatalf("Add once there is room: %v", err)
	}
	var check string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	if n, err := s.Count(ctx); err != nil || n != 21 {
		t.Errorf("Count = %d, %v; want 21", n, err)
	}
}

// TestCloseReportsAFullLastCheckpoint: when a full disk keeps Close's last
// checkpoint from copying the -wal into the database file, Close says so
// (ErrFull, naming the file and its setting, saying that nothing is lost)
// and the store reopens with every node; any other failure of the
// checkpoint (another process reading) is not reported.
func TestCloseReportsAFullLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		err  error // of the checkpoint
		want []string
	}{
		{"full", coded(sqlite3.SQLITE_FULL), []string{"local: last checkpoint in ", "sqlite error (13); the disk holding ", " (sink.local.path) is full: nothing is lost: its latest writes stay in its -wal file"}},
		{"busy", coded(sqlite3.SQLITE_BUSY), nil},
		{"done", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			s, err := Open(ctx, Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			mustAdd(t, s, node("n0", "d0", "the only node", 1, 2))
			calls := 0
			real := checkpoint
			checkpoint = func(ctx context.Context, db *sql.DB) error {
				calls++
				if tt.err != nil {
					return tt.err
				}
				return real(ctx, db)
			}
			defer func() { checkpoint = real }()
			err = s.Close()
			if calls != 1 {
				t.Errorf("Close checkpointed %d times, want 1", calls)
			}
			if tt.want == nil {
				if err != nil {
					t.Errorf("Close = %v, want nil", err)
				}
			} else {
				var fe *FileError
				if !errors.Is(err, ErrFull) || !errors.As(err, &fe) || fe.Path != path {
					t.Errorf("Close = %v; want a *FileError of ErrFull for %s", err, path)
				}
				for _, w := range tt.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("Close = %v\nwant it to say %q", err, w)
					}
				}
			}
			if err := s.Close(); (err == nil) != (tt.want == nil) {
				t.Errorf("second Close = %v, want the first's result", err)
			}
			checkpoint = real
			r, err := Open(ctx, Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if n, err := r.Count(ctx); err != nil || n != 1 {
				t.Errorf("Count after reopening = %d, %v; want 1", n, err)
			}
		})
	}
}

// TestReadOnlyCloseDoesNotCheckpoint: a store opened to be read leaves the
// -wal to its writer.
func TestReadOnlyCloseDoesNotCheckpoint(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, node("n0", "d0", "the only node", 1, 2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	real := checkpoint
	checkpoint = func(context.Context, *sql.DB) error {
		t.Error("a read-only store checkpointed on Close")
		return nil
	}
	defer func() { checkpoint = real }()
	if err := r.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
