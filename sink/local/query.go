package local

import (
	"context"
	"database/sql"
	"strings"

	"github.com/sluice-dev/sluice/sink"
)

// hybridCandidates is the number of candidates each ranking contributes to
// hybrid fusion: max(hybridCandidates, 2*topK).
const hybridCandidates = 50

// Query returns the best matches for q, best first (see the package
// documentation for the modes). It validates q first (sink.Query.Validate):
// text modes without QueryStr fail with a *sink.QueryError. SemanticHybrid
// fails with a *sink.UnsupportedError, and a query embedding whose length
// differs from Dimensions with a *sink.DimensionError.
func (s *Store) Query(ctx context.Context, q sink.Query) ([]sink.ScoredNode, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	mode := q.Mode
	if mode == "" {
		mode = sink.Vector
	}
	if err := CheckMode(mode); err != nil {
		return nil, err
	}
	if mode.NeedsEmbedding() {
		if d := s.Dimensions(); d != 0 && len(q.Embedding) != d {
			return nil, s.dimsErr(d, &sink.DimensionError{Want: d, Got: len(q.Embedding)})
		}
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap("query", err)
	}
	defer tx.Rollback()
	sf := compileFilter(q.Filters)
	k := q.K()
	var hits []hit
	switch mode {
	case sink.Vector:
		hits, err = vectorHits(ctx, tx, q.Embedding, k, sf)
	case sink.Sparse:
		hits, err = textHits(ctx, tx, q.QueryStr, k, sf)
	case sink.Hybrid:
		hits, err = hybridHits(ctx, tx, q, k, sf)
	}
	if err != nil {
		return nil, s.wrap("query ("+string(mode)+")", err)
	}
	out, err := fetch(ctx, tx, hits)
	if err != nil {
		return nil, s.wrap("query ("+string(mode)+")", err)
	}
	return out, nil
}

func hybridHits(ctx context.Context, tx *sql.Tx, q sink.Query, k int, sf sqlFilter) ([]hit, error) {
	n := max(hybridCandidates, 2*k)
	vec, err := vectorHits(ctx, tx, q.Embedding, n, sf)
	if err != nil {
		return nil, err
	}
	var txt []hit
	if !matchAll(q.QueryStr) { // "*" ranks nothing, as in Cloud AI Search
		txt, err = textHits(ctx, tx, q.QueryStr, n, sf)
	}
	if err != nil {
		return nil, err
	}
	return fuse(k, vec, txt), nil
}

// matchAll reports whether text is "*" (surrounding white space aside),
// which Cloud AI Search's simple query syntax reads as every document.
func matchAll(text string) bool { return strings.TrimSpace(text) == "*" }

// vectorHits streams the candidate rows' vectors and keeps the k most
// cosine-similar to q.
func vectorHits(ctx context.Context, tx *sql.Tx, q []float32, k int, sf sqlFilter) ([]hit, error) {
	query := `SELECT n.seq, n.embedding`
	if sf.active() {
		query += `, n.metadata`
	}
	query += ` FROM nodes AS n`
	if sf.where != "" {
		query += ` WHERE ` + sf.where
	}
	rows, err := tx.QueryContext(ctx, query, sf.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	qn := norm(q)
	top := newTopK(k)
	var (
		seq int64
		emb sql.RawBytes
		md  string
	)
	dest := []any{&seq, &emb}
	if sf.active() {
		dest = append(dest, &md)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if keep, err := sf.keeps(md); err != nil {
			return nil, err
		} else if !keep {
			continue
		}
		if sim, ok := cosine(q, qn, emb); ok {
			top.push(hit{seq: seq, score: sim})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return top.sorted(), nil
}

// textHits returns the k best BM25 matches of text. The score is the
// negated bm25() value, so higher is better. The text "*" matches every
// node, each scored 1, in the order they were stored, as in Cloud AI
// Search.
func textHits(ctx context.Context, tx *sql.Tx, text string, k int, sf sqlFilter) ([]hit, error) {
	var query string
	var args []any
	if matchAll(text) {
		query = `SELECT n.seq, -1.0`
		if sf.active() {
			query += `, n.metadata`
		}
		query += ` FROM nodes AS n`
		if sf.where != "" {
			query += ` WHERE ` + sf.where
			args = append(args, sf.args...)
		}
		query += ` ORDER BY n.seq`
	} else {
		fq := ftsQuery(text)
		if fq == "" {
			return nil, nil
		}
		query = `SELECT n.seq, bm25(nodes_fts)`
		args = []any{fq}
		if sf.active() {
			query += `, n.metadata`
		}
		query += ` FROM nodes_fts JOIN nodes AS n ON n.seq = nodes_fts.rowid WHERE nodes_fts MATCH ?`
		if sf.where != "" {
			query += ` AND ` + sf.where
			args = append(args, sf.args...)
		}
		query += ` ORDER BY bm25(nodes_fts), n.seq`
	}
	if !sf.active() {
		query += ` LIMIT ?`
		args = append(args, k)
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		out  []hit
		seq  int64
		bm25 float64
		md   string
	)
	dest := []any{&seq, &bm25}
	if sf.active() {
		dest = append(dest, &md)
	}
	for len(out) < k && rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if keep, err := sf.keeps(md); err != nil {
			return nil, err
		} else if !keep {
			continue
		}
		out = append(out, hit{seq: seq, score: -bm25})
	}
	return out, rows.Err()
}

// fetch reads the nodes of hits and returns them in the same order.
func fetch(ctx context.Context, tx *sql.Tx, hits []hit) ([]sink.ScoredNode, error) {
	out := make([]sink.ScoredNode, 0, len(hits))
	if len(hits) == 0 {
		return out, nil
	}
	seqs := make([]int64, len(hits))
	for i, h := range hits {
		seqs[i] = h.seq
	}
	arr, err := jsonArray(seqs)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+nodeCols+` FROM nodes AS n WHERE n.seq IN (SELECT value FROM json_each(?))`, arr)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySeq := make(map[int64]sink.Node, len(hits))
	for rows.Next() {
		n, seq, err := scanNode(rows)
		if err != nil {
			return nil, err
		}
		bySeq[seq] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, h := range hits {
		if n, ok := bySeq[h.seq]; ok {
			out = append(out, sink.ScoredNode{Node: n, Score: h.score})
		}
	}
	return out, nil
}

// CheckMode reports, as a *sink.UnsupportedError, a query mode the local
// store cannot run: semantic_hybrid, since it has no semantic ranker. It
// needs no Store, so a caller can refuse the mode before a store exists.
func CheckMode(mode sink.QueryMode) error {
	if mode == sink.SemanticHybrid {
		return &sink.UnsupportedError{
			What: "query mode semantic_hybrid: the local store has no semantic ranker",
			Hint: "use mode hybrid, or the cloudsearch sink (sink.type: cloudsearch) with a semantic configuration",
		}
	}
	return nil
}
