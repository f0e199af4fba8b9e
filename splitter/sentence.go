package splitter

import (
	"strings"
	"unicode/utf8"
)

// This file reproduces, in linear time, the sentence boundaries of the
// `natural` SentenceTokenizer that LlamaIndex.TS uses (with its English and
// Spanish abbreviation lists, untrimmed sentences). That tokenizer works by
// textual substitution:
//
//  1. abbreviations (case-insensitive, no word boundaries) become placeholders,
//  2. URLs and e-mail addresses become placeholders,
//  3. numbers (\b\d{1,3}(,\d{3})*(\.\d+)?\b) become placeholders,
//  4. every match of ([.?!… ]*)([.?!…])(["'”’)}\]]?) ends a sentence.
//
// Here the placeholders are masked byte ranges of the original text: every
// later stage sees a masked range as one opaque character that is neither
// white space, nor a word character, nor in any other class it looks for,
// exactly as the placeholder strings `{{KIND_n}}` behave.

// abbreviations are natural's English and Spanish lists as LlamaIndex.TS
// passes them, in order.
var abbreviations = []string{
	"i.e.", "etc.", "vs.", "Inc.", "A.S.A.P.", "Mr.", "Mrs.", "Ms.", "Dr.", "Prof.",
	"Sr.", "Jr.", "Tel.", "a.m.", "p.m.", "Art.",
	"Sr.", "Sres.", "Srs.", "Sra.", "Sras.", "Srta.", "Srtas.", "Dr.", "Drs.", "Dra.",
	"Dras.", "Prof.", "Profs.", "Profa.", "Profas.", "Ing.", "Lic.", "Arq.", "Ab.", "Abs.",
}

// abbrevByFirst indexes abbreviations by their lower-cased first byte.
var abbrevByFirst = func() (t [128][]string) {
	for _, a := range abbreviations {
		c := lowerASCII(a[0])
		t[c] = append(t[c], a)
	}
	return t
}()

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s[i:] starts with p, ignoring ASCII case.
func hasPrefixFold(s string, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if lowerASCII(s[i+k]) != lowerASCII(p[k]) {
			return false
		}
	}
	return true
}

// span is a half-open byte range.
type span struct{ start, end int }

// masked is a text with sorted, disjoint masked ranges.
type masked struct {
	s     string
	masks []span
	// next is the index of the first mask that ends after the scan position;
	// scanners move forward only.
	next int
}

// at describes position i of a masked text: if i starts a mask, ok is false
// and n is the mask's length; otherwise r is the rune at i and n its width.
func (m *masked) at(i int) (r rune, n int, plain bool) {
	for m.next < len(m.masks) && m.masks[m.next].end <= i {
		m.next++
	}
	if m.next < len(m.masks) && m.masks[m.next].start <= i {
		return 0, m.masks[m.next].end - i, false
	}
	if c := m.s[i]; c < utf8.RuneSelf {
		return rune(c), 1, true
	}
	r, n = utf8.DecodeRuneInString(m.s[i:])
	return r, n, true
}

// sentenceEnds returns the byte offsets at which natural's sentence tokenizer
// ends sentences in s, in increasing order, excluding len(s).
func sentenceEnds(s string) []int {
	masks := abbreviationSpans(s)
	masks = mergeSpans(masks, urlSpans(s, masks))
	masks = mergeSpans(masks, numberSpans(s, masks))
	return delimiterEnds(s, masks)
}

// abbreviationSpans finds the leftmost, non-overlapping abbreviation matches.
func abbreviationSpans(s string) []span {
	var out []span
	dot := -1 // the first '.' at or after i
	for i := 0; i < len(s); {
		if dot < i {
			k := strings.IndexByte(s[i:], '.')
			if k < 0 {
				break
			}
			dot = i + k
		}
		if dot-i >= maxAbbrevLen {
			i = dot - maxAbbrevLen + 1 // no abbreviation can start before
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			for _, a := range abbrevByFirst[lowerASCII(c)] {
				if hasPrefixFold(s, i, a) {
					out = append(out, span{i, i + len(a)})
					i += len(a) - 1
					break
				}
			}
		}
		i++
	}
	return out
}

