package local

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/internal/sqlitefault"
	"github.com/sluice-dev/sluice/internal/sqliteread"
	"github.com/sluice-dev/sluice/sink"
)

var (
	// ErrClosed is returned by every method of a Store after Close.
	ErrClosed = errors.New("local: store is closed")
	// ErrInvalidNode marks a node Add refuses before writing anything;
	// *NodeError wraps it.
	ErrInvalidNode = errors.New("local: invalid node")
)

// NodeError reports a node that Add rejected. Add checks every node before
// it writes, so when it returns a *NodeError nothing was written.
type NodeError struct {
	Index  int    // position of the node in the slice given to Add
	ID     string // the node's id, possibly empty
	Reason string // what is wrong and how to fix it
}

// Error returns the message of the NodeError.
func (e *NodeError) Error() string {
	who := "node " + strconv.Itoa(e.Index)
	if e.ID != "" {
		who += " (" + e.ID + ")"
	}
	return "local: " + who + ": " + e.Reason + "; no node of the batch was written"
}

// Unwrap returns ErrInvalidNode.
func (e *NodeError) Unwrap() error { return ErrInvalidNode }

// txError is a failed write transaction: it is a *sink.WriteError listing
// every node of the batch (the transaction rolled back, so none was written)
// and it also unwraps to the cause, so that errors.Is(err, context.Canceled)
// works. Nodes are checked before the transaction, so a transaction fails
// for reasons of the database, not of a node (a full disk, an I/O error, a
// file made read-only, another process holding the lock past the busy
// timeout): unless the context ended, it also unwraps to
// sink.ErrUnavailable, and a pipeline stops instead of failing every
// document in turn.
type txError struct {
	path  string
	write *sink.WriteError
	cause error
}

func newTxError(path string, nodes []sink.Node, cause error) *txError {
	failed := make(map[string]error, len(nodes))
	for i := range nodes {
		failed[nodes[i].ID] = cause
	}
	return &txError{path: path, write: &sink.WriteError{Failed: failed}, cause: cause}
}

// Error returns the message of the txError. A fault of the store's file
// (a *FileError, such as a full disk) is given as the driver's error and
// the FileError's remedy, without naming the file twice.
func (e *txError) Error() string {
	head := "local: " + e.path + ": transaction rolled back, no node of the batch of " +
		strconv.Itoa(len(e.write.Failed)) + " was written: "
	var fe *FileError
	if errors.As(e.cause, &fe) && fe.Path == e.path {
		return head + fe.Err.Error() + "; " + fe.remedy()
	}
	return head + e.cause.Error()
}

func (e *txError) Unwrap() []error {
	if errors.Is(e.cause, context.Canceled) || errors.Is(e.cause, context.DeadlineExceeded) {
		return []error{e.write, e.cause}
	}
	return []error{e.write, e.cause, sink.ErrUnavailable}
}

func quote(s string) string { return strconv.Quote(s) }

// Sentinel errors of the database file itself; *FileError wraps them.
var (
	// ErrAccess marks a database file that cannot be opened or written: its
	// permissions, its folder's, or a read-only file system.
	ErrAccess = errors.New("local: database file not accessible")
	// ErrDamaged marks a database file that is not a sound SQLite database:
	// overwritten, truncated, or another kind of file.
	ErrDamaged = errors.New("local: database file damaged")
	// ErrFull marks a write refused because the disk holding the database
	// file has no room left: the file is sound, the write rolled back.
	ErrFull = errors.New("local: disk of the database file full")
)

// FileError reports a problem of the store's database file rather than of
// a node or a query: it names the file and the sink.local.path setting and
// says what to do. It unwraps to Kind (ErrAccess, ErrDamaged or ErrFull)
// and to the driver's error.
type FileError struct {
	Path string // the database file
	Op   string // what failed, such as "open" or "add nodes"
	Err  error  // the driver's error
	Kind error  // ErrAccess, ErrDamaged or ErrFull
	// Unwritable lists, for ErrAccess, the database's -wal and -shm files
	// that this process may not write (sqliteread.Unwritable).
	Unwritable []string
}

// Error returns the message of the FileError.
func (e *FileError) Error() string {
	where := e.Op + " in " + e.Path
	if e.Op == "open" {
		where = "open " + e.Path
	}
	return "local: " + where + ": " + e.Err.Error() + "; " + e.remedy()
}

