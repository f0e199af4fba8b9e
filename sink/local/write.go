package local

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/sink"
)

// maxRowsPerStmt is the most nodes one INSERT statement writes. FTS5 keeps
// the terms of the rows written in memory and flushes them to a new index
// segment at commit, but also at the start of every later statement of the
// transaction that opens a statement journal, as a multi-row upsert does
// (it may fail halfway). One statement per Add thus leaves one new segment
// per Add, not one per statement, and every segment costs merge work later
// (one statement per node would spend most of Add merging). 512 rows take
// 3584 parameters, far below SQLite's limit of 32766.
const maxRowsPerStmt = 512

// maxCachedStmts is the number of prepared upsert statements a Store keeps,
// one per batch size: the pipeline's batches mostly have one size, but the
// last batch of a run and of an incremental update are shorter.
const maxCachedStmts = 4

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

// stmtCache keeps the prepared upsert statements of the most recent batch
// sizes, so that an Add does not parse and compile its statement again.
// They are prepared on the DB: database/sql then prepares each on a
// connection the first time a transaction of that connection uses it
// (Tx.StmtContext) and reuses that copy afterwards. The Store's writeMu
// guards the cache.
type stmtCache struct {
	stmts []sizedStmt // most recently used first
}

type sizedStmt struct {
	rows int
	stmt *sql.Stmt
}

// upsert returns the statement that upserts n nodes.
func (c *stmtCache) upsert(ctx context.Context, db *sql.DB, n int) (*sql.Stmt, error) {
	for i, e := range c.stmts {
		if e.rows == n {
			copy(c.stmts[1:i+1], c.stmts[:i])
			c.stmts[0] = e
			return e.stmt, nil
		}
	}
	stmt, err := db.PrepareContext(ctx, upsertSQL(n))
	if err != nil {
		return nil, err
	}
	if len(c.stmts) == maxCachedStmts {
		c.stmts[len(c.stmts)-1].stmt.Close()
		c.stmts = c.stmts[:len(c.stmts)-1]
	}
	c.stmts = append([]sizedStmt{{n, stmt}}, c.stmts...)
	return stmt, nil
}

// close closes the cached statements.
func (c *stmtCache) close() {
	for _, e := range c.stmts {
		e.stmt.Close()
	}
	c.stmts = nil
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

// addTx writes the encoded nodes in one transaction.
func (s *Store) addTx(ctx context.Context, nodes []sink.Node, rows []row) error {
	wrap := func(err error) error {
		if ferr := asFileError(s.path, "add nodes", err); ferr != nil {
			err = ferr
		}
		return newTxError(s.path, nodes, err)
	}
	var dims int
	err := s.writeTx(ctx, wrap, func(tx *sql.Tx) error {
		// Read the dimensions inside the transaction: another process may
		// have recorded them since Open.
		var err error
		if dims, err = readDims(ctx, tx); err != nil {
			return wrap(err)
		}
		if dims == 0 {
			dims = len(nodes[0].Embedding)
			if err := sink.CheckDimensions(nodes, dims); err != nil {
				return fmt.Errorf("local: the embeddings of one batch differ in length: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('dimensions', ?)`, strconv.Itoa(dims)); err != nil {
				return wrap(err)
			}
		} else if err := sink.CheckDimensions(nodes, dims); err != nil {
			return s.dimsErr(dims, err)
		}
		if err := s.upsert(ctx, tx, nodes, rows); err != nil {
			return wrap(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.dims.Store(int64(dims))
	return nil
}

// upsert writes the nodes, maxRowsPerStmt at a time: in one statement
// unless the batch is larger.
func (s *Store) upsert(ctx context.Context, tx *sql.Tx, nodes []sink.Node, rows []row) error {
	args := make([]any, 0, 7*min(len(nodes), maxRowsPerStmt))
	for start := 0; start < len(nodes); start += maxRowsPerStmt {
		end := min(start+maxRowsPerStmt, len(nodes))
		stmt, err := s.stmts.upsert(ctx, s.db, end-start)
		if err != nil {
			return err
		}
		args = args[:0]
		for i := start; i < end; i++ {
			n := &nodes[i]
			args = append(args, n.ID, n.RefDocID, n.Text, rows[i].embedding, rows[i].metadata, n.StartChar, n.EndChar)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("nodes %s to %s: %w", nodes[start].ID, nodes[end-1].ID, err)
		}
	}
	return nil
}

// Delete removes every node whose RefDocID is refDocID.
func (s *Store) Delete(ctx context.Context, refDocID string) error {
	return s.exec(ctx, "delete document "+quote(refDocID), `DELETE FROM nodes WHERE doc_id = ?`, refDocID)
}

// DeleteDocs removes every node whose RefDocID is one of refDocIDs, in one
// transaction: deleting many documents costs one commit, not one each. It
// makes Store a pipeline.DocsDeleter.
func (s *Store) DeleteDocs(ctx context.Context, refDocIDs []string) error {
	if len(refDocIDs) == 0 {
		return nil
	}
	return s.deleteIn(ctx, "doc_id", "documents", refDocIDs)
}

// DeleteNodes removes the nodes with the given ids in one transaction;
// unknown ids are ignored.
func (s *Store) DeleteNodes(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.deleteIn(ctx, "id", "nodes", ids)
}

// deleteIn deletes, in one transaction, the nodes whose column (id or
// doc_id) is one of values; what names them in errors.
func (s *Store) deleteIn(ctx context.Context, column, what string, values []string) error {
	arr, err := jsonArray(values)
	if err != nil {
		return err
	}
	return s.exec(ctx, "delete "+strconv.Itoa(len(values))+" "+what,
		`DELETE FROM nodes WHERE `+column+` IN (SELECT value FROM json_each(?))`, arr)
}

// exec runs one delete statement in a write transaction (writeTx) that
// also forgets the recorded dimensions when the store ends up empty, so that
// an emptied store can be refilled with another embedding model.
func (s *Store) exec(ctx context.Context, op, query string, args ...any) error {
	wrap := func(err error) error { return s.wrap(op, err) }
	var forgot int64
	err := s.writeTx(ctx, wrap, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return wrap(err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'dimensions' AND NOT EXISTS (SELECT 1 FROM nodes)`)
		if err != nil {
			return wrap(err)
		}
		if forgot, err = res.RowsAffected(); err != nil {
			return wrap(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if forgot > 0 {
		s.dims.Store(0)
	}
	return nil
}

// dimsErr explains a *sink.DimensionError against the recorded dimensions.
func (s *Store) dimsErr(dims int, err error) error {
	return &DimensionsError{Path: s.path, Dims: dims, Err: err}
}
