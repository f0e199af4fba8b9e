package splitter

import (
	"strings"
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

// cutter splits a text into consecutive non-empty parts; cuts returns the
// end offsets of all parts but the last (nil when the text stays whole).
type cutter func(text string, cuts []int) []int

// cutters are tried in order; the first that yields more than one part wins,
// as in LlamaIndex's #getSplitsByFns.
var cutters = [...]cutter{cutParagraphs, cutSentences, cutPhrases, cutWords, cutRunes}

// cutParagraphs cuts before each "\n\n\n" found scanning left to right
// (JavaScript's String.split), keeping the separator with the next part.
func cutParagraphs(text string, cuts []int) []int {
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

// cutSentences cuts after each sentence end of natural's tokenizer.
func cutSentences(text string, cuts []int) []int {
	return sentenceEnds(text, cuts)
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
func cutPhrases(text string, cuts []int) []int {
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
			if matched {
				cuts = append(cuts, i)
			}
			matched = true
		}
		i = d + w
	}
	return cuts
}

// cutWords cuts before each space, keeping it with the next part.
func cutWords(text string, cuts []int) []int {
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// cutRunes cuts between code points (LlamaIndex cuts between UTF-16 code
// units, which splits surrogate pairs).
func cutRunes(text string, cuts []int) []int {
	for i := 0; i < len(text); {
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if i < len(text) {
			cuts = append(cuts, i)
		}
	}
	return cuts
}
