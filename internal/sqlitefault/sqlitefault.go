// Package sqlitefault classifies errors of the SQLite driver
// (modernc.org/sqlite) by whether the database file itself is at fault:
// not accessible (permissions, a read-only file system) or damaged (not a
// sound SQLite database). The local store and the incremental manifest
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
)

// String returns the name of the kind: "none", "access" or "damaged".
func (k Kind) String() string {
	switch k {
	case Access:
		return "access"
	case Damaged:
		return "damaged"
	}
	return "none"
}

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
// Damaged, or None for any other error.
func Classify(err error) Kind {
	switch Code(err) {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return Access
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return Damaged
	}
	return None
}

// NotADatabase reports whether err says the file is not a SQLite database
// at all (SQLITE_NOTADB), which may mean that another file was named by
// mistake rather than that the database was damaged.
func NotADatabase(err error) bool { return Code(err) == sqlite3.SQLITE_NOTADB }
