package splitter

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// checkChunks asserts the splitter's invariants for text split with cfg
// (size is the chunk size in effect):
//   - offsets slice the text exactly and chunks are trimmed and non-empty;
//   - chunks are in order and together cover every non-blank byte;
//   - no chunk exceeds size tokens, and Tokens is the exact count;
//   - consecutive chunks overlap by at most ChunkOverlap tokens;
//   - CharStart and CharEnd are the offsets in UTF-16 code units.
func checkChunks(t *testing.T, s *Splitter, text string, size int, chunks []Chunk) {
	t.Helper()
	units := unitOffsets(text)
	covered := 0 // text[:covered] is covered by the chunks so far
	for i, c := range chunks {
		if c.Start >= 0 && c.End <= len(text) && (c.CharStart != units[c.Start] || c.CharEnd != units[c.End]) {
			t.Fatalf("chunk %d [%d,%d): UTF-16 offsets [%d,%d), want [%d,%d)", i, c.Start, c.End, c.CharStart, c.CharEnd, units[c.Start], units[c.End])
		}
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d: bad offsets [%d,%d) for text of %d bytes", i, c.Start, c.End, len(text))
		}
		if text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: text[%d:%d] != Text", i, c.Start, c.End)
		}
		if a, b := trimSpace(c.Text, 0, len(c.Text)); a != 0 || b != len(c.Text) {
			t.Fatalf("chunk %d: not trimmed: %q", i, c.Text)
		}
		if n := s.CountTokens(c.Text); n != c.Tokens {
			t.Fatalf("chunk %d: Tokens = %d, counted %d", i, c.Tokens, n)
		}
		if c.Tokens > size {
			t.Fatalf("chunk %d: %d tokens exceeds chunk size %d", i, c.Tokens, size)
		}
		if gap := text[covered:max(covered, c.Start)]; strings.TrimFunc(gap, isJSSpace) != "" {
			t.Fatalf("chunk %d: text[%d:%d] = %q is covered by no chunk", i, covered, c.Start, gap)
		}
		if i > 0 {
			prev := chunks[i-1]
			if c.Start < prev.Start || c.End <= prev.End {
				t.Fatalf("chunk %d [%d,%d) is not after chunk %d [%d,%d)", i, c.Start, c.End, i-1, prev.Start, prev.End)
			}
			if c.Start < prev.End {
				if n := s.CountTokens(text[c.Start:prev.End]); n > s.cfg.ChunkOverlap {
					t.Fatalf("chunks %d and %d overlap by %d tokens > %d", i-1, i, n, s.cfg.ChunkOverlap)
				}
			}
		}
		covered = max(covered, c.End)
	}
	if rest := text[covered:]; strings.TrimFunc(rest, isJSSpace) != "" {
		t.Fatalf("text[%d:] = %q is covered by no chunk", covered, rest)
	}
}

// unitOffsets returns, for each byte offset of text that starts a code
// point (and len(text)), the UTF-16 code units before it, as JavaScript
// counts them after decoding the text with U+FFFD for each invalid byte;
// -1 elsewhere.
func unitOffsets(text string) []int {
	out := make([]int, len(text)+1)
	for i := range out {
		out[i] = -1
	}
	n := 0
	for i, r := range text { // an invalid byte is one utf8.RuneError
		out[i] = n
		n++
		if r > 0xFFFF {
			n++ // a surrogate pair
		}
	}
	out[len(text)] = n
	return out
}

var propertyCases = []struct {
	name    string
	text    string
	size    int
	overlap int
}{
	{"empty", "", 16, 4},
	{"blank", " \n\t\n\n\n  ", 16, 4},
	{"one sentence", "Hello world.", 16, 4},
	{"sentences", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40), 32, 8},
	{"paragraphs", strings.Repeat("First paragraph here.\n\n\nSecond one, with a comma; and more!\n\n\n", 20), 24, 6},
	{"no punctuation", strings.Repeat("word ", 300), 16, 5},
	{"one long word", strings.Repeat("abcdefghij", 200), 8, 2},
	{"phrases", strings.Repeat("alpha, beta; gamma,, delta;; ", 50), 12, 3},
	{"leading delimiters", ",,;" + strings.Repeat("x y z, ", 50), 8, 2},
	{"abbreviations and urls", strings.Repeat("Dr. Who met Mr. X at https://ex.com/start. Then etc. 3.14 and 1,234.5! ", 30), 20, 5},
	{"unicode", strings.Repeat("日本語の文章です。これは二番目！ Ünïcödé… “quoted.” ", 30), 10, 3},
	{"emoji", strings.Repeat("🙂🚀👍🏽", 100), 4, 1},
	{"whitespace runs", strings.Repeat("a    \n\n  b\t\t\t\r\n", 60), 6, 2},
	{"zero overlap", strings.Repeat("Sentence one. Sentence two! ", 50), 10, 0},
	{"invalid utf8", strings.Repeat("ok \xff\xfe bad. ", 40), 8, 2},
	{"minimum size", strings.Repeat("Tiny chunks everywhere. ", 20), MinChunkSize, 1},
	// " pneumonoultramicroscopic" is 6 tokens, without its space 8.
	{"trimming costs tokens", "a. pneumonoultramicroscopic", 6, 0},
	{"trimming costs tokens with overlap", strings.Repeat("a. pneumonoultramicroscopic ", 5), 7, 2},
	// " unbelievable." is 2 tokens, "unbelievable." 4.
	{"trimmed chunk gives a piece back", "x. x. unbelievable. ok. ok.", 4, 0},
	{"trimmed overlap exceeds", "x. unbelievable. ok. ok.", 4, 2},
	{"trimmed chunk drops overlap", "x. unbelievable. ok. ok. ok.", 6, 5},
}

