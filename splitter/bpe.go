package splitter

// Byte-pair merging, counting only: a piece of text becomes as many tokens
// as parts are left once no adjacent pair of parts is in the vocabulary,
// merging the lowest-ranked pair first (the leftmost on ties).

const (
	smallPiece = 96 // longest piece merged by mergeSmall
	noRank     = ^uint32(0)
)

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
// boundaries and a min-heap of candidate merges keep it O(n log n).
func (t *cl100k) mergeLarge(p string) int {
	n := len(p)
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	rk := make([]uint32, n+1)
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
	h := mergeHeap(make([]mergeItem, 0, n))
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
	return parts
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
