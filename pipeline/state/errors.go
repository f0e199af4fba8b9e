package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/internal/sqlitefault"
	"github.com/sluice-dev/sluice/internal/sqliteread"
)

// Sentinel errors of the state file itself; *FileError wraps them.
var (
	// ErrAccess marks a state file that cannot be opened or written: its
	// permissions, its folder's, or a read-only file system.
	ErrAccess = errors.New("state: state file not accessible")
	// ErrDamaged marks a state file that is not a sound SQLite database:
	// overwritten, truncated, or another kind of file.
	ErrDamaged = errors.New("state: state file damaged")
	// ErrFull marks a write refused because the disk holding the state
	// file has no room left: the file is sound, the write rolled back.
	ErrFull = errors.New("state: disk of the state file full")
)

// FileError reports a problem of the state file rather than of a document:
// it names the file and the state.path setting and says what to do. It
// unwraps to Kind (ErrAccess, ErrDamaged or ErrFull) and to the driver's
// error.
type FileError struct {
	Path string // the state file (absolute)
	Op   string // what failed, such as "reading" ("" when it is not known)
	Err  error  // the driver's error
	Kind error  // ErrAccess, ErrDamaged or ErrFull
	// Unwritable lists, for ErrAccess, the file's -wal and -shm files that
	// this process may not write (sqliteread.Unwritable).
	Unwritable []string
}

// newFileError returns the *FileError of err, a fault of kind of the
// state file at path.
func newFileError(path, op string, err, kind error) *FileError {
	e := &FileError{Path: path, Op: op, Err: err, Kind: kind}
	if kind == ErrAccess {
		e.Unwritable = sqliteread.Unwritable(path)
	}
	return e
}

// Error returns the message of the FileError.
func (e *FileError) Error() string {
	what := e.Path
	if e.Op != "" {
		what = e.Op + " " + what
	}
	switch {
	case e.Kind == ErrDamaged && sqlitefault.NotADatabase(e.Err):
		// Maybe another file named by mistake: not to be deleted blindly.
		return fmt.Sprintf("state: %s: %v; %s (state.path) is damaged or not a SQLite database: if it is the state file, delete it and run with --full; otherwise set state.path to a new file", what, e.Err, e.Path)
	case e.Kind == ErrDamaged:
		return fmt.Sprintf("state: %s: %v; %s (state.path) is damaged: delete it and run with --full, or set state.path to a new file", what, e.Err, e.Path)
	case e.Kind == ErrFull && e.Op == opCheckpoint:
		return fmt.Sprintf("state: %s: %v; the disk holding %s (state.path) is full: %s", what, e.Err, e.Path, sqlitefault.CheckpointRemedy)
	case e.Kind == ErrFull:
		return fmt.Sprintf("state: %s: %v; the disk holding %s (state.path) is full: %s", what, e.Err, e.Path, sqlitefault.FullRemedy)
	}
	if len(e.Unwritable) > 0 {
		return fmt.Sprintf("state: %s: %v; %s belong to another user or are read-only (left by a sluice run as another user): "+
			"when no sluice is running, delete them or give them to this user", what, e.Err, strings.Join(e.Unwritable, " and "))
	}
	return fmt.Sprintf("state: %s: %v; check the permissions of %s (state.path) and of its folder", what, e.Err, e.Path)
}

// Unwrap returns Kind and Err.
func (e *FileError) Unwrap() []error { return []error{e.Kind, e.Err} }

// opCheckpoint is the Op of a *FileError of the last checkpoint (Close).
const opCheckpoint = "last checkpoint of"

// checkpoint is sqlitefault.Checkpoint; a variable so that tests can make
// it fail as on a full disk.
var checkpoint = sqlitefault.Checkpoint

// fileFault classifies a database error (see sqlitefault.Classify):
// ErrAccess for permissions, ErrDamaged for a damaged file, ErrFull for a
// full disk, nil for anything else.
func fileFault(err error) error {
	switch sqlitefault.Classify(err) {
	case sqlitefault.Access:
		return ErrAccess
	case sqlitefault.Damaged:
		return ErrDamaged
	case sqlitefault.Full:
		return ErrFull
	}
	return nil
}

// fail wraps an error of the database: a *FileError when the file itself is
// at fault, else the error with the package prefix.
func (s *Store) fail(err error) error {
	if s.unlocked && fileFault(err) == ErrDamaged {
		err = &sqliteread.UnlockedError{Err: err}
	}
	if kind := fileFault(err); kind != nil {
		return newFileError(s.path, "", err, kind)
	}
	return fmt.Errorf("state: %w", err)
}

// fileError wraps an error of opening the file: what was being done, the
// file, and hint for errors that are not the file's fault.
func (s *Store) fileError(op string, err error, hint string) error {
	if kind := fileFault(err); kind != nil {
		return newFileError(s.path, op, err, kind)
	}
	if hint != "" {
		return fmt.Errorf("state: %s %s (%s): %w", op, s.path, hint, err)
	}
	return fmt.Errorf("state: %s %s: %w", op, s.path, err)
}
