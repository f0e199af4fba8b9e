package cloudsearch

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/sink"
)

// Paging limits of docs/search.
const (
	maxPageSize = 1000 // the most results one search response carries
	idsPerQuery = 1000 // ids per search.in filter of GetNodes, ExistingIDs and DeleteDocs
	// maxContinuations bounds the partial responses one search follows: a
	// service that kept answering with continuations would otherwise hold
	// the caller forever. 1000 pages of 1000 results is far beyond any k.
	maxContinuations = 1000
	// maxSkip is the largest skip the service accepts.
	maxSkip = 100000
	// maxScanPasses bounds the reads of the documents one scan by skip
	// makes when pages do not line up (see scanBySkip).
	maxScanPasses = 3
)

// searchRequest is the body of docs/search (SearchRequest).
type searchRequest struct {
	Search                string        `json:"search,omitempty"`
	Filter                string        `json:"filter,omitempty"`
	Select                string        `json:"select,omitempty"`
	Top                   int           `json:"top"`
	OrderBy               string        `json:"orderby,omitempty"`
	Skip                  int           `json:"skip,omitempty"`
	Count                 bool          `json:"count,omitempty"`
	SessionID             string        `json:"sessionId,omitempty"`
	QueryType             string        `json:"queryType,omitempty"`
	SemanticConfiguration string        `json:"semanticConfiguration,omitempty"`
	VectorQueries         []vectorQuery `json:"vectorQueries,omitempty"`
}

// vectorQuery is a VectorizedQuery.
type vectorQuery struct {
	Kind   string    `json:"kind"`
	Vector []float32 `json:"vector"`
	Fields string    `json:"fields"`
	K      int       `json:"k"`
}

// search runs a docs/search request and returns its documents. A response
// that cannot carry every requested result (top or k above 1000) is partial:
// it holds @search.nextPageParameters, the request body for the rest, which
// search posts in turn until the service sends no continuation.
func (s *Store) search(ctx context.Context, op string, req searchRequest) ([]map[string]any, error) {
	docs, _, err := s.searchCount(ctx, op, req)
	return docs, err
}

// searchCount is search, also returning the @odata.count of the first
// answer (the number of matches, when req.Count is set), or -1 if the
// answer has none.
func (s *Store) searchCount(ctx context.Context, op string, req searchRequest) ([]map[string]any, int, error) {
	body, err := marshal(op, req)
	if err != nil {
		return nil, -1, err
	}
	var docs []map[string]any
	count := -1
	for i := range maxContinuations {
		var out struct {
			Value []map[string]any `json:"value"`
			Count *int             `json:"@odata.count"`
			Next  json.RawMessage  `json:"@search.nextPageParameters"`
		}
		err := s.doJSON(ctx, call{op: op, method: http.MethodPost, path: s.indexPath("/docs/search"), body: body, index: true}, &out)
		if err != nil {
			return nil, -1, err
		}
		if i == 0 && out.Count != nil {
			count = *out.Count
		}
		docs = append(docs, out.Value...)
		if len(out.Next) == 0 || string(out.Next) == "null" || len(out.Value) == 0 {
			return docs, count, nil
		}
		body = out.Next
	}
	return nil, -1, fmt.Errorf("cloudsearch: %s: the service kept sending continuations after %d pages (%d results); lower the number of results asked for", op, maxContinuations, len(docs))
}

// selectFields lists the fields read back: key, chunk, metadata string and
// doc_id, less the hidden ones.
func (s *Store) selectFields() string {
	hidden := s.cfg.hidden()
	var fields []string
	for _, f := range s.cfg.readFields() {
		if !hidden[f] {
			fields = append(fields, f)
		}
	}
	return strings.Join(fields, ",")
}

// scan reads every document matching filter (at most limit, 0 for all)
// and calls fn for each with its key (the idFieldKey field, checked to be
// a string) and the document; an error from fn stops it. It pages by key when
// the index's key field is sortable (scanByKey), as on every index Sluice
// creates, and with skip when it is not (scanBySkip), as on the indexes
// LlamaIndex's Python store creates, which reach 101,000 documents at
// most.
func (s *Store) scan(ctx context.Context, op, filter, sel string, limit int, fn func(key string, doc map[string]any) error) error {
	sortable, err := s.keySortable(ctx)
	if err != nil {
		return err
	}
	if !sortable {
		return s.scanBySkip(ctx, op, filter, sel, limit, fn)
	}
	return s.scanByKey(ctx, op, filter, sel, limit, fn)
}

