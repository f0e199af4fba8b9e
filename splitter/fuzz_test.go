package splitter

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// tiktokenGoComparable rewrites text so that tiktoken-go pre-tokenizes it
// as js-tiktoken does (see the package documentation), for a differential
// test of CountTokens:
//   - invalid UTF-8 becomes U+FFFD: tiktoken-go's regexp2 matches runes,
//     and counts each invalid byte as the three bytes of U+FFFD;
//   - U+FEFF and U+0085 become 'x': JavaScript's \s holds U+FEFF and not
//     U+0085, .NET's the reverse;
//   - DEL (U+007F) becomes '?', another character that is neither a
//     letter, a digit nor white space: tiktoken-go drops it and every
//     character after it up to the next match (it counts "\x7f" as 0
//     tokens and "a\x7fb" as 2; js-tiktoken, like CountTokens, 1 and 3);
//   - in a run of white space, the white space other than \r and \n
//     between its first and last \r or \n is dropped: tiktoken-go never
//     lets \s*[\r\n]+ match across a newline followed by other white space
//     ("\n \n" is one piece in JavaScript, "\n" and " \n" in tiktoken-go).
func tiktokenGoComparable(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.NewReplacer("\uFEFF", "x", "\u0085", "x", "\x7f", "?").Replace(text)
	var b strings.Builder
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isJSSpace(r) {
			b.WriteString(text[i : i+n])
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isJSSpace(r) {
				break
			}
			j += n
		}
		run := text[i:j]
		first, last := strings.IndexAny(run, "\r\n"), strings.LastIndexAny(run, "\r\n")
		if first < 0 {
			b.WriteString(run)
		} else {
			b.WriteString(run[:first])
			for _, c := range []byte(run[first : last+1]) {
				if c == '\r' || c == '\n' {
					b.WriteByte(c)
				}
			}
			b.WriteString(run[last+1:])
		}
		i = j
	}
	return b.String()
}

// FuzzCountTokens compares CountTokens with tiktoken-go's cl100k_base on
// texts that both pre-tokenize alike (tiktokenGoComparable): the same
// vocabulary and merges must give the same count.
func FuzzCountTokens(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "Hello, World!!\n\n", "  leading and trailing  ", "\t\ttabs\tand\nnewlines\r\n\r\n",
		"don't I'll we're they've he'd she's IT'S 'tis x'Ll", "12345678 3.14159 1,000,000", "日本語のテキスト。",
		"naïve café résumé", "🙂🚀 emoji 👍🏽", "<|endoftext|> is text here", "a\u00a0b\u2003c\u3000 \n\u2028d",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n", strings.Repeat("ab1", 50), strings.Repeat(" ", 70) + "z",
		"   \n\n  x  \r\n", "\xff\xfe ok", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "----====____****",
	} {
		f.Add(s)
	}
	ref, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 2048 { // 20 times smallPiece: long pieces are merged in parts
			return
		}
		text = tiktokenGoComparable(text)
		want, err := ref.Count(text)
		if err != nil {
			t.Fatalf("tiktoken-go: %v", err)
		}
		if got := s.CountTokens(text); got != want {
			_, toks, _ := ref.Encode(text)
			t.Fatalf("CountTokens(%q) = %d, tiktoken-go says %d: %q", text, got, want, toks)
		}
	})
}

// chunkedReader returns its text in reads of the sizes of sizes, in turn:
// the window filling of SplitReader must not depend on them.
type chunkedReader struct {
	text  string
	sizes []byte
	n     int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if r.text == "" {
		return 0, io.EOF
	}
	size := len(p)
	if len(r.sizes) > 0 {
		size = min(size, 1+int(r.sizes[r.n%len(r.sizes)]))
		r.n++
	}
	k := copy(p[:size], r.text)
	r.text = r.text[k:]
	return k, nil
}

// FuzzSplitReader streams texts through SplitReader in reads of arbitrary
// sizes and compares with Split on the whole text:
//   - with a window longer than the text (as the default window of 1 MiB
//     is for any text fuzzing makes; it is not used, since allocating it
//     would make each run slow), the chunks are Split's;
//   - with a window of 64 bytes per token of ChunkSize (the production
//     ratio, at a size fuzzing reaches) over paragraphs shorter than half
//     a window, every window ends on a paragraph separator, and the chunks
//     are Split's too;
//   - in both, the chunks hold the invariants of checkChunks.
func FuzzSplitReader(f *testing.F) {
	for _, tc := range propertyCases {
		f.Add(tc.text, uint16(tc.size), uint16(tc.overlap), []byte{3, 200, 0})
	}
	f.Add("First paragraph.\n\n\n\nSecond one, longer, with commas; and a semicolon.\n\n\nThird!", uint16(4), uint16(3), []byte{0})
	f.Fuzz(func(t *testing.T, text string, size, overlap uint16, reads []byte) {
		if len(text) > 4096 {
			return
		}
		cfg := Config{ChunkSize: MinChunkSize + int(size%60), ChunkOverlap: int(overlap % 60)}
		cfg.ChunkOverlap %= cfg.ChunkSize
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}

		whole := s.Split(text)
		one := *s
		one.window = len(text) + 1
		streamed := streamChunks(t, &one, text, reads)
		checkChunks(t, s, text, cfg.ChunkSize, streamed)
		if !slices.Equal(streamed, whole) {
			t.Fatalf("SplitReader in one window differs from Split:\n streamed %v\n whole    %v", streamed, whole)
		}

		// Any text in windows of 64 bytes per token of ChunkSize: the
		// chunks do not depend on the sizes of the reads.
		small := *s
		small.window = 64 * cfg.ChunkSize
		if got, want := streamChunks(t, &small, text, reads), streamChunks(t, &small, text, nil); !slices.Equal(got, want) {
			t.Fatalf("SplitReader in windows of %d bytes depends on the sizes of reads (%v) on %q:\n reads %v\n whole %v", small.window, reads, text, got, want)
		}

		// Paragraphs at most half a window long: every window ends on a
		// paragraph separator.
		var paragraphs []string
		for p := range strings.SplitSeq(text, paragraphSeparator) {
			for len(p) > small.window/2-8 {
				cut := small.window/2 - 8
				for cut > 0 && !utf8.RuneStart(p[cut]) {
					cut--
				}
				paragraphs = append(paragraphs, p[:cut])
				p = p[cut:]
			}
			paragraphs = append(paragraphs, p)
		}
		text = strings.Join(paragraphs, paragraphSeparator)
		whole = s.Split(text)
		streamed = streamChunks(t, &small, text, reads)
		checkChunks(t, s, text, cfg.ChunkSize, streamed)
		if !slices.Equal(streamed, whole) {
			t.Fatalf("SplitReader in windows of %d bytes differs from Split on %q:\n streamed %v\n whole    %v", small.window, text, streamed, whole)
		}
	})
}

// streamChunks returns the chunks SplitReader makes of text read in reads
// of the given sizes.
func streamChunks(t *testing.T, s *Splitter, text string, reads []byte) []Chunk {
	t.Helper()
	var out []Chunk
	err := s.SplitReader(context.Background(), &chunkedReader{text: text, sizes: reads}, func(c Chunk) error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatalf("SplitReader: %v", err)
	}
	return out
}
