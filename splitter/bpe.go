package splitter

// Byte-pair merging, counting only: a piece of text becomes as many tokens
// as parts are left once no adjacent pair of parts is in the vocabulary,
// merging the lowest-ranked pair first (the leftmost on ties).

import (
	"strings"
	"sync"
	"sync/atomic"
)

const (
	smallPiece = 96 // longest piece merged by mergeSmall
	noRank     = ^uint32(0)
)

// countLong is countPiece for a piece too long for mergeSmall: a run of
// letters, of white space, of punctuation. A run of one repeated unit of
// up to four bytes ("aaaa", "----", "═══", "-=-=") is counted once per
// unit and length, as the chunks of such a run all have the same few
// lengths; other pieces go through longMemo, as the cutting of a long
// text counts some of them again. They are merged in parts where they
// can be (see tokenPairs), which is faster.
func (t *cl100k) countLong(p string) int {
	k := period(p)
	if k > 0 {
		if n, ok := t.runs.get(p, k); ok {
			return n
		}
	} else if n, ok := t.long.get(p); ok {
		return n
	}
	// No merge joins two bytes that no token holds side by side: the parts
	// between such pairs of bytes merge on their own (see tokenPairs).
	n, start := 0, 0
	for i := 1; i < len(p); i++ {
		if !t.joins.has(p[i-1], p[i]) {
			n += t.mergeSegment(p[start:i])
			start = i
		}
	}
	n += t.mergeSegment(p[start:])
	if k > 0 {
		t.runs.put(p, k, n)
	} else {
		t.long.put(p, n)
	}
	return n
}

// longMemoBytes bounds the bytes of the pieces in longMemo.
const longMemoBytes = 1 << 20

// longMemo caches the counts of pieces longer than smallPiece, holding
// no more than longMemoBytes of them (it starts afresh when full), so
// that a long run of random letters, whose chunk-long pieces never repeat,
// cannot fill memory with them. Long pieces are rare, so a lock does.
type longMemo struct {
	mu     sync.Mutex
	counts map[string]int
	bytes  int
}

// longEntryBytes is what an entry costs besides its piece's bytes.
const longEntryBytes = 64

func (m *longMemo) get(p string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.counts[p]
	return n, ok
}

func (m *longMemo) put(p string, n int) {
	cost := len(p) + longEntryBytes
	if cost > longMemoBytes/8 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil || m.bytes+cost > longMemoBytes {
		m.counts, m.bytes = map[string]int{}, 0
	}
	m.counts[strings.Clone(p)] = n
	m.bytes += cost
}

// mergeSegment counts a part of a long piece, without the memo: such parts
// (of random letters, say) seldom repeat.
func (t *cl100k) mergeSegment(p string) int {
	switch {
	case len(p) == 1:
		return 1
	case len(p) <= t.maxTokenLen && t.ranks.rank(p) != noRank:
		return 1
	case len(p) <= smallPiece:
		return t.mergeSmall(p)
	}
	return t.mergeLarge(p)
}

// pairSet is a set of byte pairs.
type pairSet [256 * 256 / 64]uint64

func (s *pairSet) add(a, b byte)      { i := int(a)<<8 | int(b); s[i/64] |= 1 << (i % 64) }
func (s *pairSet) has(a, b byte) bool { i := int(a)<<8 | int(b); return s[i/64]&(1<<(i%64)) != 0 }

// tokenPairs returns the pairs of adjacent bytes of the tokens.
//
// Byte-pair merging joins two parts only if they make a token, so never
// two parts that meet between bytes a and b unless some token holds "ab".
// Where no token does, the parts on either side merge independently: the
// lowest-ranked pair (leftmost on ties) of the whole piece is always the
// lowest-ranked of its side, so each side merges as it would alone, and
// the piece has as many tokens as its sides together. (Of the 676 pairs
// of lower-case letters, 18 are in no cl100k_base token, "qz" or "jx":
// random letters break every 37 bytes on average.)
func tokenPairs(tokens []string) *pairSet {
	s := new(pairSet)
	for _, tok := range tokens {
		for i := 1; i < len(tok); i++ {
			s.add(tok[i-1], tok[i])
		}
	}
	return s
}

// period returns the period of p if it is at most four bytes (p[k:] ==
// p[:len(p)-k]: p repeats its first k bytes), else 0.
func period(p string) int {
	for k := 1; k <= 4 && k < len(p); k++ {
		if p[k:] == p[:len(p)-k] {
			return k
		}
	}
	return 0
}

// runSlots is the size of the run-count cache (a power of two).
const runSlots = 256

// runMemo is a lock-free, direct-mapped cache of the token counts of long
// pieces of period k <= 4, keyed by their first k bytes and their length,
// which determine them; shared by all goroutines.
type runMemo struct {
	slots [runSlots]atomic.Pointer[runEntry]
}