// scanByKey is scan for an index whose key field is sortable. It pages by
// key, as the service's documentation advises for reading past $skip's
// limit of 100,000: each request orders by the key and asks for keys above
// the last one seen, so pages neither overlap nor miss a document, however
// many there are. Sluice creates its key sortable explicitly (it is the
// only sortable field), and indexes left to the service's default have one
// too (single-valued simple fields are sortable unless turned off).
func (s *Store) scanByKey(ctx context.Context, op, filter, sel string, limit int, fn func(key string, doc map[string]any) error) error {
	key := s.cfg.IDFieldKey
	seen, last := 0, ""
	for limit == 0 || seen < limit {
		top := maxPageSize
		if limit > 0 {
			top = min(top, limit-seen)
		}
		f := filter
		if seen > 0 {
			f = andFilters(filter, key+" gt "+quoteOData(last))
		}
		docs, err := s.search(ctx, op, searchRequest{Search: "*", Filter: f, Select: sel, Top: top, OrderBy: key + " asc"})
		if err != nil {
			return err
		}
		for _, d := range docs {
			k, ok := d[key].(string)
			if !ok {
				return s.noKeyError(op)
			}
			last = k
			if err := fn(k, d); err != nil {
				return err
			}
		}
		seen += len(docs)
		if len(docs) < top {
			return nil
		}
	}
	return nil
}

func (s *Store) noKeyError(op string) error {
	return fmt.Errorf("cloudsearch: %s: a document has no string key %q; check idFieldKey", op, s.cfg.IDFieldKey)
}

// scanBySkip is scan for an index whose key field is not sortable, which
// cannot be paged by key: it pages with skip, 1000 documents a page, as
// far as the service allows (a skip of at most 100,000, so 101,000
// documents). The first request asks for the number of matches as well,
// and if more than that many are to be read (at most limit, when limit
// is set), scanBySkip fails with a *ScanLimitError before calling fn.
//
// Pages by skip are not guaranteed to line up without an order on a
// unique field: every document matches search=* with the same score, and
// the service documents the order of equal scores as arbitrary, so a
// replica may order them differently from the one that answered the
// previous page. So the requests of one scan carry one sessionId, which
// asks the service to answer them from the same replicas (best effort),
// and scanBySkip checks the outcome: it calls fn once per key, and while
// fewer distinct documents have turned up than the service counted, it
// pages through again (calling fn for the documents not seen yet), up to
// maxScanPasses times in all, then fails with a *ScanLimitError rather
// than return part of the documents for all of them. Documents written
// while it reads may be missed, as with scanByKey.
func (s *Store) scanBySkip(ctx context.Context, op, filter, sel string, limit int, fn func(key string, doc map[string]any) error) error {
	key := s.cfg.IDFieldKey
	session := "sluice-" + rand.Text()
	matches := -1
	fail := func(passes int) error {
		return &ScanLimitError{Op: op, Index: s.cfg.IndexName, KeyField: key, Matches: matches, Reach: s.maxSkip + maxPageSize, Passes: passes}
	}
	done := map[string]bool{} // the keys passed to fn
	for pass := 1; pass <= maxScanPasses; pass++ {
		for skip := 0; ; {
			if skip > s.maxSkip { // more documents than counted, or no count
				matches = -1
				return fail(0)
			}
			top := maxPageSize
			if limit > 0 && pass == 1 {
				top = min(top, limit-len(done))
			}
			docs, count, err := s.searchCount(ctx, op, searchRequest{Search: "*", Filter: filter, Select: sel, Top: top, Skip: skip, Count: skip == 0, SessionID: session})
			if err != nil {
				return err
			}
			if skip == 0 {
				matches = count
				need := matches
				if limit > 0 {
					need = min(need, limit)
				}
				if need > s.maxSkip+maxPageSize {
					return fail(0)
				}
			}
			for _, d := range docs {
				k, ok := d[key].(string)
				if !ok {
					return s.noKeyError(op)
				}
				if done[k] {
					continue
				}
				done[k] = true
				if err := fn(k, d); err != nil {
					return err
				}
				if limit > 0 && len(done) >= limit {
					return nil
				}
			}
			skip += top
			if len(docs) < top || (matches >= 0 && skip >= matches) {
				break
			}
		}
		if matches < 0 || len(done) >= matches {
			return nil
		}
	}
	return fail(maxScanPasses)
}

