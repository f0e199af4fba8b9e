package splitter

import "math/bits"

// rankTable maps the tokens of the vocabulary to their ranks: an
// open-addressing hash table with linear probing, faster than a Go map for
// the short strings of counting and byte-pair merging. A key is compared as
// integers: its bytes packed into one word when it has eight or fewer, else
// its first and last eight bytes (in a second array, read only for long
// keys); only a key longer than sixteen bytes is compared as a string.
type rankTable struct {
	slots  []rankSlot
	tails  []uint64 // by rank: the last eight bytes of a key longer than eight
	mask   uint64   // len(slots)-1
	shift  uint     // 64 - log2(len(slots))
	tokens []string // by rank, for comparing keys longer than sixteen bytes
}

type rankSlot struct {
	head uint64 // the first word of the key (see keyWords)
	n    uint32 // length of the key; 0 for an empty slot
	rank uint32
}

// newRankTable returns a table of tokens[r] -> r for every non-empty token.
// (A token that occurs twice keeps the higher rank, as a Go map would.)
func newRankTable(tokens []string) *rankTable {
	size := 1 << bits.Len(uint(2*len(tokens))) // load factor below 1/2
	t := &rankTable{
		slots:  make([]rankSlot, size),
		tails:  make([]uint64, len(tokens)),
		mask:   uint64(size - 1),
		shift:  uint(64 - bits.TrailingZeros(uint(size))),
		tokens: tokens,
	}
	for r, tok := range tokens {
		if tok == "" {
			continue // a hole in the id space
		}
		i := t.find(tok)
		head, tail := keyWords(tok)
		t.slots[i] = rankSlot{head: head, n: uint32(len(tok)), rank: uint32(r)}
		t.tails[r] = tail
	}
	return t
}

// rank returns the rank of p, or noRank.
func (t *rankTable) rank(p string) uint32 {
	if s := &t.slots[t.find(p)]; s.n != 0 {
		return s.rank
	}
	return noRank
}

// find returns the index of p's slot, or of the empty slot where p would go.
func (t *rankTable) find(p string) uint64 {
	head, tail := keyWords(p)
	n := uint32(len(p))
	i := ((head ^ bits.RotateLeft64(tail, 29) ^ uint64(n)<<56) * 0x9e3779b97f4a7c15) >> t.shift
	for {
		s := &t.slots[i]
		if s.n == 0 || s.n == n && s.head == head &&
			(n <= 8 || t.tails[s.rank] == tail && (n <= 16 || t.tokens[s.rank] == p)) {
			return i
		}
		i = (i + 1) & t.mask
	}
}

// keyWords returns the words that, with its length, identify a key of up to
// sixteen bytes: for eight bytes or fewer, head packs them all (the first
// and the last four, two or one bytes, which overlap) and tail is 0; for
// more, head and tail are the first and the last eight bytes.
func keyWords(p string) (head, tail uint64) {
	switch n := len(p); {
	case n > 8:
		return le64(p), le64(p[n-8:])
	case n >= 4:
		return uint64(le32(p)) | uint64(le32(p[n-4:]))<<32, 0
	case n >= 2:
		return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[n-2])<<16 | uint64(p[n-1])<<24, 0
	case n == 1:
		return uint64(p[0]), 0
	}
	return 0, 0
}

// le32 and le64 read the first four and eight bytes of s, little-endian
// (the compiler turns each into one load).
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
