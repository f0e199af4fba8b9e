// Package sink defines the vector store contract that Sluice writes to and
// queries: nodes (chunks with their embeddings and metadata), metadata filters,
// query modes, and the VectorStore interface. Concrete stores live in
// subpackages: sink/local (the embedded on-disk default) and sink/cloudsearch
// (Cloud AI Search over REST).
package sink

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
)

// Node is one chunk of a source document as stored in a vector store.
type Node struct {
	// ID is the node id, deterministic for a chunk (see NodeID).
	ID string `json:"id"`
	// RefDocID is the id of the source document the node came from; Delete
	// removes all nodes that share it.
	RefDocID string `json:"doc_id"`
	// Text is the chunk text.
	Text string `json:"text"`
	// Embedding is the chunk's vector; it may be nil on nodes read back from
	// a store that hides it.
	Embedding []float32 `json:"-"`
	// Metadata holds the document's metadata. Values are strings, float64 or
	// int numbers, bools, or []string (a COLLECTION field).
	Metadata map[string]any `json:"metadata,omitempty"`
	// StartChar and EndChar are the chunk's offsets in the source text,
	// LlamaIndex's start_char_idx and end_char_idx: in UTF-16 code units, as
	// LlamaIndex.TS counts them (JavaScript string indexes; LlamaIndex for
	// Python counts code points, the same for text without characters
	// beyond U+FFFF), into the document's text as the reader returns it,
	// which is the file without a leading UTF-8 byte-order mark.
	StartChar int `json:"start_char_idx"`
	EndChar   int `json:"end_char_idx"`
}

// ReservedMetadataKey reports whether key is one that LlamaIndex's node
// format keeps for itself in a stored node's metadata (_node_content,
// _node_type, document_id, doc_id, ref_doc_id), so that a store written in
// that format reads it as the node's, not as metadata: source.metadata
// cannot set it.
func ReservedMetadataKey(key string) bool {
	switch key {
	case "_node_content", "_node_type", "document_id", "doc_id", "ref_doc_id":
		return true
	}
	return false
}

// NodeRef names a stored node by its id and its reference document id,
// as stores list them (see pipeline.NodeScanner).
type NodeRef struct {
	ID       string
	RefDocID string
}

// ScoredNode is a Node returned by a query together with its score. Higher
// scores are better; their scale depends on the query mode.
type ScoredNode struct {
	Node
	Score float64 `json:"score"`
	// RerankerScore is set by semantic ranking (SemanticHybrid mode) only.
	RerankerScore *float64 `json:"reranker_score,omitempty"`
}

// QueryMode selects how a query is matched.
type QueryMode string

// Query modes, as the seed's VectorStoreQueryMode values.
const (
	// Vector ranks nodes by cosine similarity of their embeddings (default).
	Vector QueryMode = "vector"
	// Hybrid fuses vector and full-text rankings by reciprocal rank fusion.
	Hybrid QueryMode = "hybrid"
	// SemanticHybrid is Hybrid followed by semantic reranking.
	SemanticHybrid QueryMode = "semantic_hybrid"
	// Sparse is full-text (BM25) search only.
	Sparse QueryMode = "sparse"
)

// ParseQueryMode parses a mode name, in any letter case. The empty string
// and "default", the name of LlamaIndex's VectorStoreQueryMode.DEFAULT,
// mean Vector.
func ParseQueryMode(s string) (QueryMode, error) {
	switch m := QueryMode(strings.ToLower(s)); m {
	case "", "default", Vector:
		return Vector, nil
	case Hybrid, SemanticHybrid, Sparse:
		return m, nil
	}
	return "", unsupportedMode(s)
}

// unsupportedMode is the error for a query mode that is not one of the four.
func unsupportedMode(s string) error {
	return &UnsupportedError{What: "query mode " + quote(s), Hint: "use one of vector, hybrid, semantic_hybrid, sparse"}
}

// NeedsText reports whether the mode requires Query.QueryStr.
func (m QueryMode) NeedsText() bool { return m == Hybrid || m == SemanticHybrid || m == Sparse }

// NeedsEmbedding reports whether the mode requires Query.Embedding.
func (m QueryMode) NeedsEmbedding() bool {
	return m == "" || m == Vector || m == Hybrid || m == SemanticHybrid
}

