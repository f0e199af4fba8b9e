package splitter

import (
	"hash/maphash"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// cl100k counts cl100k_base tokens. Its vocabulary comes from
// github.com/tiktoken-go/tokenizer (embedded, offline); the pre-tokenizer is
// a hand-written equivalent of the cl100k_base regular expression with the
// semantics of JavaScript's Unicode mode (as in js-tiktoken, which
// LlamaIndex.TS uses), and byte-pair merging only counts, never allocates.
type cl100k struct {
	ranks *rankTable
	memo  *memo // counts of short pieces that needed merging
	// maxTokenLen is the length in bytes of the longest token (128, a run
	// of spaces): a piece of n bytes has at least ceil(n/maxTokenLen)
	// tokens.
	maxTokenLen int
	joins       *pairSet // the pairs of adjacent bytes in tokens
	runs        *runMemo // counts of long runs of a repeated unit
	long        *longMemo
}

// memoSlots is the size of the piece-count cache (a power of two), and
// memoMaxPiece the longest piece it holds: together they bound the cache
// to about 6 MiB, whatever the text (a long run of random letters would
// otherwise fill it with chunk-long pieces). Longer pieces are rare in
// ordinary text (about 1 in 350 of those that need merging in the shared
// fixtures): up to smallPiece bytes, they are merged each time; beyond,
// see countLong.
const (
	memoSlots    = 1 << 16
	memoMaxPiece = 64
)

// memo is a lock-free, two-way set-associative cache of the token counts of
// short pieces that are not in the vocabulary (identifiers, rare words),
// shared by all goroutines. (Long pieces have runMemo and longMemo.) A set
// holds the last two pieces stored in it, the newer first.
type memo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

type memoEntry struct {
	piece string
	n     int
}

// set returns the two slots where p may be.
func (m *memo) set(p string) *[2]atomic.Pointer[memoEntry] {
	i := maphash.String(m.seed, p) & (memoSlots - 2)
	return (*[2]atomic.Pointer[memoEntry])(m.slots[i : i+2])
}

// get returns the count of p, if cached.
func (m *memo) get(p string) (int, bool) {
	set := m.set(p)
	for k := range set {
		if e := set[k].Load(); e != nil && e.piece == p {
			return e.n, true
		}
	}
	return 0, false
}

// put caches n as the count of p, evicting the older piece of its set.
func (m *memo) put(p string, n int) {
	set := m.set(p)
	set[1].Store(set[0].Load())
	set[0].Store(&memoEntry{piece: strings.Clone(p), n: n})
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
		tokens := make([]string, cl100kMaxID+1)
		ids := make([]uint, 1)
		for id := range tokens {
			ids[0] = uint(id)
			if tok, err := codec.Decode(ids); err == nil {
				tokens[id] = tok // else a hole in the id space
			}
		}
		longest := 0
		for _, tok := range tokens {
			longest = max(longest, len(tok))
		}
		sharedTokenizer = &cl100k{ranks: newRankTable(tokens), memo: &memo{seed: maphash.MakeSeed()},
			maxTokenLen: longest, joins: tokenPairs(tokens), runs: new(runMemo), long: new(longMemo)}
	})
	return sharedTokenizer, sharedTokenizerErr
}

