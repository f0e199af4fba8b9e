package splitter

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// collectCuts returns the cuts cut makes in text.
func collectCuts(cut cutter, text string) []int {
	var cuts []int
	cut(text, func(end int) bool {
		cuts = append(cuts, end)
		return true
	})
	return cuts
}

// Reference cutters: the list-returning cutters that the yielding ones
// replaced.

func refCutParagraphs(text string) []int {
	var cuts []int
	for i := 0; ; {
		k := strings.Index(text[i:], paragraphSeparator)
		if k < 0 {
			return cuts
		}
		if at := i + k; at > 0 {
			cuts = append(cuts, at)
		}
		i += k + len(paragraphSeparator)
		if i >= len(text) {
			return cuts
		}
	}
}

func refCutWords(text string) []int {
	var cuts []int
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

func refCutRunes(text string) []int {
	var cuts []int
	for i := 0; i < len(text); {
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if i < len(text) {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// TestCuttersYield checks each cutter against its list-returning reference
// on random mixes of separators, delimiters, spaces, multi-byte and invalid
// UTF-8, and that a cutter stops at once when yield returns false.
func TestCuttersYield(t *testing.T) {
	fragments := []string{"a", "bc", " ", "  ", "\n", "\n\n\n", "\n\n\n\n", ".", ",", ";", "..", "。", "？", "！",
		"Dr.", "3.14", "x@y.org", "http://a.b", "日本", "🙂", "\xff", "\xe3\x80", "\t", "!"}
	tests := []struct {
		name string
		cut  cutter
		ref  func(string) []int
	}{
		{"paragraphs", cutParagraphs, refCutParagraphs},
		{"sentences", cutSentences, func(s string) []int { return sentenceEnds(s, nil) }},
		{"phrases", cutPhrases, refCutPhrases},
		{"words", cutWords, refCutWords},
		{"runes", cutRunes, refCutRunes},
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 5000 {
		text := randomMix(r, fragments, 40, nil)
		for _, tc := range tests {
			want := tc.ref(text)
			if got := collectCuts(tc.cut, text); !slices.Equal(got, want) {
				t.Fatalf("%s of %q: %v, reference %v", tc.name, text, got, want)
			}
			if len(want) == 0 {
				continue
			}
			stop := r.IntN(len(want))
			var got []int
			tc.cut(text, func(end int) bool {
				got = append(got, end)
				return len(got) <= stop
			})
			if !slices.Equal(got, want[:stop+1]) {
				t.Fatalf("%s of %q stopped after cut %d: %v, want %v", tc.name, text, stop, got, want[:stop+1])
			}
		}
	}
}

// randomMix returns fewer than maxParts fragments drawn at random, each
// passed through vary if not nil.
func randomMix(r *rand.Rand, fragments []string, maxParts int, vary func(string) string) string {
	var b strings.Builder
	for range r.IntN(maxParts) {
		f := fragments[r.IntN(len(fragments))]
		if vary != nil {
			f = vary(f)
		}
		b.WriteString(f)
	}
	return b.String()
}

// rounds returns how many random cases a test tries: full, or short with
// -short.
func rounds(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// TestMergeInSteps checks that merging pieces as they come, every few
// pieces, emits the chunks of merging them all at once, on random mixes of
// fragments (long runs among them) and chunk sizes.
func TestMergeInSteps(t *testing.T) {
	fragments := []string{"a", "0", " ", "\n", ".", ",", "A", "\n\n\n", "ab", "\xff", "日", "'s", "@", ";", "…",
		"  ", " unbelievable", "Dr.", "3.14", "x@y.org", "\t", "🙂", "qz"}
	r := rand.New(rand.NewPCG(61, 62))
	for range rounds(1000, 100) {
		text := randomMix(r, fragments, 300, func(f string) string {
			if r.IntN(20) == 0 {
				f = strings.Repeat(f, r.IntN(200)) // a long run now and then
			}
			return f
		})
		size := MinChunkSize + r.IntN(40)
		s := mustNew(t, Config{ChunkSize: size, ChunkOverlap: r.IntN(size)})
		var want []Chunk
		for k, flushAt := range []int{0, 1, size + 1, size + 1 + r.IntN(50)} {
			var got []Chunk
			m := newMerger(s, size, func(c Chunk) error {
				got = append(got, c)
				return nil
			})
			m.text, m.flushAt = text, flushAt
			if !s.pieces(text, 0, size, m) {
				t.Fatal(m.err)
			}
			if err := m.run(true); err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				want = got
			} else if !slices.Equal(got, want) {
				t.Fatalf("size %d, text %q: merging every %d pieces gives\n%v\nmerging all at once\n%v", size, text, flushAt, got, want)
			}
		}
	}
}

// TestSentenceEndsBySection checks that finding sentence ends section by
// section finds those of the whole text, with sections of a few bytes
// (which end at many restarts) in random mixes of abbreviations, URLs,
// e-mail addresses, numbers, delimiters, closers and white space.
func TestSentenceEndsBySection(t *testing.T) {
	fragments := []string{"a", "Z", "w", "www", "0", "12", " ", "  ", "\n", "\t", "\r", ".", ",", "..", "@", ":",
		"//", "http://", "www.", "mailto:", "x@y.org", "a.b@c-d.ef", "-", "_", "%", "Dr.", "a.m.", "i.e.", "etc.",
		"A.S.A.P.", ",000", "3.14", "1,234.5", "?", "!", "…", "\"", "'", "”", "’", ")", "]", "é", "日", "\u00a0", "\xff", "com"}
	r := rand.New(rand.NewPCG(41, 42))
	for range rounds(20000, 2000) {
		text, n := randomMix(r, fragments, 40, nil), 1+r.IntN(12)
		var got []int
		sentenceEndsBySection(text, n, func(end int) bool {
			got = append(got, end)
			return true
		})
		if want := sentenceEnds(text, nil); !slices.Equal(got, want) {
			t.Fatalf("sentence ends of %q by sections of %d bytes: %v, whole text: %v", text, n, got, want)
		}
	}
}

// TestCountLong checks the counts of long pieces (runs of one unit, through
// runMemo; others, through longMemo and merged in parts between bytes that
// no token holds side by side) against merging them whole, and against
// tiktoken-go for those that are one pre-token, from four goroutines at
// once (run with -race), each piece twice (the second time from a cache).
func TestCountLong(t *testing.T) {
	ref, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := loadTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name     string
		pretoken bool // one pre-token, as tiktoken-go finds them too
		gen      func(r *rand.Rand, n int) string
	}{
		{"random letters", true, func(r *rand.Rand, n int) string { return randomLetters(r, n) }},
		{"space and letters", true, func(r *rand.Rand, n int) string { return " " + randomFrom(r, "qzjxvwkaeiouQZJX", n) }},
		{"rare letters", true, func(r *rand.Rand, n int) string { return randomFrom(r, "qzjxvwk", n) }},
		{"run of one unit", false, func(r *rand.Rand, n int) string {
			units := []string{"a", " ", "-", "=", "ab", "-=", "═", "日本", "\t ", "xyz", "abcd"}
			u := units[r.IntN(len(units))]
			return strings.Repeat(u, n/len(u)+1)[:n]
		}},
		{"punctuation", true, func(r *rand.Rand, n int) string { return randomFrom(r, "-=*#/\\|_~", n) }},
		{"bytes", false, func(r *rand.Rand, n int) string { return randomFrom(r, "\x00\x80\xffa qz.\xe3", n) }},
		{"mixed case", true, func(r *rand.Rand, n int) string {
			return randomFrom(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", n)
		}},
	}
	iterations := 200
	if testing.Short() || raceEnabled {
		iterations = 20
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(51, uint64(g%2))) // two goroutines on the same pieces
			for range iterations {
				k := kinds[r.IntN(len(kinds))]
				p := k.gen(r, smallPiece+1+r.IntN(3000))
				// And p with one byte changed: of the same length, and
				// almost a run if p is one.
				b := []byte(p)
				b[r.IntN(len(b))] = 'z'
				for i, p := range []string{p, string(b)} {
					want := tok.mergeLarge(p)
					for range 2 {
						if got := tok.countPiece(p); got != want {
							errs <- fmt.Sprintf("%s: countPiece(%.40q…, %d bytes) = %d, merged whole %d", k.name, p, len(p), got, want)
							return
						}
					}
					if k.pretoken && i == 0 { // (p changed may be two pre-tokens)
						if n, err := ref.Count(p); err != nil || n != want {
							errs <- fmt.Sprintf("%s: %.40q… (%d bytes) merges into %d tokens, tiktoken-go counts %d (%v)", k.name, p, len(p), want, n, err)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestCountPieceUpTo checks countPieceUpTo against tiktoken-go on long runs
// (one repeated character, random letters) around the length past which
// it stops merging: up to it, the exact count; past it, overLimit, and the
// exact count exceeds the limit.
func TestCountPieceUpTo(t *testing.T) {
	ref, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := loadTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	if tok.maxTokenLen != 128 {
		t.Fatalf("maxTokenLen = %d, cl100k_base's longest token has 128 bytes", tok.maxTokenLen)
	}
	r := rand.New(rand.NewPCG(31, 32))
	runs := []struct {
		name string
		gen  func(n int) string
	}{
		{"spaces", func(n int) string { return strings.Repeat(" ", n) }},
		{"letter", func(n int) string { return strings.Repeat("a", n) }},
		{"dashes", func(n int) string { return strings.Repeat("-", n) }},
		{"random letters", func(n int) string { return randomLetters(r, n) }},
	}
	for _, run := range runs {
		for _, limit := range []int{1, 2, 7, 40} {
			for _, n := range []int{1, 2, limit * 128, limit*128 + 1, limit*128 + 50} {
				p := run.gen(n)
				want, err := ref.Count(p)
				if err != nil {
					t.Fatal(err)
				}
				switch got := tok.countPieceUpTo(p, limit); {
				case got == overLimit && n <= limit*128:
					t.Errorf("countPieceUpTo(%s × %d, limit %d) = overLimit; the piece may fit", run.name, n, limit)
				case got == overLimit && want <= limit:
					t.Errorf("countPieceUpTo(%s × %d, limit %d) = overLimit; tiktoken-go counts %d", run.name, n, limit, want)
				case got != overLimit && got != want:
					t.Errorf("countPieceUpTo(%s × %d, limit %d) = %d; tiktoken-go counts %d", run.name, n, limit, got, want)
				}
			}
		}
	}
}

// randomFrom returns n bytes drawn at random from alphabet.
func randomFrom(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func randomLetters(r *rand.Rand, n int) string {
	return randomFrom(r, "abcdefghijklmnopqrstuvwxyz", n)
}

// pathologicalInputs are texts without any sentence boundary, made byte
// by byte from their offsets, so that a test can check chunks against the
// text without holding it: one pre-token a whole window long (spaces,
// white space, letters) or one long sentence of words.
var pathologicalInputs = []struct {
	name string
	at   func(i int) byte
	mib  int // MiB that TestSplitReaderMemory streams
}{
	{"spaces", func(int) byte { return ' ' }, 32},
	{"spaces and tabs", func(i int) byte { return " \t"[mix(i)%2] }, 32},
	{"one letter", func(int) byte { return 'a' }, 32},
	{"random letters", func(i int) byte { return 'a' + byte(mix(i)%26) }, 32},
	{"random words", func(i int) byte {
		if i%7 == 6 {
			return ' '
		}
		return 'a' + byte(mix(i)%26)
	}, 8},
}

// mix is SplitMix64's finalizer.
func mix(i int) uint64 {
	x := uint64(i) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// genReader reads n bytes of at, calling onRead (if set) before each read.
type genReader struct {
	at     func(int) byte
	pos, n int
	onRead func()
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.onRead != nil {
		g.onRead()
	}
	if g.pos == g.n {
		return 0, io.EOF
	}
	p = p[:min(len(p), g.n-g.pos)]
	for k := range p {
		p[k] = g.at(g.pos + k)
	}
	g.pos += len(p)
	return len(p), nil
}

// Memory bounds of TestSplitReaderMemory. The live heap holds, besides
// the tokenizer, the read buffer (room for two windows of 1 MiB) and the
// window's text, a few chunks' worth of pieces, the merge scratch space,
// and what the process-wide caches of counts take as they fill: up to 1
// MiB of long pieces, and 32 bytes for each of up to 65536 short ones (2
// MiB; random words fill it). Allocations are the window texts (a byte
// per byte), the chunk copies (1.25 bytes per byte with a 200-token
// overlap of 1-token pieces) and the cache entries of pieces never seen
// before (5 bytes per byte of random words).
const (
	maxLiveGrowth   = 10 << 20 // bytes of live heap over what it was before SplitReader
	maxAllocPerByte = 10       // bytes allocated per byte of input
	shortTestMiB    = 4        // MiB streamed with -short or the race detector
)

// TestSplitReaderMemory streams inputs that LlamaIndex's algorithm cuts
// into one piece per byte, or that hold a single pre-token a window long,
// and checks that the live heap stays within maxLiveGrowth of what it was
// (measured after a collection before each read, so that it includes the
// pooled scratch buffers of the previous window) and that allocations stay
// within maxAllocPerByte per byte of input; and that the chunks are right:
// at most ChunkSize tokens, exactly counted, in order, and covering the
// input but for white space. (The race detector makes sync.Pool drop
// buffers at random, so allocations are only checked without it.)
func TestSplitReaderMemory(t *testing.T) {
	s := mustNew(t, DefaultConfig())
	for _, in := range pathologicalInputs {
		t.Run(in.name, func(t *testing.T) {
			n := in.mib << 20
			if testing.Short() || raceEnabled {
				n = shortTestMiB << 20
			}
			var peak uint64
			allocated, onRead := watchLiveHeap(&peak)
			r := &genReader{at: in.at, n: n, onRead: onRead}
			covered, chunks := 0, 0
			err := s.SplitReader(context.Background(), r, func(c Chunk) error {
				if c.Tokens > DefaultChunkSize {
					return fmt.Errorf("chunk %d [%d,%d) has %d tokens", chunks, c.Start, c.End, c.Tokens)
				}
				if got := s.CountTokens(c.Text); got != c.Tokens {
					return fmt.Errorf("chunk %d [%d,%d): Tokens = %d, counted %d", chunks, c.Start, c.End, c.Tokens, got)
				}
				if c.Start >= c.End || c.End <= covered {
					return fmt.Errorf("chunk %d [%d,%d) is not after text[:%d]", chunks, c.Start, c.End, covered)
				}
				if err := checkGenerated(in.at, c.Text, c.Start); err != nil {
					return fmt.Errorf("chunk %d: %w", chunks, err)
				}
				if err := checkBlank(in.at, covered, c.Start); err != nil {
					return fmt.Errorf("before chunk %d: %w", chunks, err)
				}
				covered = c.End
				chunks++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkBlank(in.at, covered, n); err != nil {
				t.Fatalf("after the last chunk: %v", err)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			perByte := float64(ms.TotalAlloc-allocated) / float64(n)
			t.Logf("%d MiB: %d chunks, live heap grew by at most %.1f MiB, %.2f bytes allocated per byte",
				n>>20, chunks, float64(peak)/(1<<20), perByte)
			if peak > maxLiveGrowth {
				t.Errorf("live heap grew by %.1f MiB, more than %d MiB", float64(peak)/(1<<20), maxLiveGrowth>>20)
			}
			if perByte > maxAllocPerByte && !raceEnabled { // (which drops pooled buffers at random)
				t.Errorf("%.2f bytes allocated per byte of input, more than %d", perByte, maxAllocPerByte)
			}
		})
	}
}

// watchLiveHeap collects garbage (twice: pools hold on to buffers for one
// collection) and returns the bytes allocated so far and a function, for
// genReader.onRead, that records in *peak the most the live heap has grown
// since, measured after a collection.
func watchLiveHeap(peak *uint64) (allocated uint64, onRead func()) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	return ms.TotalAlloc, func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		*peak = max(*peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
	}
}

// checkGenerated reports whether text is at's text from offset start.
func checkGenerated(at func(int) byte, text string, start int) error {
	for k := 0; k < len(text); k++ {
		if text[k] != at(start+k) {
			return fmt.Errorf("text[%d] = %q, the input has %q", start+k, text[k], at(start+k))
		}
	}
	return nil
}

// checkBlank reports whether at's text holds only white space in [from, to).
func checkBlank(at func(int) byte, from, to int) error {
	for i := from; i < to; i++ {
		if c := at(i); !isSpaceClass(byteClasses[c]) {
			return fmt.Errorf("text[%d] = %q is in no chunk", i, c)
		}
	}
	return nil
}