// remedy says what is wrong with the file and what to do.
func (e *FileError) remedy() string {
	switch {
	case e.Kind == ErrDamaged && sqlitefault.NotADatabase(e.Err):
		// Maybe another file named by mistake: not to be deleted blindly.
		return e.Path + " (sink.local.path) is damaged or not a SQLite database: " +
			"if it is the store, delete it (`sluice index delete`, with this command's --config if it has one) and run again; otherwise set sink.local.path to a new file"
	case e.Kind == ErrDamaged:
		return e.Path + " (sink.local.path) is damaged: " +
			"delete it (`sluice index delete`, with this command's --config if it has one) and run again, or set sink.local.path to a new file"
	case e.Kind == ErrFull && e.Op == opCheckpoint:
		return "the disk holding " + e.Path + " (sink.local.path) is full: " + sqlitefault.CheckpointRemedy
	case e.Kind == ErrFull:
		return "the disk holding " + e.Path + " (sink.local.path) is full: " + sqlitefault.FullRemedy
	}
	if len(e.Unwritable) > 0 {
		return strings.Join(e.Unwritable, " and ") + " belong to another user or are read-only (left by a sluice run as another user): " +
			"when no sluice is running, delete them or give them to this user"
	}
	return "check the permissions of " + e.Path + " (sink.local.path) and of its folder"
}

// fileFaults maps each fault of sqlitefault to the sentinel of this package.
var fileFaults = map[sqlitefault.Kind]error{
	sqlitefault.Access:  ErrAccess,
	sqlitefault.Damaged: ErrDamaged,
	sqlitefault.Full:    ErrFull,
}

// Unwrap returns Kind and Err.
func (e *FileError) Unwrap() []error { return []error{e.Kind, e.Err} }

// opCheckpoint is the Op of a *FileError of the last checkpoint (Close).
const opCheckpoint = "last checkpoint"

// checkpoint is sqlitefault.Checkpoint; a variable so that tests can make
// it fail as on a full disk.
var checkpoint = sqlitefault.Checkpoint

// unwritable is sqliteread.Unwritable; a variable so that tests can replace it.
var unwritable = sqliteread.Unwritable

// fileFault classifies a database error (see sqlitefault.Classify):
// ErrAccess for permissions, ErrDamaged for a damaged file, ErrFull for a
// full disk, nil for anything else.
func fileFault(err error) error { return fileFaults[sqlitefault.Classify(err)] }

// asFileError returns a *FileError for an error of the database file
// itself, and nil for any other error.
func asFileError(path, op string, err error) error {
	if kind := fileFault(err); kind != nil {
		e := &FileError{Path: path, Op: op, Err: err, Kind: kind}
		// A write refused because the store was opened for reading only
		// is not about the -wal and -shm files, which belong to the writer.
		if kind == ErrAccess && !errors.Is(err, ErrReadOnly) {
			e.Unwritable = unwritable(path)
		}
		return e
	}
	return nil
}

// DimensionsError reports vectors (to store or to query with) whose length
// is not that of the vectors the store holds, with the local store's
// remedy: a store's dimensions are fixed while it holds vectors, so a run
// with --full cannot change them; a new store can. It unwraps to the
// *sink.DimensionError, hence to sink.ErrDimensionMismatch.
type DimensionsError struct {
	Path string // the database file
	Dims int    // the dimensions of the stored vectors
	Err  error  // a *sink.DimensionError
}

// Error returns the message of the DimensionsError. It does not repeat
// Err's message, which names Cloud AI Search's setting.
func (e *DimensionsError) Error() string {
	got := "other"
	var de *sink.DimensionError
	if errors.As(e.Err, &de) {
		got = strconv.Itoa(de.Got)
	}
	d := strconv.Itoa(e.Dims)
	return "local: " + e.Path + " (sink.local.path) holds " + d + "-dimension vectors, not " + got +
		": set embedder.dimensions to " + d + "; to use " + got + " dimensions, delete the store (`sluice index delete`, with this command's --config if it has one) and run again, " +
		"or set sink.local.path to a new file (--full alone cannot change the dimensions of a store that holds vectors)"
}

// Unwrap returns Err.
func (e *DimensionsError) Unwrap() error { return e.Err }
