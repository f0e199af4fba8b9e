package splitter

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// TestRankTable checks the rank table against a Go map: every token of
// the vocabulary, and the pre-tokens and random substrings of a sample
// text (which mostly are not tokens).
func TestRankTable(t *testing.T) {
	tok, err := loadTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint32{}
	for r, s := range tok.ranks.tokens {
		if s != "" {
			want[s] = uint32(r)
		}
	}
	check := func(p string) {
		t.Helper()
		r, ok := want[p]
		if !ok {
			r = noRank
		}
		if got := tok.ranks.rank(p); got != r {
			t.Fatalf("rank(%q) = %d, want %d", p, got, r)
		}
	}
	for s := range want {
		check(s)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "sample.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i < len(text); {
		j := nextPiece(text, i)
		check(text[i:j])
		i = j
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		i := r.IntN(len(text))
		check(text[i : i+min(r.IntN(40)+1, len(text)-i)])
	}
}

// TestCountPartReusesParent checks that counting a part of a text with the
// pre-tokens of the text gives what counting the part alone gives, for
// parts cut at code point boundaries of random texts rich in white space,
// contractions, digits, punctuation and multi-byte code points.
func TestCountPartReusesParent(t *testing.T) {
	tok, err := loadTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	fragments := []string{"a", "ab", "Hello", " ", "  ", "\n", "\r\n", "\n\n\n", "\t", "\u00a0", "\u3000",
		"\u2028", "\ufeff", "\u0085", "'s", "'re", "'", "'l", "'LL", "1", "12", "1234", ".", ",", "!?",
		"…", "日本", "é", "\xff", "\xe3\x80", "🙂", "x y", ". ", ".\n", " \n ", "-->", "$"}
	// bounds returns the code point boundaries of s.
	bounds := func(s string) []int {
		b := []int{0}
		for i := 0; i < len(s); {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			b = append(b, i)
		}
		return b
	}
	r := rand.New(rand.NewPCG(5, 6))
	// part picks a random part [a, b) of s at code point boundaries.
	part := func(s string) (int, int) {
		bs := bounds(s)
		i := r.IntN(len(bs) - 1)
		j := i + 1 + r.IntN(len(bs)-1-i)
		return bs[i], bs[j]
	}
	iterations := 50000
	if testing.Short() {
		iterations = 5000
	}
	for range iterations {
		var b []byte
		for range r.IntN(30) + 1 {
			if r.IntN(12) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, fragments[r.IntN(len(fragments))]...)
			}
		}
		text := string(b)
		limit := len(text) - 1 // all pre-tokens, recorded
		if r.IntN(2) == 0 {
			limit = r.IntN(20) // pre-tokens up to the limit
		}
		_, parent := tok.countPart(text, 0, len(text), nil, limit, nil)
		// A part, and a part of the part (with the part's pre-tokens).
		for range 2 {
			a, e := part(text)
			limit := e - a - 1
			if r.IntN(3) == 0 {
				limit = r.IntN(15)
			}
			got, gotPre := tok.countPart(text, a, e, parent, limit, nil)
			want, wantPre := tok.countPart(text[a:e], 0, e-a, nil, limit, nil)
			if got != want || fmt.Sprint(gotPre) != fmt.Sprint(wantPre) {
				t.Fatalf("text %q, part [%d:%d], limit %d, parent pre-tokens %v:\n got %+v %v\nwant %+v %v",
					text, a, e, limit, parent, got, gotPre, want, wantPre)
			}
			text, parent = text[a:e], gotPre
		}
	}
}
