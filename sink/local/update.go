package local

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/sluice-dev/sluice/sink"
)

var _ sink.MetadataUpdater = (*Store)(nil)

// errNotStored is the reason UpdateMetadata gives for an unknown node.
var errNotStored = errors.New("no node with this id is stored; add it with its embedding instead")

// UpdateMetadata replaces the metadata and offsets of stored nodes, keeping
// their text and embeddings, in one transaction. Nodes whose id is not
// stored are reported in a *sink.WriteError; the others are updated.
func (s *Store) UpdateMetadata(ctx context.Context, nodes []sink.Node) error {
	if s.closed.Load() {
		return ErrClosed
	}
	mds := make([]string, len(nodes))
	for i := range nodes {
		md, err := encodeMetadata(nodes[i].Metadata)
		if err != nil {
			return &NodeError{Index: i, ID: nodes[i].ID, Reason: err.Error()}
		}
		mds[i] = md
	}
	op := "update the metadata of " + strconv.Itoa(len(nodes)) + " nodes"
	wrap := func(err error) error { return s.wrap(op, err) }
	missing := map[string]error{}
	err := s.writeTx(ctx, wrap, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE nodes SET metadata = ?, start_char = ?, end_char = ? WHERE id = ?`)
		if err != nil {
			return wrap(err)
		}
		defer stmt.Close()
		for i, n := range nodes {
			res, err := stmt.ExecContext(ctx, mds[i], n.StartChar, n.EndChar, n.ID)
			if err != nil {
				return wrap(err)
			}
			if affected, err := res.RowsAffected(); err != nil {
				return wrap(err)
			} else if affected == 0 {
				missing[n.ID] = errNotStored
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return &sink.WriteError{Failed: missing}
	}
	return nil
}