// maxAbbrevLen is the length of the longest abbreviation.
const maxAbbrevLen = len("A.S.A.P.")

// mergeSpans merges two sorted span lists; spans of b may cover spans of a
// (a URL swallowing an abbreviation), in which case the covered ones go.
func mergeSpans(a, b []span) []span {
	if len(b) == 0 {
		return a
	}
	out := make([]span, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && a[i].start < b[j].start) {
			if len(out) > 0 && a[i].end <= out[len(out)-1].end {
				i++
				continue
			}
			out = append(out, a[i])
			i++
			continue
		}
		for len(out) > 0 && out[len(out)-1].start >= b[j].start {
			out = out[:len(out)-1]
		}
		out = append(out, b[j])
		j++
	}
	return out
}

func isURLLocal(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// urlSpans finds the matches of natural's URI pattern
//
//	https?://\S+ | www\.\S+ | ftp://\S+ |
//	(mailto:)?[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,} | file://\S+
//
// (case-insensitive) in s, where abbreviation masks count as \S.
func urlSpans(s string, abbrev []span) []span {
	var out []span
	m := &masked{s: s, masks: abbrev}
	nonSpaceEnd := func(i int) int { // end of \S+ from i (i itself included)
		for i < len(s) {
			r, n, plain := m.at(i)
			if plain && isJSSpace(r) {
				break
			}
			i += n
		}
		return i
	}
	emailFailsUntil := 0
	at := -1 // the first '@' at or after i (len(s) if none)
	for i := 0; i < len(s); {
		// Cheap tests first: only h, w, f and m start a URL, and an e-mail
		// address needs a local-part character and a '@' ahead.
		c := s[i]
		if lc := c | 0x20; lc != 'h' && lc != 'w' && lc != 'f' && lc != 'm' {
			if !isURLLocal(c) || i < emailFailsUntil {
				i++
				continue
			}
			if at < i {
				at = len(s)
				if k := strings.IndexByte(s[i:], '@'); k >= 0 {
					at = i + k
				}
			}
			if at == len(s) {
				i++
				continue
			}
		}
		if _, n, plain := m.at(i); !plain {
			i += n
			continue
		}
		end := -1
		for _, p := range [...]string{"http://", "https://", "www.", "ftp://"} {
			if hasPrefixFold(s, i, p) {
				if e := nonSpaceEnd(i + len(p)); e > i+len(p) {
					end = e
				}
				break
			}
		}
		if end < 0 && hasPrefixFold(s, i, "mailto:") {
			end, _ = emailEnd(s, i+len("mailto:"), abbrev)
		}
		if end < 0 && i >= emailFailsUntil && isURLLocal(c) {
			if at < i {
				at = len(s)
				if k := strings.IndexByte(s[i:], '@'); k >= 0 {
					at = i + k
				}
			}
			if at < len(s) {
				var run int
				if end, run = emailEnd(s, i, abbrev); end < 0 {
					emailFailsUntil = run
				}
			}
		}
		if end < 0 && hasPrefixFold(s, i, "file://") {
			if e := nonSpaceEnd(i + len("file://")); e > i+len("file://") {
				end = e
			}
		}
		if end > i {
			out = append(out, span{i, end})
			i = end
			continue
		}
		i++
	}
	return out
}

// emailEnd matches [a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,} at s[i:]
// and returns its end, or -1, and the end of the local-part run (the match
// fails at every start inside that run if it fails at i). Masks (a
// placeholder's '{') end both runs.
func emailEnd(s string, i int, masks []span) (end, runEnd int) {
	k := i
	for k < len(s) && isURLLocal(s[k]) && !inMaskAny(masks, k) {
		k++
	}
	if k == i || k >= len(s) || s[k] != '@' {
		return -1, k
	}
	d0 := k + 1
	m := d0
	for m < len(s) && isDomain(s[m]) && !inMaskAny(masks, m) {
		m++
	}
	// The longest domain wins: the last '.' (with at least one domain byte
	// before it) followed by two or more letters.
	for d := m - 1; d > d0; d-- {
		if s[d] != '.' {
			continue
		}
		e := d + 1
		for e < m && isASCIILetter(s[e]) {
			e++
		}
		if e-(d+1) >= 2 {
			return e, k
		}
	}
	return -1, k
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numberSpans finds the matches of \b\d{1,3}(?:,\d{3})*(?:\.\d+)?\b outside
// the masks (which are non-word characters for \b).
func numberSpans(s string, masks []span) []span {
	var out []span
	m := &masked{s: s, masks: masks}
	inMask := func(i int) bool { // is s[i] masked? (only called going forward)
		_, _, plain := m.at(i)
		return !plain
	}
	// wordAt reports whether position i holds a word character.
	wordAt := func(i int) bool {
		return i >= 0 && i < len(s) && isWordByte(s[i]) && !inMaskAny(masks, i)
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || inMask(i) || wordAt(i-1) {
			continue
		}
		run := i
		for run < len(s) && isDigit(s[run]) {
			run++
		}
		if run-i > 3 {
			i = run - 1
			continue
		}
		reps := 0
		for p := run + 4*reps; p+3 < len(s) && s[p] == ',' && isDigit(s[p+1]) && !inMaskAny(masks, p+1) && isDigit(s[p+2]) && isDigit(s[p+3]); p = run + 4*reps {
			reps++
		}
		end := -1
		for r := reps; r >= 0 && end < 0; r-- {
			p := run + 4*r
			if p+1 < len(s) && s[p] == '.' && isDigit(s[p+1]) && !inMaskAny(masks, p+1) {
				q := p + 1
				for q < len(s) && isDigit(s[q]) {
					q++
				}
				if !wordAt(q) {
					end = q
					break
				}
			}
			if !wordAt(p) {
				end = p
			}
		}
		if end > i {
			out = append(out, span{i, end})
			i = end - 1
		}
	}
	return out
}

// inMaskAny reports whether i lies inside one of the sorted masks.
func inMaskAny(masks []span, i int) bool {
	lo, hi := 0, len(masks)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if masks[h].end <= i {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo < len(masks) && masks[lo].start <= i
}

func isDelimRun(r rune) bool { return r == '.' || r == '?' || r == '!' || r == '…' || r == ' ' }
func isDelim(r rune) bool    { return r == '.' || r == '?' || r == '!' || r == '…' }
func isCloser(r rune) bool {
	return r == '"' || r == '\'' || r == '”' || r == '’' || r == ')' || r == '}' || r == ']'
}

// delimiterEnds returns the ends of the matches of
// ([.?!… ]*)([.?!…])(["'”’)}\]]?) outside masks.
func delimiterEnds(s string, masks []span) []int {
	var ends []int
	m := &masked{s: s, masks: masks}
	for i := 0; i < len(s); {
		if c := s[i]; c != '.' && c != '?' && c != '!' && c != ' ' && c != 0xe2 { // 0xe2 starts '…'
			i++
			continue
		}
		r, n, plain := m.at(i)
		if !plain || !isDelimRun(r) {
			i += n
			continue
		}
		// Maximal run of [.?!… ] from i; remember its last delimiter.
		j, last, lastW := i, -1, 0
		for j < len(s) {
			r2, n2, plain2 := m.at(j)
			if !plain2 || !isDelimRun(r2) {
				break
			}
			if isDelim(r2) {
				last, lastW = j, n2
			}
			j += n2
		}
		if last < 0 {
			i = j
			continue
		}
		end := last + lastW
		if end == j && end < len(s) {
			if r3, n3, plain3 := m.at(end); plain3 && isCloser(r3) {
				end += n3
			}
		}
		if end < len(s) {
			ends = append(ends, end)
		}
		i = end
	}
	return ends
}