// Delete removes every node of the reference document refDocID, the
// documents matching `doc_id eq 'refDocID'` (quotes doubled). When the
// index's key field is sortable, it pages through their keys in key order
// and deletes each page's keys before reading the next, so memory stays
// flat whatever the number of nodes. When it is not (an index made by
// LlamaIndex's Python store), pages are read with skip, which deleting
// would shift: Delete then reads every key first, at most 101,000 of them
// (more is a *ScanLimitError, before anything is deleted), and deletes
// them afterwards.
//
// It finds the nodes by the doc_id field (docIdFieldKey) alone, which holds
// the reference document id in documents written by Sluice and by
// LlamaIndex's Python store. LlamaIndex.TS writes the node id into doc_id,
// and the reference document id only into the metadata JSON string, which
// is not filterable: Delete(refDocID) finds none of the nodes LlamaIndex.TS
// wrote for refDocID and returns nil, leaving them in the index (though
// GetNodes reports refDocID as their RefDocID), while Delete of such a
// node's id removes that node. Delete does not scan the whole index to
// find them; remove them with DeleteNodes and their ids instead (GetNodes
// reports each node's RefDocID).
func (s *Store) Delete(ctx context.Context, refDocID string) error {
	return s.deleteMatching(ctx, nodesOfDocOp(refDocID), eqFilter(s.cfg.DocIDFieldKey, refDocID))
}

// deleteMatching deletes the documents matching filter as Delete does
// those of one reference document: page by page when the key field is
// sortable, else every key read first (at most 101,000, more is a
// *ScanLimitError before anything is deleted). op names the search in
// errors.
func (s *Store) deleteMatching(ctx context.Context, op, filter string) error {
	sortable, err := s.keySortable(ctx)
	if err != nil {
		return err
	}
	if sortable {
		return s.matchingKeys(ctx, op, filter, func(keys []string) error { return s.DeleteNodes(ctx, keys) })
	}
	var keys []string
	err = s.matchingKeys(ctx, op, filter, func(page []string) error {
		keys = append(keys, page...)
		return nil
	})
	if err != nil {
		return err
	}
	return s.DeleteNodes(ctx, keys)
}

// NodeIDs calls fn with the keys of the nodes of reference document
// refDocID, at most 1000 at a time, found by the doc_id field as Delete
// finds them; fn must not keep the slice. It makes Store a
// pipeline.NodeLister: a run that replaces a document's nodes the manifest
// may not know of records them first and deletes those it does not write
// again only after the new ones are stored.
func (s *Store) NodeIDs(ctx context.Context, refDocID string, fn func(ids []string) error) error {
	return s.matchingKeys(ctx, nodesOfDocOp(refDocID), eqFilter(s.cfg.DocIDFieldKey, refDocID), fn)
}

// ScanNodes calls fn with the key and reference document id (the doc_id
// field, docIdFieldKey) of every stored node, read with those two fields
// only, at most 1000 at a time: a request per 1000 nodes. Nodes without a
// doc_id are left out; fn must not keep the slice. It makes Store a
// pipeline.NodeScanner: a run with --full or --verify lists the index once,
// to delete the documents whose files are gone even when the manifest does
// not know them (after a lost state file), and chunks written behind the
// manifest's back, and so that --full need not look up each document's
// nodes. On an index whose key is not sortable it reads at most 101,000
// nodes and fails with a *ScanLimitError beyond (before calling fn, when
// the service counts more; after some pages, when pages with skip do not
// line up); that error wraps sink.ErrUnsupported, as does the error for
// a doc_id field in hiddenFieldKeys, which cannot be read. Nodes written
// less than about a second before may be missed (see Settle).
func (s *Store) ScanNodes(ctx context.Context, fn func(nodes []sink.NodeRef) error) error {
	field := s.cfg.DocIDFieldKey
	if s.cfg.hidden()[field] {
		return &sink.UnsupportedError{What: "listing the nodes of index " + strconv.Quote(s.cfg.IndexName),
			Hint: "its " + field + " field is hidden (hiddenFieldKeys), so it cannot be read"}
	}
	return scanPages(ctx, s, listNodesOp, "", s.cfg.IDFieldKey+","+field, 0, func(key string, doc map[string]any) (sink.NodeRef, bool) {
		id, ok := doc[field].(string)
		return sink.NodeRef{ID: key, RefDocID: id}, ok && id != ""
	}, fn)
}