func TestSplitInvariants(t *testing.T) {
	for _, tc := range propertyCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{ChunkSize: tc.size, ChunkOverlap: tc.overlap})
			if err != nil {
				t.Fatal(err)
			}
			chunks := s.Split(tc.text)
			checkChunks(t, s, tc.text, tc.size, chunks)
			if strings.TrimFunc(tc.text, isJSSpace) != "" && len(chunks) == 0 {
				t.Fatal("no chunks for non-blank text")
			}
		})
	}
}

// FuzzSplit splits arbitrary text with arbitrary chunk sizes and overlaps:
// the chunks must hold the invariants of checkChunks, and the fast
// sentence and phrase scanners that decide where chunks may end must agree
// with their reference implementations (checkScanners) on the text, which
// TestScannersMatchReference only checks on random mixes of fragments.
func FuzzSplit(f *testing.F) {
	for _, tc := range propertyCases {
		f.Add(tc.text, uint16(tc.size), uint16(tc.overlap))
	}
	f.Fuzz(func(t *testing.T, text string, size, overlap uint16) {
		cfg := Config{ChunkSize: MinChunkSize + int(size%200), ChunkOverlap: int(overlap % 200)}
		cfg.ChunkOverlap %= cfg.ChunkSize
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, s, text, cfg.ChunkSize, s.Split(text))
		if len(text) <= 4096 { // the references try every position: slow on long texts
			checkScanners(t, text)
		}
	})
}

// TestCountTokensGolden checks token counts against js-tiktoken, the
// tokenizer of LlamaIndex.TS (testdata/js-tiktoken-counts.jsonl, written by
// benchmarks/splitter/token-counts.mjs), on random mixes of letters, digits,
// contractions, white space (including U+0085, U+00A0, U+FEFF), CJK, emoji
// and punctuation.
func TestCountTokensGolden(t *testing.T) {
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "js-tiktoken-counts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var g struct {
			Text   string `json:"text"`
			Tokens int    `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		n++
		if got := s.CountTokens(g.Text); got != g.Tokens {
			t.Errorf("CountTokens(%q) = %d, js-tiktoken says %d", g.Text, got, g.Tokens)
		}
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("read golden counts: %d lines, %v", n, err)
	}
}

// TestCountTokensMatchesTiktokenGo cross-checks plain texts with
// tiktoken-go (whose .NET-style regular expression differs from
// JavaScript's on some white-space runs, so only simple texts are used).
func TestCountTokensMatchesTiktokenGo(t *testing.T) {
	ref, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"", "a", "hello world", "Hello, World!!\n\n", "  leading and trailing  ", "\t\ttabs\tand\nnewlines\r\n\r\n",
		"don't I'll we're they've he'd she's IT'S 'tis", "12345678 3.14159 1,000,000", "日本語のテキスト。",
		"naïve café résumé", "🙂🚀 emoji 👍🏽", "    x", "x    ", strings.Repeat("a", 500),
		strings.Repeat("ab1", 300), "func main() {\n\tfmt.Println(\"hi\")\n}\n", "<|endoftext|> is text here",
		strings.Repeat(" ", 200) + "z", "a\u00a0b\u2003c", "x'y 'S 'LL 'Ve",
	}
	for _, text := range texts {
		want, err := ref.Count(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CountTokens(text); got != want {
			t.Errorf("CountTokens(%.40q) = %d, tiktoken-go says %d", text, got, want)
		}
	}
}

// TestSplitRandomInputs checks the invariants on pseudo-random mixes of
// tricky fragments and bytes (a deterministic complement to FuzzSplit).
func TestSplitRandomInputs(t *testing.T) {
	fragments := []string{"a", "0", " ", "\n", ".", ",", "A", "\n\n\n", "ab", "00", "\xff", "日", "'s", "@",
		"http://", ";", "…", "  ", " unbelievable", "Dr.", "3.14", "x@y.org", "\t", "🙂"}
	r := rand.New(rand.NewPCG(1, 2))
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	for it := range iterations {
		var b strings.Builder
		for range r.IntN(300) {
			if r.IntN(4) == 0 {
				b.WriteByte(byte(r.IntN(256)))
			} else {
				b.WriteString(fragments[r.IntN(len(fragments))])
			}
		}
		size := MinChunkSize + r.IntN(40)
		cfg := Config{ChunkSize: size, ChunkOverlap: r.IntN(size)}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		text := b.String()
		if !t.Run(fmt.Sprint(it), func(t *testing.T) { checkChunks(t, s, text, size, s.Split(text)) }) {
			t.Fatalf("config %+v, text %q", cfg, text)
		}
	}
}