// Query is a similarity search against a store.
type Query struct {
	// Mode defaults to Vector.
	Mode QueryMode
	// Embedding is the query vector; required by Vector, Hybrid and SemanticHybrid.
	Embedding []float32
	// QueryStr is the query text; required by Hybrid, SemanticHybrid and Sparse.
	QueryStr string
	// TopK is the number of results; 0 means DefaultTopK.
	TopK int
	// Filters restricts results to nodes whose metadata matches; nil matches all.
	Filters *MetadataFilters
}

// DefaultTopK is the number of results of a query whose TopK is 0, as LlamaIndex's similarityTopK.
const DefaultTopK = 2

// Validate checks the query against the rules every store shares: the text
// required by text modes (seed §8.3) and the vector required by vector modes.
func (q Query) Validate() error {
	// The constants only: ParseQueryMode turns user input into one.
	switch q.Mode {
	case "", Vector, Hybrid, SemanticHybrid, Sparse:
	default:
		return unsupportedMode(string(q.Mode))
	}
	if q.Mode.NeedsText() && strings.TrimSpace(q.QueryStr) == "" {
		return &QueryError{Reason: "mode " + string(q.Mode) + " requires queryStr (the query text, not white space alone)", Hint: "pass the query text, or use mode vector"}
	}
	if q.Mode.NeedsEmbedding() && len(q.Embedding) == 0 {
		return &QueryError{Reason: "mode " + string(q.modeOrDefault()) + " requires a query embedding"}
	}
	if q.TopK < 0 {
		return &QueryError{Reason: "topK must not be negative"}
	}
	if q.Filters != nil {
		return q.Filters.Validate()
	}
	return nil
}

func (q Query) modeOrDefault() QueryMode {
	if q.Mode == "" {
		return Vector
	}
	return q.Mode
}

// K returns TopK, or DefaultTopK when TopK is 0.
func (q Query) K() int {
	if q.TopK <= 0 {
		return DefaultTopK
	}
	return q.TopK
}

// VectorStore is the contract of the seed's vector store: add nodes, delete a
// reference document's nodes, read nodes back, and query.
//
// Implementations are safe for concurrent use.
type VectorStore interface {
	// Add inserts or replaces nodes (an existing node with the same ID is
	// overwritten) and returns their ids. It returns only after the nodes are
	// durable. On error, the returned *WriteError says which nodes failed.
	Add(ctx context.Context, nodes []Node) ([]string, error)
	// Delete removes every node whose RefDocID is refDocID.
	Delete(ctx context.Context, refDocID string) error
	// DeleteNodes removes the nodes with the given ids; unknown ids are ignored.
	DeleteNodes(ctx context.Context, ids []string) error
	// GetNodes returns stored nodes. ids, filters and limit combine; a nil
	// ids means all ids, nil filters match all, limit 0 means no limit.
	// The order is the store's own (sink/local: by reference document and
	// offset; sink/cloudsearch: by node id), so a limit may keep different
	// nodes in different stores; the seed leaves it unspecified.
	GetNodes(ctx context.Context, ids []string, filters *MetadataFilters, limit int) ([]Node, error)
	// Query returns the best matches for q, best first.
	Query(ctx context.Context, q Query) ([]ScoredNode, error)
	// Close releases the store; calling it twice is harmless.
	Close() error
}

// Sentinel errors; typed errors below wrap them so callers can use errors.Is.
var (
	// ErrUnsupported marks an operation or option a store does not support.
	ErrUnsupported = errors.New("sink: unsupported")
	// ErrInvalidQuery marks a query that breaks a rule of the contract.
	ErrInvalidQuery = errors.New("sink: invalid query")
	// ErrInvalidFilter marks a metadata filter that cannot be applied.
	ErrInvalidFilter = errors.New("sink: invalid filter")
	// ErrDimensionMismatch marks a vector whose length differs from the store's.
	ErrDimensionMismatch = errors.New("sink: dimension mismatch")
	// ErrWrite marks nodes a store did not accept.
	ErrWrite = errors.New("sink: write failed")
	// ErrUnavailable marks a store that cannot take any write: its
	// credentials are refused, its index is missing or it cannot be
	// reached after retries. Unlike a node the store rejects, retrying
	// other nodes cannot succeed, so a pipeline stops instead of failing
	// every document in turn.
	ErrUnavailable = errors.New("sink: store unavailable")
)

