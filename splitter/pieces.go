package splitter

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// piece is a split of the text: a byte range and its token count (counted
// alone, as LlamaIndex does).
type piece struct {
	start, end int
	tokens     int
	// Where the piece's first pre-token ends and its last one starts when
	// the piece is tokenized alone (absolute offsets), and their counts.
	firstEnd, firstTokens int
	lastStart, lastTokens int
}

// newPiece returns the piece text[start:end] (at offset off) with tally c.
func newPiece(off, start, end int, c tally) piece {
	return piece{
		start: off + start, end: off + end, tokens: c.tokens,
		firstEnd: off + start + c.firstEnd, firstTokens: c.firstTokens,
		lastStart: off + start + c.lastStart, lastTokens: c.lastTokens,
	}
}

// paragraphSeparator, secondary regex and word separator of LlamaIndex's
// SentenceSplitter.
const paragraphSeparator = "\n\n\n"

// cutter cuts a text into consecutive non-empty parts: it calls yield with
// the end offset of each part but the last, in order, until yield returns
// false; not at all when the text stays whole. Cuts are passed on as they
// are found, never held in a list (except sentence ends, see
// cutSentences): a run of spaces or letters has one per byte (cutWords,
// cutRunes).
type cutter func(text string, yield func(end int) bool)

// cutters are tried in order; the first that yields more than one part wins,
// as in LlamaIndex's #getSplitsByFns.
var cutters = [...]cutter{cutParagraphs, cutSentences, cutPhrases, cutWords, cutRunes}

// cutParagraphs cuts before each "\n\n\n" found scanning left to right
// (JavaScript's String.split), keeping the separator with the next part.
func cutParagraphs(text string, yield func(int) bool) {
	for i := 0; ; {
		k := strings.Index(text[i:], paragraphSeparator)
		if k < 0 {
			return
		}
		if at := i + k; at > 0 && !yield(at) {
			return
		}
		i += k + len(paragraphSeparator)
		if i >= len(text) {
			return
		}
	}
}

// cutSentences cuts after each sentence end of natural's tokenizer.
func cutSentences(text string, yield func(int) bool) {
	sentenceEndsBySection(text, sentenceSection, yield)
}

// sentenceSection is the length of text that sentenceEndsBySection
// passes to sentenceEnds at a time, at least.
const sentenceSection = 64 << 10

// sentenceEndsBySection passes to yield the sentence ends of text, found
// section by section: each section but the last is the first n bytes of
// what is left, and more up to a restart (see isRestart). sentenceEnds
// holds lists of masks and of ends that grow with the text it scans (a
// 16-byte span per 4 bytes of "Dr. Dr. Dr."); sections keep them short.
func sentenceEndsBySection(text string, n int, yield func(int) bool) {
	buf := endsPool.Get().(*[]int)
	defer endsPool.Put(buf)
	for a := 0; a < len(text); {
		b := a + n
		for b < len(text) && !isRestart(text, b) {
			b++
		}
		b = min(b, len(text))
		*buf = sentenceEnds(text[a:b], (*buf)[:0])
		for _, end := range *buf {
			if !yield(a + end) {
				return
			}
		}
		a = b
	}
}

// endsPool holds the sentence end lists of cutSentences, one per depth of
// cutting in progress.
var endsPool = sync.Pool{New: func() any { return new([]int) }}

// isRestart reports whether i follows ASCII white space and starts an
// ASCII letter or digit: a place where a text can be cut in two whose
// sentence ends are those of the whole (less i in the second part). No
// match of natural's patterns holds the white space at i-1: masks
// (abbreviations, URLs, e-mail addresses, numbers) hold none, and a run of
// delimiters and spaces that held it would go on at i with a delimiter or
// a space. So each match lies on one side of i. What the patterns look at
// beside a match (\b around a number, the start of an e-mail address, a
// closer after a delimiter) takes the white space at i-1 as it takes
// either end of a text: as no word, address or closer character. And no
// sentence ends at i, after white space.
func isRestart(text string, i int) bool {
	return i > 0 && isSpaceClass(byteClasses[text[i-1]]) && isWordByte(text[i]) && text[i] != '_'
}

// phraseEndAt returns the width of the phrase delimiter [,.;。？！] at
// text[i], or 0.
func phraseEndAt(text string, i int) int {
	switch text[i] {
	case ',', '.', ';':
		return 1
	case 0xe3, 0xef: // '。' is E3 80 82, '？' EF BC 9F, '！' EF BC 81
		switch r, n := utf8.DecodeRuneInString(text[i:]); r {
		case '。', '？', '！':
			return n
		}
	}
	return 0
}

// cutPhrases cuts at the matches of [^,.;。？！]+[,.;。？！]?. JavaScript's
// String.match drops the delimiters that no match covers (a leading one or
// the second of two in a row); here they stay with the preceding part (or
// the first one), so the parts still cover the text. The number of parts is
// the number of matches, so the decision to use this cutter is LlamaIndex's.
//
// A match starts at each non-delimiter that follows a delimiter, or starts
// the text; cutPhrases jumps from delimiter to delimiter.
func cutPhrases(text string, yield func(int) bool) {
	next := newByteFinder(text, ",.;\xe3\xef")
	matched := false // a match has started before i
	for i := 0; i < len(text); {
		// The next delimiter at or after i.
		d, w := next.index(i), 0
		for d < len(text) {
			if w = phraseEndAt(text, d); w > 0 {
				break
			}
			d = next.index(d + 1)
		}
		if d > i { // a match starts at i
			if matched && !yield(i) {
				return
			}
			matched = true
		}
		i = d + w
	}
}

// cutWords cuts before each space, keeping it with the next part.
func cutWords(text string, yield func(int) bool) {
	for i := 1; i < len(text); i++ {
		k := strings.IndexByte(text[i:], ' ')
		if k < 0 || !yield(i+k) {
			return
		}
		i += k
	}
}

// cutRunes cuts between code points (LlamaIndex cuts between UTF-16 code
// units, which splits surrogate pairs).
func cutRunes(text string, yield func(int) bool) {
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
		}
		if i < len(text) && !yield(i) {
			return
		}
	}
}
