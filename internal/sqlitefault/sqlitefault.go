// Package sqlitefault classifies errors of the SQLite driver
// (modernc.org/sqlite) by whether the database file itself is at fault:
// not accessible (permissions, a read-only file system), damaged (not a
// sound SQLite database) or on a full disk. The local store and the incremental manifest
// both report such errors as a *FileError of their own; this package is
// the one place that decides which result codes mean what.
package sqlitefault

import (
	"context"
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Kind is the fault of the database file that an error shows.
type Kind int

// The kinds of fault.
const (
	// None means the error is not the file's fault (or has no SQLite
	// result code): a busy database, a constraint, a cancelled context.
	None Kind = iota
	// Access means the file cannot be opened or written: its permissions,
	// its folder's, or a read-only file system (SQLITE_CANTOPEN,
	// SQLITE_READONLY, SQLITE_PERM and their extended codes).
	Access
	// Damaged means the file is not a sound SQLite database: overwritten,
	// truncated, or another kind of file (SQLITE_CORRUPT, SQLITE_NOTADB and
	// their extended codes).
	Damaged
	// Full means the disk (the file system) holding the file, its -wal or
	// its -journal has no room for a write (SQLITE_FULL), or none to grow
	// its -shm (SQLITE_IOERR_SHMSIZE): the file is sound, and the write is
	// rolled back whole.
	Full
)

// String returns the name of the kind: "none", "access", "damaged" or
// "full".
func (k Kind) String() string {
	switch k {
	case Access:
		return "access"
	case Damaged:
		return "damaged"
	case Full:
		return "full"
	}
	return "none"
}

// FullRemedy says what to do about a Full fault of a database file (the
// local store's or the manifest's), after the words that name the file and
// say that the disk holding it is full: SQLite rolled the write back whole,
// so nothing written before it is lost.
const FullRemedy = "free space on it (not by deleting the file's -wal, which holds its latest writes) and run again: " +
	"what was written is kept, and the next run (or a watch's next retry) takes up where this one stopped"

// coder is implemented by the driver's errors (*sqlite.Error).
type coder interface{ Code() int }

var _ coder = (*sqlite.Error)(nil)

// Code returns the primary SQLite result code of the first error in err's
// tree that has one (extended codes reduced to their primary code), or 0
// when none has.
func Code(err error) int { return extendedCode(err) & 0xff }

// extendedCode returns the SQLite result code, extended if it is, of the
// first error in err's tree that has one, or 0 when none has.
func extendedCode(err error) int {
	var c coder
	if errors.As(err, &c) {
		return c.Code()
	}
	return 0
}

// Classify returns the fault of the database file that err shows: Access,
// Damaged, Full, or None for any other error.
func Classify(err error) Kind {
	switch Code(err) {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return Access
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return Damaged
	case sqlite3.SQLITE_FULL:
		return Full
	case sqlite3.SQLITE_IOERR:
		// The one I/O error a full disk causes that SQLite does not report
		// as SQLITE_FULL: growing the -shm file (by writing a byte at the
		// end of each new page) failed.
		if extendedCode(err) == sqlite3.SQLITE_IOERR_SHMSIZE {
			return Full
		}
	}
	return None
}

// NotADatabase reports whether err says the file is not a SQLite database
// at all (SQLITE_NOTADB), which may mean that another file was named by
// mistake rather than that the database was damaged.
func NotADatabase(err error) bool { return Code(err) == sqlite3.SQLITE_NOTADB }

// CheckpointRemedy says what a Full fault of the last checkpoint of a
// database file (Checkpoint, run as it is closed) means and what to do,
// after the words that name the file and say that the disk holding it is
// full: every write is kept in the file's -wal, and the next open copies
// it into the file once there is room.
const CheckpointRemedy = "nothing is lost: its latest writes stay in its -wal file, which the next sluice command that writes it (a run, a watch) copies into it once there is room; " +
	"free space on it (not by deleting the -wal)"

// Checkpoint copies what db's -wal holds into the database file, as
// closing the last connection does, but reports a failure, which closing
// would ignore: a full disk then leaves the -wal in place, sound, for the
// next open to copy. It is a passive checkpoint: it neither waits for nor
// disturbs other processes reading the file, and a part they still read
// is left for later, which is not an error.
func Checkpoint(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	return err
}