// UnsupportedError reports an operation or option a store does not support.
type UnsupportedError struct {
	What string // what is unsupported
	Hint string // how to get on, if anything helps
}

// Error returns the message of the UnsupportedError.
func (e *UnsupportedError) Error() string { return withHint("sink: unsupported: "+e.What, e.Hint) }

// Unwrap returns ErrUnsupported.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// QueryError reports a query that breaks a rule of the contract.
type QueryError struct {
	Reason string
	Hint   string
}

// Error returns the message of the QueryError.
func (e *QueryError) Error() string { return withHint("sink: invalid query: "+e.Reason, e.Hint) }

// Unwrap returns ErrInvalidQuery.
func (e *QueryError) Unwrap() error { return ErrInvalidQuery }

// DimensionError reports a vector whose length differs from the configured
// embeddingDimensionality. It is raised before anything is uploaded.
type DimensionError struct {
	Want, Got int
	NodeID    string // the offending node, if known
}

// Error returns the message of the DimensionError.
func (e *DimensionError) Error() string {
	s := "sink: dimension mismatch: embeddingDimensionality is " + itoa(e.Want) + " but the embedding has " + itoa(e.Got) + " dimensions"
	if e.NodeID != "" {
		s += " (node " + e.NodeID + ")"
	}
	return s + "; set embeddingDimensionality to the embedding model's output size"
}

// Unwrap returns ErrDimensionMismatch.
func (e *DimensionError) Unwrap() error { return ErrDimensionMismatch }

// WriteError reports nodes a store did not accept. Nodes not listed in
// Failed were written.
type WriteError struct {
	// Failed maps node id to the reason it was rejected.
	Failed map[string]error
	// Deleting says that the nodes were to be deleted, not written: the
	// message then says "not deleted".
	Deleting bool
}

// Error returns the message of the WriteError. When several nodes failed
// it names the one with the smallest id, so the message is the same from
// run to run.
func (e *WriteError) Error() string {
	verb := "written"
	if e.Deleting {
		verb = "deleted"
	}
	if len(e.Failed) == 0 {
		if e.Deleting {
			return "sink: delete failed"
		}
		return "sink: write failed"
	}
	id := slices.Min(slices.Collect(maps.Keys(e.Failed)))
	msg := "<nil>"
	if err := e.Failed[id]; err != nil {
		msg = err.Error()
	}
	if len(e.Failed) == 1 {
		return "sink: node " + id + " not " + verb + ": " + msg
	}
	return "sink: " + itoa(len(e.Failed)) + " nodes not " + verb + ", e.g. " + id + ": " + msg
}

// Unwrap returns ErrWrite.
func (e *WriteError) Unwrap() error { return ErrWrite }

// CheckDimensions returns a *DimensionError for the first node whose
// embedding length is not dims.
func CheckDimensions(nodes []Node, dims int) error {
	for i := range nodes {
		if len(nodes[i].Embedding) != dims {
			return &DimensionError{Want: dims, Got: len(nodes[i].Embedding), NodeID: nodes[i].ID}
		}
	}
	return nil
}

func withHint(s, hint string) string {
	if hint == "" {
		return s
	}
	return s + "; " + hint
}

// MetadataUpdater is implemented by stores that can replace the metadata
// and offsets of existing nodes without their embeddings. Incremental runs
// use it when a document changed around chunks whose text did not, so those
// chunks are not embedded again. Nodes passed to it carry no Embedding.
type MetadataUpdater interface {
	UpdateMetadata(ctx context.Context, nodes []Node) error
}

// NodePager is implemented by stores that can return the nodes
// GetNodes(ctx, nil, filters, limit) returns a page at a time, in the same
// order, so that a caller listing every node that matches never holds them
// all (sink/cloudsearch.Store does). `sluice get` uses it when the store
// cannot list its nodes otherwise.
type NodePager interface {
	// PageNodes calls fn with the nodes that match filters (all for nil),
	// at most limit of them in all (0: no limit), a page at a time, until
	// fn returns an error, which PageNodes returns; fn must not keep the
	// slice.
	PageNodes(ctx context.Context, filters *MetadataFilters, limit int, fn func(nodes []Node) error) error
}