// listNodesOp names the listing of every node (ScanNodes) in errors.
const listNodesOp = "list nodes"

// nodesOfDocOp names the search for the nodes of reference document
// refDocID in errors.
func nodesOfDocOp(refDocID string) string { return "find nodes of document " + refDocID }

// matchingKeys calls fn with the keys of the documents matching filter, at
// most 1000 at a time (see NodeIDs); op names the search in errors.
func (s *Store) matchingKeys(ctx context.Context, op, filter string, fn func(ids []string) error) error {
	return scanPages(ctx, s, op, filter, s.cfg.IDFieldKey, 0, func(key string, _ map[string]any) (string, bool) { return key, true }, fn)
}

// scanPages is scan (of the documents matching filter, at most limit of
// them, 0 for all) passing fn, at most maxPageSize at a time, what item
// makes of each document it accepts; fn must not keep the slice. A page
// is passed as soon as it is full, before the next one is asked for, so
// that at most one response's documents and one page are held.
func scanPages[T any](ctx context.Context, s *Store, op, filter, sel string, limit int, item func(key string, doc map[string]any) (T, bool), fn func([]T) error) error {
	page := make([]T, 0, maxPageSize)
	err := s.scan(ctx, op, filter, sel, limit, func(key string, doc map[string]any) error {
		v, ok := item(key, doc)
		if !ok {
			return nil
		}
		if page = append(page, v); len(page) < maxPageSize {
			return nil
		}
		err := fn(page)
		page = page[:0]
		return err
	})
	if err != nil || len(page) == 0 {
		return err
	}
	return fn(page)
}

// getNodesOp names the reads of GetNodes and PageNodes in errors.
const getNodesOp = "get nodes"

// getNodesFilter returns the OData filter of GetNodes' and PageNodes'
// filters, after checking limit.
func (s *Store) getNodesFilter(filters *sink.MetadataFilters, limit int) (string, error) {
	if limit < 0 {
		return "", &sink.QueryError{Reason: "limit must not be negative"}
	}
	return ODataFilter(filters, s.cfg.FilterableMetadataFieldKeys)
}

