package searchtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// MaxPageSize is the most results one docs/search response carries. When
// top asks for more, the response also has @search.nextPageParameters (the
// request body to POST for the rest) and @odata.nextLink, as the service's
// partial responses do.
const MaxPageSize = 1000

const (
	defaultTop     = 50
	maxSkip        = 100000
	rrfK           = 60
	semanticWindow = 50
)

type vectorQuery struct {
	Kind       string    `json:"kind"`
	Vector     []float64 `json:"vector"`
	K          *int      `json:"k"`
	Fields     string    `json:"fields"`
	Exhaustive bool      `json:"exhaustive"`
	Weight     *float64  `json:"weight"`
}

type searchRequest struct {
	Search                string        `json:"search"`
	SearchFields          string        `json:"searchFields"`
	SearchMode            string        `json:"searchMode"`
	Filter                string        `json:"filter"`
	Top                   *int          `json:"top"`
	Skip                  int           `json:"skip"`
	Select                string        `json:"select"`
	Count                 bool          `json:"count"`
	QueryType             string        `json:"queryType"`
	SemanticConfiguration string        `json:"semanticConfiguration"`
	SemanticQuery         string        `json:"semanticQuery"`
	VectorQueries         []vectorQuery `json:"vectorQueries"`
	VectorFilterMode      string        `json:"vectorFilterMode"`
	OrderBy               string        `json:"orderby"`
	Facets                []string      `json:"facets"`
	SessionID             string        `json:"sessionId"`
}

// hit is one ranked document.
type hit struct {
	key      string
	score    float64
	reranker *float64
}

func (s *Server) search(w http.ResponseWriter, r *http.Request, name string, body []byte) *apiError {
	if err := s.validateBody("SearchRequest", body); err != nil {
		return err
	}
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("The request is invalid. Details: the body is not a valid SearchRequest: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return indexNotFound(name)
	}
	hits, err := ix.run(&req, s.replica(req.SessionID))
	if err != nil {
		return err
	}
	sel, err := ix.parseSelect(req.Select)
	if err != nil {
		return err
	}
	resp := map[string]any{}
	if req.Count {
		resp["@odata.count"] = len(hits)
	}
	top := defaultTop
	if req.Top != nil {
		top = *req.Top
	}
	if top > MaxPageSize && len(hits) > req.Skip+MaxPageSize {
		next := map[string]any{}
		_ = decodeNumbers(body, &next)
		next["skip"] = req.Skip + MaxPageSize
		next["top"] = top - MaxPageSize
		resp["@search.nextPageParameters"] = next
		resp["@odata.nextLink"] = "http://" + r.Host + "/indexes('" + name + "')/docs/search.post.search?api-version=" + r.URL.Query().Get("api-version")
		top = MaxPageSize
	}
	hits = page(hits, req.Skip, top)
	value := make([]map[string]any, 0, len(hits))
	for _, h := range hits {
		d := ix.project(ix.docs[h.key], sel)
		d["@search.score"] = h.score
		if h.reranker != nil {
			d["@search.rerankerScore"] = *h.reranker
		}
		value = append(value, d)
	}
	resp["value"] = value
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func page(hits []hit, skip, top int) []hit {
	if skip >= len(hits) {
		return nil
	}
	hits = hits[skip:]
	if top < len(hits) {
		hits = hits[:top]
	}
	return hits
}

// replica picks the replica answering a search (see Options.Replicas): the
// one its sessionId picks, or else the next in turn; s.mu is held.
func (s *Server) replica(sessionID string) int {
	if s.opts.Replicas <= 1 {
		return 0
	}
	if sessionID != "" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(sessionID))
		return int(h.Sum32() % uint32(s.opts.Replicas))
	}
	s.nextReplica = (s.nextReplica + 1) % s.opts.Replicas
	return s.nextReplica
}

// replicaOrder orders keys as replica does when nothing else does: by key
// on replica 0, and in an order of its own on each other replica.
func replicaOrder(keys []string, replica int) {
	if replica == 0 {
		return
	}
	rank := make(map[string]uint64, len(keys))
	for _, k := range keys {
		h := fnv.New64a()
		_, _ = h.Write([]byte{byte(replica), byte(replica >> 8)})
		_, _ = h.Write([]byte(k))
		rank[k] = h.Sum64()
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(rank[a], rank[b]), strings.Compare(a, b)) })
}

