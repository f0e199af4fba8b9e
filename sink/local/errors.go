package local

import (
	"context"
	"errors"
	"strconv"

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

// Error returns the message of the txError.
func (e *txError) Error() string {
	return "local: " + e.path + ": transaction rolled back, no node of the batch of " +
		strconv.Itoa(len(e.write.Failed)) + " was written: " + e.cause.Error()
}

func (e *txError) Unwrap() []error {
	if errors.Is(e.cause, context.Canceled) || errors.Is(e.cause, context.DeadlineExceeded) {
		return []error{e.write, e.cause}
	}
	return []error{e.write, e.cause, sink.ErrUnavailable}
}

func quote(s string) string { return strconv.Quote(s) }
