package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/sluice-dev/sluice/sink"
)

// nodeCols are the columns scanNode reads, in order.
const nodeCols = `n.seq, n.id, n.doc_id, n.text, n.embedding, n.metadata, n.start_char, n.end_char`

// GetNodes returns stored nodes ordered by reference document, start offset
// and id. A nil ids means every node (an empty, non-nil ids means none); nil
// filters match all; limit 0 means no limit.
func (s *Store) GetNodes(ctx context.Context, ids []string, filters *sink.MetadataFilters, limit int) ([]sink.Node, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := filters.Validate(); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, &sink.QueryError{Reason: "limit must not be negative"}
	}
	if ids != nil && len(ids) == 0 {
		return []sink.Node{}, nil
	}
	sf := compileFilter(filters)
	var cond string
	var args []any
	if ids != nil {
		arr, err := jsonArray(ids)
		if err != nil {
			return nil, err
		}
		cond = `n.id IN (SELECT value FROM json_each(?))`
		args = append(args, arr)
	}
	cond = sf.and(cond)
	args = append(args, sf.args...)
	query := `SELECT ` + nodeCols + ` FROM nodes AS n`
	if cond != "" {
		query += ` WHERE ` + cond
	}
	query += ` ORDER BY n.doc_id, n.start_char, n.id`
	if limit > 0 && !sf.active() {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("get nodes", err)
	}
	defer rows.Close()
	out := []sink.Node{}
	for rows.Next() {
		n, _, err := scanNode(rows)
		if err != nil {
			return nil, s.wrap("get nodes", err)
		}
		if sf.active() && !sf.match(n.Metadata) {
			continue
		}
		out = append(out, n)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("get nodes", err)
	}
	return out, nil
}

// ExistingIDs returns the subset of ids that are stored, as a set.
func (s *Store) ExistingIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	found := make(map[string]bool)
	if len(ids) == 0 {
		return found, nil
	}
	arr, err := jsonArray(ids)
	if err != nil {
		return nil, err
	}
	err = s.collectIDs(ctx, "look up node ids", found,
		`SELECT id FROM nodes WHERE id IN (SELECT value FROM json_each(?))`, arr)
	return found, err
}

func (s *Store) collectIDs(ctx context.Context, op string, into map[string]bool, query string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return s.wrap(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return s.wrap(op, err)
		}
		into[id] = true
	}
	if err := rows.Err(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// scanNode reads the columns of nodeCols.
func scanNode(rows *sql.Rows) (sink.Node, int64, error) {
	var (
		n   sink.Node
		seq int64
		emb []byte
		md  string
	)
	if err := rows.Scan(&seq, &n.ID, &n.RefDocID, &n.Text, &emb, &md, &n.StartChar, &n.EndChar); err != nil {
		return n, 0, err
	}
	n.Embedding = sink.DecodeVector(emb)
	m, err := decodeMetadata(md)
	if err != nil {
		return n, 0, fmt.Errorf("node %s: %w", n.ID, err)
	}
	n.Metadata = m
	return n, seq, nil
}

// jsonArray encodes v for json_each.
func jsonArray[T any](v []T) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("local: encode list: %w", err)
	}
	return string(b), nil
}

// NodeVectors returns those of the nodes ids the store holds, with their
// text and vector (pipeline.VectorReader): GetNodes of ids.
func (s *Store) NodeVectors(ctx context.Context, ids []string) ([]sink.Node, error) {
	return s.GetNodes(ctx, ids, nil, 0)
}