type runEntry struct {
	unit          uint32 // the first k bytes, little-endian
	k, size, ntok int
}

// runKey returns the unit of p, of period k, and its slot.
func runKey(p string, k int) (unit uint32, slot int) {
	for i := k - 1; i >= 0; i-- {
		unit = unit<<8 | uint32(p[i])
	}
	h := (uint64(unit)*0x9e3779b97f4a7c15 ^ uint64(len(p))*0xbf58476d1ce4e5b9 ^ uint64(k)) >> 32
	return unit, int(h & (runSlots - 1))
}

// get returns the count of p, of period k, if cached.
func (m *runMemo) get(p string, k int) (int, bool) {
	unit, slot := runKey(p, k)
	if e := m.slots[slot].Load(); e != nil && e.unit == unit && e.k == k && e.size == len(p) {
		return e.ntok, true
	}
	return 0, false
}

// put caches n as the count of p, of period k.
func (m *runMemo) put(p string, k, n int) {
	unit, slot := runKey(p, k)
	m.slots[slot].Store(&runEntry{unit: unit, k: k, size: len(p), ntok: n})
}

// mergeSmall merges the lowest-ranked adjacent pair (leftmost on ties) until
// none is left, scanning linearly; state lives on the stack.
func (t *cl100k) mergeSmall(p string) int {
	var starts [smallPiece + 1]int
	var ranks [smallPiece]uint32
	m := len(p) + 1 // boundaries, including len(p)
	for k := 0; k < m; k++ {
		starts[k] = k
	}
	pair := func(k int) uint32 {
		if k+2 >= m {
			return noRank
		}
		return t.ranks.rank(p[starts[k]:starts[k+2]])
	}
	for k := 0; k < m-1; k++ {
		ranks[k] = pair(k)
	}
	for m > 2 {
		best, at := noRank, -1
		for k := 0; k < m-2; k++ {
			if ranks[k] < best {
				best, at = ranks[k], k
			}
		}
		if at < 0 {
			break
		}
		copy(starts[at+1:m-1], starts[at+2:m])
		copy(ranks[at+1:m-2], ranks[at+2:m-1])
		m--
		ranks[at] = pair(at)
		if at > 0 {
			ranks[at-1] = pair(at - 1)
		}
	}
	return m - 1
}

// mergeLarge is mergeSmall for long pieces: a linked list of part
// boundaries and a min-heap of candidate merges keep it O(n log n). Its
// scratch space (about 20 bytes per byte of p) is reused from call to
// call; the splitter merges no piece longer than maxTokenLen times the
// chunk size (see countPieceUpTo), so that stays within a few MiB.
func (t *cl100k) mergeLarge(p string) int {
	n := len(p)
	sc := mergePool.Get().(*mergeScratch)
	defer mergePool.Put(sc)
	next := grown(sc.next, n+1)
	prev := grown(sc.prev, n+1)
	rk := grown(sc.rk, n+1)
	sc.next, sc.prev, sc.rk = next, prev, rk
	for i := range next {
		next[i], prev[i], rk[i] = int32(i+1), int32(i-1), noRank
	}
	next[n] = -1
	pairRank := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		return t.ranks.rank(p[i:next[j]])
	}
	h := sc.heap[:0]
	for i := int32(0); int(i) < n-1; i++ {
		if r := pairRank(i); r != noRank {
			rk[i] = r
			h = append(h, mergeItem{r, i})
		}
	}
	h.init()
	parts := n
	for len(h) > 0 {
		it := h.pop()
		if rk[it.pos] != it.rank {
			continue // stale
		}
		j := next[it.pos]
		k := next[j]
		next[it.pos] = k
		if k >= 0 {
			prev[k] = it.pos
		}
		rk[j] = noRank
		parts--
		for _, b := range [2]int32{it.pos, prev[it.pos]} {
			if b < 0 {
				continue
			}
			rk[b] = pairRank(b)
			if rk[b] != noRank {
				h.push(mergeItem{rk[b], b})
			}
		}
	}
	sc.heap = h
	return parts
}

// mergeScratch is the scratch space of mergeLarge.
type mergeScratch struct {
	next, prev []int32
	rk         []uint32
	heap       mergeHeap
}

var mergePool = sync.Pool{New: func() any { return new(mergeScratch) }}

// grown returns s resliced to n elements, reallocated if too short.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

type mergeItem struct {
	rank uint32
	pos  int32
}

// mergeHeap is a min-heap ordered by rank, then position.
type mergeHeap []mergeItem

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].pos < h[b].pos
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(it mergeItem) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *mergeHeap) pop() mergeItem {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
