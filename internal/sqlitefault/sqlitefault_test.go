package sqlitefault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// coded is an error with an SQLite result code, as the driver's.
type coded int

func (c coded) Error() string { return fmt.Sprintf("sqlite error (%d)", int(c)) }
func (c coded) Code() int     { return int(c) }

// TestClassify maps SQLite result codes, primary and extended, bare and
// wrapped, to the fault of the file.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name  string
		err   error
		kind  Kind
		code  int
		notDB bool
	}{
		{"cantopen", coded(sqlite3.SQLITE_CANTOPEN), Access, sqlite3.SQLITE_CANTOPEN, false},
		{"cantopen (extended)", coded(sqlite3.SQLITE_CANTOPEN_ISDIR), Access, sqlite3.SQLITE_CANTOPEN, false},
		{"readonly", coded(sqlite3.SQLITE_READONLY), Access, sqlite3.SQLITE_READONLY, false},
		{"readonly (extended)", coded(sqlite3.SQLITE_READONLY_DBMOVED), Access, sqlite3.SQLITE_READONLY, false},
		{"readonly directory", coded(sqlite3.SQLITE_READONLY_DIRECTORY), Access, sqlite3.SQLITE_READONLY, false},
		{"perm", coded(sqlite3.SQLITE_PERM), Access, sqlite3.SQLITE_PERM, false},
		{"perm (wrapped)", fmt.Errorf("reading a.md: %w", coded(sqlite3.SQLITE_PERM)), Access, sqlite3.SQLITE_PERM, false},
		{"corrupt", coded(sqlite3.SQLITE_CORRUPT), Damaged, sqlite3.SQLITE_CORRUPT, false},
		{"corrupt (extended)", coded(sqlite3.SQLITE_CORRUPT_INDEX), Damaged, sqlite3.SQLITE_CORRUPT, false},
		{"not a database", coded(sqlite3.SQLITE_NOTADB), Damaged, sqlite3.SQLITE_NOTADB, true},
		{"not a database (joined)", errors.Join(errors.New("open"), coded(sqlite3.SQLITE_NOTADB)), Damaged, sqlite3.SQLITE_NOTADB, true},
		{"busy", coded(sqlite3.SQLITE_BUSY), None, sqlite3.SQLITE_BUSY, false},
		{"busy (extended)", coded(sqlite3.SQLITE_BUSY_SNAPSHOT), None, sqlite3.SQLITE_BUSY, false},
		{"full", coded(sqlite3.SQLITE_FULL), Full, sqlite3.SQLITE_FULL, false},
		{"full (wrapped)", fmt.Errorf("adding nodes: %w", coded(sqlite3.SQLITE_FULL)), Full, sqlite3.SQLITE_FULL, false},
		{"-shm not grown", coded(sqlite3.SQLITE_IOERR_SHMSIZE), Full, sqlite3.SQLITE_IOERR, false},
		{"-shm not grown (wrapped)", fmt.Errorf("begin: %w", coded(sqlite3.SQLITE_IOERR_SHMSIZE)), Full, sqlite3.SQLITE_IOERR, false},
		{"other I/O error", coded(sqlite3.SQLITE_IOERR_WRITE), None, sqlite3.SQLITE_IOERR, false},
		{"-shm not mapped", coded(sqlite3.SQLITE_IOERR_SHMMAP), None, sqlite3.SQLITE_IOERR, false},
		{"constraint", coded(sqlite3.SQLITE_CONSTRAINT_UNIQUE), None, sqlite3.SQLITE_CONSTRAINT, false},
		{"no code", errors.New("boom"), None, 0, false},
		{"context", context.Canceled, None, 0, false},
		{"nil", nil, None, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.kind {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.kind)
			}
			if got := Code(tt.err); got != tt.code {
				t.Errorf("Code(%v) = %d, want %d", tt.err, got, tt.code)
			}
			if got := NotADatabase(tt.err); got != tt.notDB {
				t.Errorf("NotADatabase(%v) = %v, want %v", tt.err, got, tt.notDB)
			}
		})
	}
}

// TestClassifyDriverError checks the classification on the driver's own
// error: a file that is not a SQLite database is Damaged.
func TestClassifyDriverError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(path, []byte("this is a text file, not a SQLite database, and long enough to have a header....."), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`SELECT count(*) FROM sqlite_master`)
	if err == nil {
		t.Fatal("reading a text file as a database succeeded")
	}
	if got := Classify(err); got != Damaged || !NotADatabase(err) {
		t.Errorf("Classify(%v) = %v, NotADatabase = %v; want damaged, true", err, got, NotADatabase(err))
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{None: "none", Access: "access", Damaged: "damaged", Full: "full", Kind(9): "none"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

// TestClassifyDriverFull checks the classification on the driver's own
// error for a database that cannot grow, as on a full disk: SQLite's
// max_page_count makes it fail with SQLITE_FULL ("database or disk is
// full"), the code a write that the file system refuses for want of room
// gets too.
func TestClassifyDriverFull(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // max_page_count is a setting of the connection
	if _, err := db.Exec(`CREATE TABLE t (b BLOB); PRAGMA max_page_count = 4`); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO t VALUES (zeroblob(1 << 20))`)
	if err == nil {
		t.Fatal("writing past max_page_count succeeded")
	}
	if got := Classify(err); got != Full || Code(err) != sqlite3.SQLITE_FULL {
		t.Errorf("Classify(%v) = %v (code %d), want full (%d)", err, got, Code(err), sqlite3.SQLITE_FULL)
	}
}

// TestCheckpoint checks that Checkpoint copies the -wal into the database
// file while a connection keeps it open (so that closing would not have
// done it): a copy of the database file alone, without its -wal, then
// holds the row written.
func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "wal.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	rows := func(t *testing.T) int {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(t.TempDir(), "copy.db")
		if err := os.WriteFile(copyPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := sql.Open("sqlite", copyPath)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
			return -1 // the table is only in the -wal
		}
		return n
	}
	if n := rows(t); n > 0 {
		t.Fatalf("the database file held %d rows before the checkpoint; the test needs them in the -wal", n)
	}
	if err := Checkpoint(ctx, db); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	if n := rows(t); n != 1 {
		t.Errorf("the database file holds %d rows after Checkpoint, want 1", n)
	}
}
