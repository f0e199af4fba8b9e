package local

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/sink"
)

// rowsPerStmt is the number of nodes one INSERT statement writes. FTS5
// flushes its pending terms to a new index segment at the end of every
// statement, so one statement per node would create a segment per node and
// spend most of Add merging them; a multi-row statement writes one segment
// per statement. 64 rows take 448 parameters, far below SQLite's limit.
const rowsPerStmt = 64

// upsertSQL returns the statement that inserts or replaces n nodes.
func upsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO nodes (id, doc_id, text, embedding, metadata, start_char, end_char) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?, ?, ?, ?, ?, ?, ?)`)
	}
	b.WriteString(` ON CONFLICT (id) DO UPDATE SET
		doc_id = excluded.doc_id, text = excluded.text, embedding = excluded.embedding,
		metadata = excluded.metadata, start_char = excluded.start_char, end_char = excluded.end_char`)
	return b.String()
}

// row is a node encoded for the nodes table.
type row struct {
	embedding []byte
	metadata  string
}

// Add inserts or replaces nodes in one transaction and returns their ids.
// It checks every node first (non-empty id, supported metadata, embedding
// length equal to Dimensions, or to the first node's when the store is new)
// and writes nothing when one fails: a *NodeError or a *sink.DimensionError.
// When the transaction fails, the error is a *sink.WriteError listing every
// node and also wraps the cause (such as context.Canceled).
// Nodes that share an id within one batch are written in order, so the
// last one wins.
func (s *Store) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if len(nodes) == 0 {
		return []string{}, nil
	}
	rows, err := encodeNodes(nodes)
	if err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.addTx(ctx, nodes, rows); err != nil {
		return nil, err
	}
	ids := make([]string, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	return ids, nil
}

// encodeNodes checks the nodes that need no database and encodes them.
func encodeNodes(nodes []sink.Node) ([]row, error) {
	rows := make([]row, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		if n.ID == "" {
			return nil, &NodeError{Index: i, Reason: "id is empty; set Node.ID (see sink.NodeID)"}
		}
		if len(n.Embedding) == 0 {
			return nil, &NodeError{Index: i, ID: n.ID, Reason: "embedding is empty; embed the node before adding it"}
		}
		md, err := encodeMetadata(n.Metadata)
		if err != nil {
			return nil, &NodeError{Index: i, ID: n.ID, Reason: err.Error()}
		}
		rows[i] = row{embedding: sink.EncodeVector(n.Embedding), metadata: md}
	}
	return rows, nil
}

// addTx writes the encoded nodes in one transaction. The caller holds writeMu.
func (s *Store) addTx(ctx context.Context, nodes []sink.Node, rows []row) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return newTxError(s.path, nodes, err)
	}
	defer tx.Rollback() // a no-op after Commit
	// Read the dimensions inside the transaction: another process may have
	// recorded them since Open.
	dims, err := readDims(ctx, tx)
	if err != nil {
		return newTxError(s.path, nodes, err)
	}
	if dims == 0 {
		dims = len(nodes[0].Embedding)
		if err := sink.CheckDimensions(nodes, dims); err != nil {
			return fmt.Errorf("local: the embeddings of one batch differ in length: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('dimensions', ?)`, strconv.Itoa(dims)); err != nil {
			return newTxError(s.path, nodes, err)
		}
	} else if err := sink.CheckDimensions(nodes, dims); err != nil {
		return s.dimsErr(dims, err)
	}
	if err := upsert(ctx, tx, nodes, rows); err != nil {
		return newTxError(s.path, nodes, err)
	}
	if err := tx.Commit(); err != nil {
		return newTxError(s.path, nodes, err)
	}
	s.dims.Store(int64(dims))
	return nil
}

// upsert writes the nodes rowsPerStmt at a time, with one prepared statement
// for the full chunks and one for the rest.
func upsert(ctx context.Context, tx *sql.Tx, nodes []sink.Node, rows []row) error {
	var stmt *sql.Stmt
	size := 0
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	args := make([]any, 0, 7*rowsPerStmt)
	for start := 0; start < len(nodes); start += rowsPerStmt {
		end := min(start+rowsPerStmt, len(nodes))
		if end-start != size {
			if stmt != nil {
				stmt.Close()
			}
			var err error
			if stmt, err = tx.PrepareContext(ctx, upsertSQL(end-start)); err != nil {
				return err
			}
			size = end - start
		}
		args = args[:0]
		for i := start; i < end; i++ {
			n := &nodes[i]
			args = append(args, n.ID, n.RefDocID, n.Text, rows[i].embedding, rows[i].metadata, n.StartChar, n.EndChar)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("nodes %s to %s: %w", nodes[start].ID, nodes[end-1].ID, err)
		}
	}
	return nil
}

// Delete removes every node whose RefDocID is refDocID.
func (s *Store) Delete(ctx context.Context, refDocID string) error {
	return s.exec(ctx, "delete document "+quote(refDocID), `DELETE FROM nodes WHERE doc_id = ?`, refDocID)
}

// DeleteNodes removes the nodes with the given ids in one transaction;
// unknown ids are ignored.
func (s *Store) DeleteNodes(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	arr, err := jsonArray(ids)
	if err != nil {
		return err
	}
	return s.exec(ctx, "delete "+strconv.Itoa(len(ids))+" nodes",
		`DELETE FROM nodes WHERE id IN (SELECT value FROM json_each(?))`, arr)
}

// exec runs one delete statement under writeMu, in a transaction that
// also forgets the recorded dimensions when the store ends up empty, so that
// an emptied store can be refilled with another embedding model.
func (s *Store) exec(ctx context.Context, op, query string, args ...any) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(op, err)
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return s.wrap(op, err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'dimensions' AND NOT EXISTS (SELECT 1 FROM nodes)`)
	if err != nil {
		return s.wrap(op, err)
	}
	forgot, err := res.RowsAffected()
	if err != nil {
		return s.wrap(op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrap(op, err)
	}
	if forgot > 0 {
		s.dims.Store(0)
	}
	return nil
}

// dimsErr explains a *sink.DimensionError against the recorded dimensions.
func (s *Store) dimsErr(dims int, err error) error {
	return fmt.Errorf("local: %s holds %d-dimension vectors (set embedder.dimensions to %d, or point sink.local.path at a new file to index with another model): %w",
		s.path, dims, dims, err)
}