// run checks the request and ranks the matching documents as replica
// orders them; s.mu is held.
func (ix *index) run(req *searchRequest, replica int) ([]hit, *apiError) {
	if err := checkPaging(req); err != nil {
		return nil, err
	}
	if len(req.Facets) > 0 {
		return nil, badRequest("facets are not emulated by this test server.")
	}
	var order []orderClause
	if strings.TrimSpace(req.OrderBy) != "" {
		if req.QueryType == "semantic" {
			return nil, badRequest("$orderby with semantic ranking is not emulated by this test server.")
		}
		var err *apiError
		if order, err = ix.parseOrderBy(req.OrderBy); err != nil {
			return nil, err
		}
	}
	keep := func(map[string]any) bool { return true }
	if strings.TrimSpace(req.Filter) != "" {
		pred, err := ix.parseFilter(req.Filter)
		if err != nil {
			return nil, err
		}
		keep = func(d map[string]any) bool { return pred(d, nil) }
	}
	keys := ix.sortedKeys()
	replicaOrder(keys, replica) // the order of ties
	cands := keys[:0:0]
	for _, k := range keys {
		if keep(ix.docs[k]) {
			cands = append(cands, k)
		}
	}
	var lists [][]hit
	var weights []float64
	text := strings.TrimSpace(req.Search)
	if text != "" && text != "*" {
		fields, err := ix.searchFields(req.SearchFields)
		if err != nil {
			return nil, err
		}
		lists = append(lists, ix.bm25(cands, fields, terms(text), req.SearchMode == "all"))
		weights = append(weights, 1)
	}
	vcands := cands
	if req.VectorFilterMode == "postFilter" {
		vcands = keys // the k nearest of all documents, filtered afterwards
	}
	for i, vq := range req.VectorQueries {
		vl, err := ix.vectorSearch(i, vq, vcands)
		if err != nil {
			return nil, err
		}
		if req.VectorFilterMode == "postFilter" {
			for j, l := range vl {
				vl[j] = slices.DeleteFunc(l, func(h hit) bool { return !keep(ix.docs[h.key]) })
			}
		}
		w := 1.0
		if vq.Weight != nil {
			w = *vq.Weight
		}
		lists = append(lists, vl...)
		for range vl {
			weights = append(weights, w)
		}
	}
	var hits []hit
	switch len(lists) {
	case 0:
		for _, k := range cands {
			hits = append(hits, hit{key: k, score: 1})
		}
	case 1:
		hits = lists[0]
	default:
		hits = fuse(lists, weights)
	}
	if req.QueryType == "semantic" {
		return ix.rerank(req, hits)
	}
	if order != nil {
		ix.orderHits(hits, order)
	}
	return hits, nil
}

func checkPaging(req *searchRequest) *apiError {
	if req.Top != nil && *req.Top < 0 {
		return badRequest("Invalid value for top: %d; top must not be negative.\r\nParameter name: top", *req.Top)
	}
	if req.Skip < 0 || req.Skip > maxSkip {
		return &apiError{status: http.StatusBadRequest, code: "ParameterValueOutOfRange", message: fmt.Sprintf("Value must be between 0 and %d.\r\nParameter name: $skip", maxSkip)}
	}
	if strings.HasPrefix(req.SessionID, "_") {
		return badRequest("Invalid value for sessionId: '%s'; the value used as sessionId cannot start with a '_' character.\r\nParameter name: sessionId", req.SessionID)
	}
	switch req.SearchMode {
	case "", "any", "all":
	default:
		return badRequest("Invalid value for searchMode: '%s'; use any or all.", req.SearchMode)
	}
	switch req.VectorFilterMode {
	case "", "preFilter", "postFilter":
	default:
		return badRequest("Invalid value for vectorFilterMode: '%s'; use preFilter or postFilter.", req.VectorFilterMode)
	}
	switch req.QueryType {
	case "", "simple", "semantic":
	case "full":
		return badRequest("queryType full (Lucene syntax) is not emulated by this test server; use simple or semantic.")
	default:
		return badRequest("Invalid value for queryType: '%s'; use simple, full or semantic.", req.QueryType)
	}
	return nil
}

