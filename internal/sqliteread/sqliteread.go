// Package sqliteread opens SQLite databases in WAL mode for reading only,
// for a process that may read a database file but perhaps not write it or
// its folder. The local store and the incremental manifest both read this
// way; this package is the one place that decides how.
//
// A reader of a WAL database needs the -shm file beside it. When a writer
// has the database open, the -shm and -wal files exist and a reader only
// needs to read them (SQLite uses a private copy of the -shm when it cannot
// write it); such a reader sees each committed transaction whole, as any
// other.
//
// A database at rest (no writer since the last one closed it) has neither
// file. Every SQLite connection, a read-only one included, creates them when
// it may write the folder; but only one that may write the database file
// removes them when it closes it, and files created by a process that may
// not are left behind as its own: a writer running as another user may not
// write them, and then fails as if the database were read-only. So a
// process that may not write the database file (ReadOnlyFile) does not
// create them, and one that may not write the folder cannot.
// Open then reads the database file as immutable (SQLite's immutable=1):
// without locks and without the -wal, which is safe only while no writer
// changes the file. It does so only when there is no -wal file, or an
// empty one: then the database file holds every committed transaction and
// no writer is using it. A writer that starts during such a read appends
// to a new -wal and does not touch the database file until it checkpoints
// (after about 1000 pages, or when it closes), so a short read sees the
// database as it was when it began; a long one that overlaps a checkpoint
// may fail as if the file were damaged (UnlockedError says to run the
// command again first), or miss or mix the writer's latest changes.
package sqliteread

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// Open opens the database at path for reading only: open(false) reads it
// with SQLite's locks; when that fails with an error for which isAccess
// reports true (the process may not create the -shm and -wal files) and no
// -wal file holds content, open(true) reads it as immutable. When that
// fails for want of access too, Open returns the first error, which says
// more. A database at rest (no -shm file, and no -wal file or an empty
// one) that this process may not write (ReadOnlyFile) is read as immutable
// at once, so that no -shm or -wal file is left behind.
func Open[T any](path string, open func(unlocked bool) (T, error), isAccess func(error) bool) (T, error) {
	if readOnlyFile(path) && walEmpty(path) && !exists(path+"-shm") {
		db, err := open(true)
		if err != nil && isAccess(err) {
			return open(false) // its error says more
		}
		return db, err
	}
	db, err := open(false)
	if err == nil || !isAccess(err) || !walEmpty(path) {
		return db, err
	}
	db, uerr := open(true)
	if uerr != nil && isAccess(uerr) {
		return db, err
	}
	return db, uerr
}

// ReadOnlyFile reports whether this process may read the database file at
// path but not write it: its permissions (on Windows, its read-only
// attribute), or a read-only file system. It is false when the process may
// write the file, may not read it, or the file does not exist. A program
// that reads such a file should open it with Open at once rather than try
// to open it for writing first: that fails, but only after SQLite has
// created the -shm and -wal files of a database at rest, which it cannot
// remove (see the package documentation).
func ReadOnlyFile(path string) bool { return readOnlyFile(path) }

// Unwritable returns the -wal and -shm files of the database at path that
// exist and that this process may not write: left by a connection of
// another user (a reader that could create them but not remove them, as
// Sluice readers did before they read such files as immutable). A writer
// cannot open the database while they are there, and SQLite's error names
// only the database, so a writer's error names them.
func Unwritable(path string) []string {
	var files []string
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if unwritable(f) {
			files = append(files, f)
		}
	}
	return files
}

// unwritable is fileUnwritable; a variable so that tests can replace it.
var unwritable = fileUnwritable

// readOnlyFile is fileReadOnly; a variable so that tests can replace it.
var readOnlyFile = fileReadOnly

// exists reports whether a file exists at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// walEmpty reports whether the database at path has no -wal file, or an
// empty one: the database file then holds every committed transaction.
func walEmpty(path string) bool {
	fi, err := os.Stat(path + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && fi.Size() == 0
}

// DSN returns the data source name that reads the database at the
// absolute path for reading only: mode=ro, so that SQLite writes nothing
// to the database file; with unlocked, immutable=1 as well; and the given
// _pragma settings (such as "busy_timeout(10000)"). Like the writers' own,
// it escapes the path so that a '?' or '#' in a file name is not taken for
// the URI's query or fragment.
func DSN(path string, unlocked bool, pragmas ...string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Set("mode", "ro")
	if unlocked {
		q.Set("immutable", "1")
	}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// UnlockedError is an error that shows a damaged database file, met by a
// reader that read it as immutable (Open's unlocked): a writer that started
// during the read, and checkpointed its changes into the file under the
// reader, shows the same way, so the message says to try again first.
type UnlockedError struct{ Err error }

// Error returns Err's message and says why it may be stale and what to do.
func (e *UnlockedError) Error() string {
	return e.Err.Error() + " (read without locks, as this process may not write the folder: " +
		"if a writer started meanwhile, run the command again first)"
}

// Unwrap returns the damaged-file error.
func (e *UnlockedError) Unwrap() error { return e.Err }
