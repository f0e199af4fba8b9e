package splitter

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// cl100k counts cl100k_base tokens. Its vocabulary comes from
// github.com/tiktoken-go/tokenizer (embedded, offline); the pre-tokenizer is
// a hand-written equivalent of the cl100k_base regular expression with the
// semantics of JavaScript's Unicode mode (as in js-tiktoken, which
// LlamaIndex.TS uses), and byte-pair merging only counts, never allocates.
type cl100k struct {
	ranks map[string]uint32
	memo  *memo // counts of pieces that needed merging
}

// memoSlots is the size of the direct-mapped piece-count cache (a power
// of two); it bounds the cache to a few MiB.
const memoSlots = 1 << 16

// memo is a lock-free, direct-mapped cache of the token counts of pieces
// that are not in the vocabulary (identifiers, rare words, long runs),
// shared by all goroutines. A slot holds the last piece stored in it.
type memo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

type memoEntry struct {
	piece string
	n     int
}

func (m *memo) slot(p string) *atomic.Pointer[memoEntry] {
	return &m.slots[maphash.String(m.seed, p)&(memoSlots-1)]
}

var (
	sharedTokenizer     *cl100k
	sharedTokenizerErr  error
	sharedTokenizerOnce sync.Once
)

// cl100kMaxID is the highest ordinary token id of cl100k_base.
const cl100kMaxID = 100255

// loadTokenizer returns the process-wide tokenizer, building its rank table
// from tiktoken-go's embedded vocabulary on first use.
func loadTokenizer() (*cl100k, error) {
	sharedTokenizerOnce.Do(func() {
		codec, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			sharedTokenizerErr = err
			return
		}
		ranks := make(map[string]uint32, cl100kMaxID+1)
		ids := make([]uint, 1)
		for id := uint(0); id <= cl100kMaxID; id++ {
			ids[0] = id
			tok, err := codec.Decode(ids)
			if err != nil {
				continue // holes in the id space
			}
			ranks[tok] = uint32(id)
		}
		sharedTokenizer = &cl100k{ranks: ranks, memo: &memo{seed: maphash.MakeSeed()}}
	})
	return sharedTokenizer, sharedTokenizerErr
}

// count returns the number of tokens of s. When limit >= 0 it stops as soon
// as the count exceeds limit and returns limit+1.
func (t *cl100k) count(s string, limit int) int {
	n := 0
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		n += t.countPiece(s[i:j])
		if limit >= 0 && n > limit {
			return limit + 1
		}
		i = j
	}
	return n
}

// tally is the token count of a text with what merger.exact needs to add
// counts up: where its first pre-token ends and its last one starts, and
// their token counts. Offsets are relative to the text.
type tally struct {
	tokens                int
	firstEnd, firstTokens int
	lastStart, lastTokens int
}

// countTally is count that also fills in the first and last pre-tokens.
func (t *cl100k) countTally(s string, limit int) tally {
	var c tally
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		k := t.countPiece(s[i:j])
		if i == 0 {
			c.firstEnd, c.firstTokens = j, k
		}
		c.tokens += k
		c.lastStart, c.lastTokens = i, k
		if limit >= 0 && c.tokens > limit {
			c.tokens = limit + 1
			return c
		}
		i = j
	}
	return c
}

// countPiece returns the number of tokens byte-pair encoding gives piece.
func (t *cl100k) countPiece(p string) int {
	if len(p) == 1 {
		return 1
	}
	if _, ok := t.ranks[p]; ok {
		return 1
	}
	slot := t.memo.slot(p)
	if e := slot.Load(); e != nil && e.piece == p {
		return e.n
	}
	var n int
	if len(p) <= smallPiece {
		n = t.mergeSmall(p)
	} else {
		n = t.mergeLarge(p)
	}
	slot.Store(&memoEntry{piece: strings.Clone(p), n: n})
	return n
}