// searchFields returns the fields of a text query: the searchFields list, or
// every searchable string field.
func (ix *index) searchFields(list string) ([]*field, *apiError) {
	var out []*field
	if strings.TrimSpace(list) == "" {
		for _, f := range ix.fields {
			if f.searchable() && f.isStringField() {
				out = append(out, f)
			}
		}
		return out, nil
	}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		f, ok := ix.byName[n]
		if !ok {
			return nil, badRequest("Unknown field '%s' in search field list.\r\nParameter name: searchFields", n)
		}
		if !f.searchable() || !f.isStringField() {
			return nil, badRequest("The field '%s' in the search field list is not searchable.\r\nParameter name: searchFields", n)
		}
		out = append(out, f)
	}
	return out, nil
}

// terms tokenizes text: lower-cased runs of letters and digits.
func terms(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// fieldText returns the text of a string or string collection value.
func fieldText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var b strings.Builder
		for _, e := range t {
			if s, ok := e.(string); ok {
				b.WriteString(s)
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	return ""
}

// bm25 scores the candidates with BM25 (k1 1.2, b 0.75) summed over fields.
// Statistics are computed over the whole index, as the service does.
func (ix *index) bm25(cands []string, fields []*field, q []string, all bool) []hit {
	const k1, b = 1.2, 0.75
	n := float64(len(ix.docs))
	type stats struct {
		df     map[string]int
		avgLen float64
	}
	fs := make([]stats, len(fields))
	for i, f := range fields {
		st := stats{df: map[string]int{}}
		total := 0
		for _, d := range ix.docs {
			ts := terms(fieldText(d[f.Name]))
			total += len(ts)
			seen := map[string]bool{}
			for _, t := range ts {
				if !seen[t] {
					seen[t] = true
					st.df[t]++
				}
			}
		}
		if len(ix.docs) > 0 {
			st.avgLen = float64(total) / n
		}
		fs[i] = st
	}
	var hits []hit
	for _, k := range cands {
		d := ix.docs[k]
		score, matched := 0.0, map[string]bool{}
		for i, f := range fields {
			ts := terms(fieldText(d[f.Name]))
			tf := map[string]int{}
			for _, t := range ts {
				tf[t]++
			}
			for _, t := range q {
				c := float64(tf[t])
				if c == 0 {
					continue
				}
				matched[t] = true
				df := float64(fs[i].df[t])
				idf := math.Log(1 + (n-df+0.5)/(df+0.5))
				norm := 1 - b + b*float64(len(ts))/math.Max(fs[i].avgLen, 1)
				score += idf * c * (k1 + 1) / (c + k1*norm)
			}
		}
		if len(matched) == 0 || all && len(matched) < len(uniq(q)) {
			continue
		}
		hits = append(hits, hit{key: k, score: score})
	}
	sortHits(hits)
	return hits
}

func uniq(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// sortHits orders by score descending, then key ascending, so that results
// are deterministic.
func sortHits(hits []hit) {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].key < hits[j].key
	})
}

