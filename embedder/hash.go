package embedder

import (
	"context"
	"math"
	"unicode"
	"unicode/utf8"
)

// DefaultDimensions is the default vector length, the seed's default
// embeddingDimensionality.
const DefaultDimensions = 1536

// Hash is the local feature-hashing embedder, the provider "hash".
//
// It is lexical, not semantic: texts that share words get similar vectors,
// texts that mean the same thing in other words do not. It needs no network,
// no key and no model, so it is meant for offline use, tests and benchmarks
// (it is the instant embedder of throughput runs), not for retrieval quality.
//
// A text is lowercased and split into words at every rune that is not a
// Unicode letter, digit or combining mark. Each word unigram and each pair of
// adjacent words (bigram) is hashed (64-bit FNV-1a with a final mix) to a
// dimension and a sign; the signed counts of each dimension are damped to
// 1+ln(count) (sublinear term frequency) and the vector is scaled to unit
// length. An empty text, or one without words, yields the zero vector.
//
// Vectors depend only on the text and the dimensions: they are identical
// across runs, processes and platforms. A Hash is safe for concurrent use.
type Hash struct {
	dims int
}

// NewHash returns a hashing embedder producing vectors of dims floats;
// dims <= 0 means DefaultDimensions.
func NewHash(dims int) *Hash {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	return &Hash{dims: dims}
}

// Local reports that the vectors are computed in process, at no charge.
func (*Hash) Local() bool { return true }

// Dimensions returns the vector length.
func (h *Hash) Dimensions() int { return h.dims }

// Embed returns the vector of every input. It never fails except when ctx
// is done.
func (h *Hash) Embed(ctx context.Context, inputs []Input) ([][]float32, error) {
	out := make([][]float32, len(inputs))
	backing := make([]float32, len(inputs)*h.dims)
	for i, in := range inputs {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = h.fill(backing[i*h.dims:(i+1)*h.dims:(i+1)*h.dims], in.Text)
	}
	return out, nil
}

// Vector returns the vector of one text.
func (h *Hash) Vector(text string) []float32 {
	return h.fill(make([]float32, h.dims), text)
}

const (
	fnvOffset  = 14695981039346656037
	fnvPrime   = 1099511628211
	bigramSeed = 0x9e3779b97f4a7c15
)

// asciiClass maps a byte to its lowercase form when it is an ASCII letter or
// digit, to 0 for other ASCII bytes, and to 0x80 for non-ASCII bytes.
var asciiClass = func() (t [256]byte) {
	for b := 0; b < 256; b++ {
		switch {
		case b >= 0x80:
			t[b] = 0x80
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
			t[b] = byte(b)
		case b >= 'A' && b <= 'Z':
			t[b] = byte(b) + 'a' - 'A'
		}
	}
	return t
}()

// sublinear[n] is 1+ln(n) for small counts.
var sublinear = func() (t [64]float32) {
	for n := 1; n < len(t); n++ {
		t[n] = float32(1 + math.Log(float64(n)))
	}
	return t
}()

// fill writes the vector of text into v, which must be zeroed and h.dims long.
func (h *Hash) fill(v []float32, text string) []float32 {
	var (
		word    uint64 = fnvOffset
		inWord  bool
		prev    uint64
		hasPrev bool
		seen    bool
	)
	endWord := func() {
		f := mix(word)
		h.add(v, f)
		if hasPrev {
			h.add(v, mix(prev*bigramSeed^f))
		}
		prev, hasPrev, inWord, seen = f, true, false, true
		word = fnvOffset
	}
	for i := 0; i < len(text); {
		c := asciiClass[text[i]]
		if c != 0 && c != 0x80 {
			word = (word ^ uint64(c)) * fnvPrime
			inWord = true
			i++
			continue
		}
		if c == 0 {
			if inWord {
				endWord()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mark, r) {
			if inWord {
				endWord()
			}
			continue
		}
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
		for _, b := range buf[:n] {
			word = (word ^ uint64(b)) * fnvPrime
		}
		inWord = true
	}
	if inWord {
		endWord()
	}
	if !seen {
		return v
	}
	var sum float64
	for i, x := range v {
		if x == 0 {
			continue
		}
		a := x
		if a < 0 {
			a = -a
		}
		var d float32
		if n := int(a); n < len(sublinear) {
			d = sublinear[n]
		} else {
			d = float32(1 + math.Log(float64(a)))
		}
		if x < 0 {
			d = -d
		}
		v[i] = d
		sum += float64(d) * float64(d)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// add adds feature hash f to its dimension with its sign.
func (h *Hash) add(v []float32, f uint64) {
	idx := (uint64(uint32(f)) * uint64(h.dims)) >> 32
	if f>>63 == 0 {
		v[idx]++
	} else {
		v[idx]--
	}
}

// mix is the 64-bit finaliser of MurmurHash3; it spreads FNV's weak low bits.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
