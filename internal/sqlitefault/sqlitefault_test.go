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