// vectorSearch runs one vector query: one ranked list per named field.
func (ix *index) vectorSearch(i int, vq vectorQuery, cands []string) ([][]hit, *apiError) {
	if vq.Kind != "vector" {
		return nil, badRequest("vectorQueries[%d]: kind '%s' is not supported; this service has no vectorizer, so send kind 'vector' with the query vector.", i, vq.Kind)
	}
	if strings.TrimSpace(vq.Fields) == "" {
		return nil, badRequest("vectorQueries[%d]: fields is required: name the vector field to search.", i)
	}
	k := defaultTop
	if vq.K != nil {
		if *vq.K < 1 {
			return nil, badRequest("vectorQueries[%d]: k must be at least 1.", i)
		}
		k = *vq.K
	}
	if vq.Weight != nil && *vq.Weight <= 0 {
		return nil, badRequest("vectorQueries[%d]: weight must be a positive number.", i)
	}
	var lists [][]hit
	for _, n := range strings.Split(vq.Fields, ",") {
		n = strings.TrimSpace(n)
		f, ok := ix.byName[n]
		if !ok || !f.isVector() {
			return nil, badRequest("vectorQueries[%d]: the field '%s' is not a vector field of index '%s'.\r\nParameter name: vector.fields", i, n, ix.name)
		}
		if len(vq.Vector) != *f.Dimensions {
			return nil, badRequest("The vector field '%s' dimensionality must match the field definition's 'dimensions' property. Expected: '%d'. Actual: '%d'. (vectorQueries[%d])", n, *f.Dimensions, len(vq.Vector), i)
		}
		var hits []hit
		for _, key := range cands {
			v, ok := ix.docs[key][n].([]float32)
			if !ok {
				continue
			}
			hits = append(hits, hit{key: key, score: similarity(f.metric, vq.Vector, v)})
		}
		sortHits(hits)
		if len(hits) > k {
			hits = hits[:k]
		}
		lists = append(lists, hits)
	}
	return lists, nil
}

// similarity is the @search.score of a vector match under metric.
func similarity(metric string, q []float64, v []float32) float64 {
	var dot, nq, nv, dist float64
	for i := range q {
		x, y := q[i], float64(v[i])
		dot += x * y
		nq += x * x
		nv += y * y
		dist += (x - y) * (x - y)
	}
	switch metric {
	case "euclidean":
		return 1 / (1 + math.Sqrt(dist))
	case "dotProduct":
		return 1 / (1 + math.Exp(-dot))
	}
	cos := 0.0
	if nq > 0 && nv > 0 {
		cos = dot / math.Sqrt(nq*nv)
	}
	return 1 / (1 + (1 - cos))
}

// fuse combines ranked lists by reciprocal rank fusion: the sum over lists
// of weight/(60+rank), with 1-based ranks.
func fuse(lists [][]hit, weights []float64) []hit {
	scores := map[string]float64{}
	for li, l := range lists {
		for r, h := range l {
			scores[h.key] += weights[li] / float64(rrfK+r+1)
		}
	}
	hits := make([]hit, 0, len(scores))
	for k, s := range scores {
		hits = append(hits, hit{key: k, score: s})
	}
	sortHits(hits)
	return hits
}

// rerank is the deterministic stand-in for semantic ranking: the top 50
// hits get a reranker score in [0, 4]: 4 times the share of distinct query
// words present in the configuration's prioritized fields. They are
// reordered by it, ties keeping their fused order.
func (ix *index) rerank(req *searchRequest, hits []hit) ([]hit, *apiError) {
	name := req.SemanticConfiguration
	if name == "" {
		name = ix.defSem
	}
	if name == "" {
		return nil, badRequest("queryType semantic requires semanticConfiguration, and index '%s' has no semantic.defaultConfiguration.\r\nParameter name: semanticConfiguration", ix.name)
	}
	cfg, ok := ix.semantic[name]
	if !ok {
		return nil, badRequest("Unknown semantic configuration '%s' for index '%s'; define it under semantic.configurations.\r\nParameter name: semanticConfiguration", name, ix.name)
	}
	qtext := req.SemanticQuery
	if qtext == "" {
		qtext = req.Search
	}
	q := uniq(terms(qtext))
	if len(q) == 0 {
		return nil, badRequest("queryType semantic requires query text in search or semanticQuery.")
	}
	if len(hits) > semanticWindow {
		hits = hits[:semanticWindow]
	}
	out := make([]hit, len(hits))
	for i, h := range hits {
		d := ix.docs[h.key]
		words := map[string]bool{}
		for _, fname := range cfg.names() {
			for _, w := range terms(fieldText(d[fname])) {
				words[w] = true
			}
		}
		found := 0
		for t := range q {
			if words[t] {
				found++
			}
		}
		r := 4 * float64(found) / float64(len(q))
		out[i] = hit{key: h.key, score: h.score, reranker: &r}
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].reranker > *out[j].reranker })
	return out, nil
}
