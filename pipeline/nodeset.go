package pipeline

import (
	"bytes"
	"slices"
)

// nodeKind says how the manifest knows a node id of a document that a run
// is about to read again.
type nodeKind uint8

const (
	nodeUnknown   nodeKind = iota // not among the document's ids
	nodeRecorded                  // among the ids of the document's record
	nodeAcked                     // acknowledged by a run that did not commit the document: in the store
	nodeIntended                  // intended by a run that died, not acknowledged: maybe in the store
	nodeRewritten                 // of the record, and intended or acknowledged by a run that died: in the store, its metadata maybe that run's
)

// merge returns the kind of an id added with kinds a and b: the record's
// ids are in the store whatever a dead run did with them, but one a dead
// run also wrote may carry that run's metadata (it rewrites a reused
// chunk's metadata in place); acknowledged comes before intended.
func merge(a, b nodeKind) nodeKind {
	switch {
	case a == b:
		return a
	case a == nodeRewritten || b == nodeRewritten || a == nodeRecorded || b == nodeRecorded:
		return nodeRewritten
	}
	return nodeAcked // one acknowledged, the other intended
}

// nodeSet holds the node ids the store may hold for a document, each with
// its nodeKind, for the document's chunks to be looked up in as they are
// cut. A single huge document may have hundreds of thousands, so the ids
// Sluice writes (sink.NodeID: 64 lowercase hex digits, a SHA-256) are kept
// as the first idPrefix bytes they spell, sorted; only other ids (nodes a
// listing of the store found, written by other tools) are kept as strings.
//
// Keeping 160 of the 256 bits, as Nix store paths keep of theirs, takes
// 21 bytes an id instead of 33: for the 551,333 chunks of a 1 GiB file of
// Go source, 11.6 MB instead of 18.2 MB, held while the whole file is read
// again, which kept the second run of that file above 100 MiB at its peak
// (benchmarks/RESULTS.md, section 3). Two ids of one document that agree
// in those 160 bits share an entry: with a million chunks the chance is
// below 2^-120, and finding such a pair on purpose takes about 2^80
// hashes. Its effect would be a chunk taken for one the store holds and
// not written, which a run with --verify writes.
//
// A nodeSet is filled with add, then frozen with freeze before kind and
// len are called.
type nodeSet struct {
	hex   []hexNode           // sorted by id, each id once, once frozen
	other map[string]nodeKind // ids that are not 64 lowercase hex digits
}

// idPrefix is how many of the 32 bytes that a node id of 64 lowercase hex
// digits spells a nodeSet keeps (see nodeSet).
const idPrefix = 20

// hexNode is the first idPrefix bytes of a node id of 64 lowercase hex
// digits, decoded, and its kind.
type hexNode struct {
	id   [idPrefix]byte
	kind nodeKind
}

// newNodeSet returns an empty nodeSet with room for n ids.
func newNodeSet(n int) *nodeSet {
	return &nodeSet{hex: make([]hexNode, 0, n)}
}

// add records the node id with kind k. An id added more than once gets
// the kinds merged (see merge).
func (s *nodeSet) add(id string, k nodeKind) {
	if b, ok := decodeNodeID(id); ok {
		s.hex = append(s.hex, hexNode{id: b, kind: k})
		return
	}
	if s.other == nil {
		s.other = make(map[string]nodeKind)
	}
	if old, ok := s.other[id]; ok {
		k = merge(old, k)
	}
	s.other[id] = k
}

// freeze sorts the set and keeps each id added more than once once, with
// its kinds merged (see add).
func (s *nodeSet) freeze() {
	slices.SortFunc(s.hex, func(a, b hexNode) int { return bytes.Compare(a.id[:], b.id[:]) })
	out := s.hex[:0]
	for _, n := range s.hex {
		if last := len(out) - 1; last >= 0 && out[last].id == n.id {
			out[last].kind = merge(out[last].kind, n.kind)
			continue
		}
		out = append(out, n)
	}
	clear(s.hex[len(out):])
	s.hex = out
}

// kind returns how the manifest knows the node id: nodeUnknown if it is
// not in the set, or s is nil.
func (s *nodeSet) kind(id string) nodeKind {
	if s == nil {
		return nodeUnknown
	}
	b, ok := decodeNodeID(id)
	if !ok {
		return s.other[id]
	}
	i, found := slices.BinarySearchFunc(s.hex, b, func(n hexNode, b [idPrefix]byte) int {
		return bytes.Compare(n.id[:], b[:])
	})
	if !found {
		return nodeUnknown
	}
	return s.hex[i].kind
}

// len returns the number of ids in the set, each counted once; 0 for a nil
// s.
func (s *nodeSet) len() int {
	if s == nil {
		return 0
	}
	return len(s.hex) + len(s.other)
}

// decodeNodeID returns the first idPrefix bytes that a node id of exactly
// 64 lowercase hex digits spells. Any other id, one with an uppercase digit
// among them, is not decoded (ok false), so that an id is kept one way
// only: no id kept as a string decodes to the prefix of another.
func decodeNodeID(id string) (b [idPrefix]byte, ok bool) {
	if len(id) != 64 {
		return b, false
	}
	for i := range b {
		hi, ok1 := hexDigit(id[2*i])
		lo, ok2 := hexDigit(id[2*i+1])
		if !ok1 || !ok2 {
			return b, false
		}
		b[i] = hi<<4 | lo
	}
	for i := 2 * idPrefix; i < len(id); i++ {
		if _, ok := hexDigit(id[i]); !ok {
			return b, false
		}
	}
	return b, true
}

// hexDigit returns the value of a lowercase hex digit.
func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
