// Package sqlitefault classifies errors of the SQLite driver
// (modernc.org/sqlite) by whether the database file itself is at fault:
// not accessible (permissions, a read-only file system), damaged (not a
// sound SQLite database) or on a full disk. The local store and the incremental manifest
// both report such errors as a *FileError of their own; this package is
// the one place that decides which result codes mean what.
package sqlitefault

import (
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
	// its -journal has no room for a write (SQLITE_FULL): the file is sound,
	// and the write is rolled back whole.
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
func Code(err error) int {
	var c coder
	if errors.As(err, &c) {
		return c.Code() & 0xff
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
	}
	return None
}

// NotADatabase reports whether err says the file is not a SQLite database
// at all (SQLITE_NOTADB), which may mean that another file was named by
// mistake rather than that the database was damaged.
func NotADatabase(err error) bool { return Code(err) == sqlite3.SQLITE_NOTADB }