// count returns the number of tokens of s. Memory and time grow with its
// longest pre-token (see mergeLarge); the splitter counts long texts with
// countPart, which merges no more than limit tokens' worth of any
// pre-token.
func (t *cl100k) count(s string) int {
	n := 0
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		n += t.countPiece(s[i:j])
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

// preToken is a pre-token of a counted text: its end, relative to the
// text, and its token count, or overLimit.
type preToken struct{ end, tokens int }

// overLimit is the count of a pre-token too long to fit the limit it was
// counted with, and so never merged (see countPart).
const overLimit = -1

// countPart returns the tally of text[a:b] tokenized alone; when limit >=
// 0 it stops as soon as the count exceeds limit (tokens is then limit+1).
// a and b are code point boundaries. parent holds pre-tokens of text from
// its start, as far as text was counted (ends relative to text; possibly
// none): text[a:b] reuses the counts of those it shares. If text[a:b] is
// longer than limit bytes, and so may exceed limit and be cut, countPart
// appends to pre the pre-tokens it counted (ends relative to a).
//
// Pre-tokenization only looks forward, so from a boundary that text[a:b]
// and text share, they agree on each pre-token until the pre-tokenizer
// looks at b or beyond. Deciding where a pre-token ends, it looks at one
// code point after it, or, for white space, at the whole run of white
// space. So text[a:b] takes the counts of parent's pre-tokens from the
// first boundary they share (usually a) to the last one before b that
// does not end with white space, and pre-tokenizes the rest itself.
//
// With a limit, a pre-token too long to fit limit tokens (see tooLong) is
// not even merged: a long run of spaces or letters costs no more than
// limit tokens' worth of it. It counts as limit+1 tokens, as does any
// pre-token that exceeds the limit, so the tally is the same as with
// exact counts: the count exceeds the limit either way. pre records
// overLimit for it, so that the parts that share it count it as they
// would alone, with their own limit.
func (t *cl100k) countPart(text string, a, b int, parent []preToken, limit int, pre []preToken) (tally, []preToken) {
	if limit < 0 {
		limit = math.MaxInt - 1 // no limit
	}
	// A token takes at least one byte.
	pc := partCounter{t: t, part: text[a:b], limit: limit, record: b-a > limit, pre: pre}
	cur := 0
	// parent[k] is the first parent pre-token that ends after a+cur.
	k := len(parent)
	if k > 0 && parent[k-1].end > a {
		k = sort.Search(k, func(k int) bool { return parent[k].end > a })
	}
	for k < len(parent) && cur < len(pc.part) && !pc.over() {
		if k == 0 && a+cur == 0 || k > 0 && parent[k-1].end == a+cur {
			cur = pc.share(text, a, cur, parent[k:])
			break
		}
		cur = pc.step(cur)
		for k < len(parent) && parent[k].end <= a+cur {
			k++
		}
	}
	if !pc.over() {
		pc.alone(cur)
	}
	return pc.c, pc.pre
}

// partCounter is the state of countPart.
type partCounter struct {
	t      *cl100k
	part   string
	limit  int
	record bool // append the pre-tokens to pre
	c      tally
	pre    []preToken
}

// add counts the pre-token part[start:end] of n tokens (or overLimit).
func (p *partCounter) add(start, end, n int) {
	if p.record {
		p.pre = append(p.pre, preToken{end, n})
	}
	n = capped(n, p.limit)
	if start == 0 {
		p.c.firstEnd, p.c.firstTokens = end, n
	}
	p.c.tokens = min(p.c.tokens+n, p.limit+1)
	p.c.lastStart, p.c.lastTokens = start, n
}

// capped returns the count n of a pre-token (or overLimit) as a tally
// counts it: limit+1 if it exceeds limit.
func capped(n, limit int) int {
	if n == overLimit || n > limit {
		return limit + 1
	}
	return n
}

// over reports whether the count exceeds the limit.
func (p *partCounter) over() bool { return p.c.tokens > p.limit }

// step counts the pre-token of the part at cur, tokenized alone, and
// returns its end.
func (p *partCounter) step(cur int) int {
	j := nextPiece(p.part, cur)
	p.add(cur, j, p.t.countPieceUpTo(p.part[cur:j], p.limit))
	return j
}

// alone counts the pre-tokens of the part from cur to its end, tokenized
// alone, or until the count exceeds the limit.
func (p *partCounter) alone(cur int) {
	part, limit := p.part, p.limit
	tokens, last, lastTokens := p.c.tokens, p.c.lastStart, p.c.lastTokens
	for cur < len(part) && tokens <= limit {
		j := nextPiece(part, cur)
		n := p.t.countPieceUpTo(part[cur:j], limit)
		if p.record {
			p.pre = append(p.pre, preToken{j, n})
		}
		n = capped(n, limit)
		if cur == 0 {
			p.c.firstEnd, p.c.firstTokens = j, n
		}
		tokens += n
		last, lastTokens = cur, n
		cur = j
	}
	p.c.tokens, p.c.lastStart, p.c.lastTokens = min(tokens, limit+1), last, lastTokens
}

// share counts the pre-tokens of text that the part text[a:] shares:
// those of shared, which starts at a+cur, up to the last one that ends
// before the part does and not with white space, or until the count
// exceeds the limit. It returns where they end (relative to a).
func (p *partCounter) share(text string, a, cur int, shared []preToken) int {
	b := a + len(p.part)
	m := 0
	for m < len(shared) && shared[m].end < b {
		m++
	}
	for m > 0 && endsWithSpace(text, shared[m-1].end) {
		m--
	}
	for _, pt := range shared[:m] {
		end := pt.end - a
		n := pt.tokens
		if n == overLimit || p.t.tooLong(end-cur, p.limit) { // as alone would count it
			n = p.t.countPieceUpTo(p.part[cur:end], p.limit)
		}
		p.add(cur, end, n)
		cur = end
		if p.over() {
			break
		}
	}
	return cur
}

// endsWithSpace reports whether the code point that ends at s[:e] is white
// space.
func endsWithSpace(s string, e int) bool {
	if c := s[e-1]; c < utf8.RuneSelf {
		return isSpaceClass(byteClasses[c])
	}
	r, _ := utf8.DecodeLastRuneInString(s[:e])
	return isJSSpace(r)
}

// countPieceUpTo returns countPiece(p), or overLimit without merging p if
// p is too long to fit limit tokens.
func (t *cl100k) countPieceUpTo(p string, limit int) int {
	if t.tooLong(len(p), limit) {
		return overLimit
	}
	return t.countPiece(p)
}

// tooLong reports whether a piece of n bytes is longer than maxTokenLen *
// limit bytes, and so has more than limit tokens: at least
// ceil(n/maxTokenLen), as no token is longer than maxTokenLen. It is
// written so that it cannot overflow.
func (t *cl100k) tooLong(n, limit int) bool { return (n-1)/t.maxTokenLen >= limit }

// countPiece returns the number of tokens byte-pair encoding gives piece.
func (t *cl100k) countPiece(p string) int {
	switch {
	case len(p) == 1:
		return 1
	case len(p) > smallPiece:
		return t.countLong(p)
	case t.ranks.rank(p) != noRank:
		return 1
	case len(p) > memoMaxPiece:
		return t.mergeSmall(p)
	}
	if n, ok := t.memo.get(p); ok {
		return n
	}
	n := t.mergeSmall(p)
	t.memo.put(p, n)
	return n
}