// GetNodes returns stored nodes: those with the given ids (nil for all),
// matching filters, at most limit (0 for no limit). It pages past the
// service's 1000 results per request, but returns every node at once:
// PageNodes passes the nodes of GetNodes(ctx, nil, filters, limit) a page
// at a time. Nodes come in key order on an index whose key is sortable
// (every index Sluice creates; given ids, 1000 ids at a time), and in the
// service's order otherwise: not in sink/local's order (by document), so
// a limit may keep other nodes than it does.
func (s *Store) GetNodes(ctx context.Context, ids []string, filters *sink.MetadataFilters, limit int) ([]sink.Node, error) {
	mf, err := s.getNodesFilter(filters, limit)
	if err != nil {
		return nil, err
	}
	if ids != nil && len(ids) == 0 {
		return []sink.Node{}, nil
	}
	groups := [][]string{nil}
	if ids != nil {
		groups = chunkStrings(dedupe(ids), idsPerQuery)
	}
	nodes := []sink.Node{}
	seen := map[string]bool{}
	for _, g := range groups {
		filter := mf
		if g != nil {
			filter = andFilters(searchIn(s.cfg.IDFieldKey, g), mf)
		}
		remaining := len(g) // at most one node per id; 0 (no limit) for all nodes
		if limit > 0 {
			remaining = limit - len(nodes)
			if remaining <= 0 {
				break
			}
			if g != nil {
				remaining = min(remaining, len(g))
			}
		}
		err := s.scan(ctx, getNodesOp, filter, s.selectFields(), remaining, func(_ string, d map[string]any) error {
			n := s.cfg.fromDocument(d)
			if !seen[n.ID] {
				seen[n.ID] = true
				nodes = append(nodes, n)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// PageNodes calls fn with the nodes GetNodes(ctx, nil, filters, limit)
// returns, in the same order, at most 1000 at a time: each page is passed
// once it is read, before the next one is asked for, so that memory stays
// flat however many nodes match; fn must not keep the slice, and its error
// stops the read. It makes Store a sink.NodePager. Unlike ScanNodes, it
// does not read the doc_id field, so it lists the nodes of an index whose
// doc_id field is hidden (hiddenFieldKeys) too, each with the reference
// document id its metadata string holds, and it passes nodes without a
// doc_id as well.
//
// When the index's key field is sortable (every index Sluice creates),
// PageNodes pages by key, in key order, with no limit on the number of
// nodes. When it is not, it pages with skip, as GetNodes does, and fails
// as GetNodes fails, with a *ScanLimitError: before calling fn when more
// than 101,000 nodes are to be read (narrow the read with filters or a
// limit), and, rarely, after some pages, when the service orders the
// nodes differently from one page to the next and three passes through
// them do not find them all. It then holds the keys of the nodes it has
// passed (at most 101,000), to pass each node once.
func (s *Store) PageNodes(ctx context.Context, filters *sink.MetadataFilters, limit int, fn func(nodes []sink.Node) error) error {
	mf, err := s.getNodesFilter(filters, limit)
	if err != nil {
		return err
	}
	return scanPages(ctx, s, getNodesOp, mf, s.selectFields(), limit, func(_ string, d map[string]any) (sink.Node, bool) {
		return s.cfg.fromDocument(d), true
	}, fn)
}

// ExistingIDs returns the subset of ids the index holds, as a set, asking
// for the keys alone, 1000 ids per request. It makes Store a
// pipeline.NodeChecker (`sluice run --verify`). A document uploaded in the
// last second may not be found yet: the service indexes it shortly after
// acknowledging it (see Settle).
func (s *Store) ExistingIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	for _, g := range chunkStrings(dedupe(ids), idsPerQuery) {
		// At most len(g) documents match: one request, without asking
		// for a page after a full one.
		err := s.scan(ctx, "look up node ids", searchIn(s.cfg.IDFieldKey, g), s.cfg.IDFieldKey, len(g), func(key string, _ map[string]any) error {
			found[key] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func chunkStrings(ss []string, n int) [][]string {
	var out [][]string
	for len(ss) > n {
		out = append(out, ss[:n:n])
		ss = ss[n:]
	}
	return append(out, ss)
}

// MaxSemanticResults is the most results a SemanticHybrid query returns:
// the service's semantic ranker reranks the top 50 hits and returns no
// more. Query refuses a larger TopK in that mode rather than return fewer
// results than asked for.
const MaxSemanticResults = 50

// CheckQuery returns a *sink.QueryError (ErrInvalidQuery) when the
// configured index cannot answer a query of mode for topK results: mode
// SemanticHybrid returns at most MaxSemanticResults, and needs the chunk
// field, which the semantic ranker reads, to be retrievable (not in
// hiddenFieldKeys). Query calls it, and a caller may call it before
// embedding the query.
func (c Config) CheckQuery(mode sink.QueryMode, topK int) error {
	if mode != sink.SemanticHybrid {
		return nil
	}
	if c = c.normalize(); c.hidden()[c.ChunkFieldKey] {
		return &sink.QueryError{
			Reason: fmt.Sprintf("mode semantic_hybrid ranks the chunk field %q, which %shiddenFieldKeys hides: the service's semantic ranker reads only retrievable fields", c.ChunkFieldKey, settingPrefix),
			Hint:   "use mode hybrid, or take the chunk field out of hiddenFieldKeys and recreate the index (`sluice index delete`, then `sluice index create`, " + withConfig + ")",
		}
	}
	if topK > MaxSemanticResults {
		return &sink.QueryError{
			Reason: fmt.Sprintf("mode semantic_hybrid returns at most %d results (the service's semantic ranker reranks the top %d), and topK is %d", MaxSemanticResults, MaxSemanticResults, topK),
			Hint:   fmt.Sprintf("ask for %d or fewer, or use mode hybrid", MaxSemanticResults),
		}
	}
	return nil
}

// Query returns the q.K() best nodes for q. Vector (the default) searches
// the vector field; Hybrid adds full-text search of q.QueryStr, fused by the
// service; SemanticHybrid adds semantic reranking with the configured
// semantic configuration (RerankerScore is set); Sparse is full-text only.
// A SemanticHybrid query the service refuses on an index without that
// semantic configuration is a *ConfigError naming
// sink.cloudsearch.semanticConfiguration (see semanticConfigurationError).
func (s *Store) Query(ctx context.Context, q sink.Query) ([]sink.ScoredNode, error) {
	q.Filters = timesAsText(q.Filters) // time.Time values, which sink's Validate refuses, as RFC 3339 text
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.Mode.NeedsEmbedding() && len(q.Embedding) != s.cfg.EmbeddingDimensionality {
		return nil, &sink.DimensionError{Want: s.cfg.EmbeddingDimensionality, Got: len(q.Embedding)}
	}
	filter, err := ODataFilter(q.Filters, s.cfg.FilterableMetadataFieldKeys)
	if err != nil {
		return nil, err
	}
	k := q.K()
	if err := s.cfg.CheckQuery(q.Mode, k); err != nil {
		return nil, err
	}
	req := searchRequest{Filter: filter, Select: s.selectFields(), Top: k}
	if q.Mode.NeedsEmbedding() {
		req.VectorQueries = []vectorQuery{{Kind: "vector", Vector: q.Embedding, Fields: s.cfg.EmbeddingFieldKey, K: k}}
	}
	if q.Mode.NeedsText() {
		req.Search = q.QueryStr
	}
	if q.Mode == sink.SemanticHybrid {
		req.QueryType = "semantic"
		req.SemanticConfiguration = s.cfg.SemanticConfiguration
	}
	docs, err := s.search(ctx, "query ("+string(modeName(q.Mode))+")", req)
	if err != nil {
		if q.Mode == sink.SemanticHybrid {
			return nil, s.semanticConfigurationError(ctx, err)
		}
		return nil, err
	}
	out := make([]sink.ScoredNode, 0, len(docs))
	for _, d := range docs {
		sn := sink.ScoredNode{Node: s.cfg.fromDocument(d)}
		sn.Score, _ = d["@search.score"].(float64)
		if r, ok := d["@search.rerankerScore"].(float64); ok {
			sn.RerankerScore = &r
		}
		out = append(out, sn)
	}
	return out, nil
}

// semanticConfigurationError returns err, the error of a SemanticHybrid
// query, or, when the service refused the query (400) and the index
// defines no semantic configuration of the configured name (an index
// created by another tool, or with another semanticConfiguration), a
// *ConfigError naming sink.cloudsearch.semanticConfiguration, the
// configurations the index has and what to do, with err as its cause.
// ValidateIndex does not check the name: an index without semantic
// ranking serves every other mode.
func (s *Store) semanticConfigurationError(ctx context.Context, err error) error {
	var se *ServiceError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
		return err
	}
	def, gerr := s.GetIndex(ctx)
	if gerr != nil {
		return err
	}
	var names []string
	if def.Semantic != nil {
		for _, c := range def.Semantic.Configurations {
			if c.Name == s.cfg.SemanticConfiguration {
				return err // the name is not what the service refused
			}
			names = append(names, strconv.Quote(c.Name))
		}
	}
	// The hint below replaces the advice of the service's error, which
	// would point at the index's fields instead.
	cause := *se
	cause.unvalidated = false
	err = &cause
	if len(names) == 0 {
		return configErrCause("semanticConfiguration",
			fmt.Sprintf("index %q has no semantic configuration, which mode semantic_hybrid needs", s.cfg.IndexName), err,
			"use mode hybrid, or add a semantic configuration to the index (in the portal, or create the index again with `sluice index delete`, `sluice index create`, then `sluice run`, "+withConfig+": Sluice creates one named by "+settingPrefix+"semanticConfiguration)")
	}
	return configErrCause("semanticConfiguration",
		fmt.Sprintf("is %q, but index %q defines no semantic configuration of that name (it has %s)", s.cfg.SemanticConfiguration, s.cfg.IndexName, strings.Join(names, ", ")), err,
		"set "+settingPrefix+"semanticConfiguration to one of the index's")
}

func modeName(m sink.QueryMode) sink.QueryMode {
	if m == "" {
		return sink.Vector
	}
	return m
}

// Interface checks.
var (
	_ sink.VectorStore = (*Store)(nil)
	_ sink.NodePager   = (*Store)(nil)
)
