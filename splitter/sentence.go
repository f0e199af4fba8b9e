package splitter

import (
	"math"
	"strings"
	"sync"
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
//
// Each stage jumps from candidate to candidate (a '.', a ':', a '@', a
// digit, a delimiter) instead of trying every position, and finds the same
// leftmost matches a regular expression engine would.

// abbreviations are natural's English and Spanish lists as LlamaIndex.TS
// passes them, in order.
var abbreviations = []string{
	"i.e.", "etc.", "vs.", "Inc.", "A.S.A.P.", "Mr.", "Mrs.", "Ms.", "Dr.", "Prof.",
	"Sr.", "Jr.", "Tel.", "a.m.", "p.m.", "Art.",
	"Sr.", "Sres.", "Srs.", "Sra.", "Sras.", "Srta.", "Srtas.", "Dr.", "Drs.", "Dra.",
	"Dras.", "Prof.", "Profs.", "Profa.", "Profas.", "Ing.", "Lic.", "Arq.", "Ab.", "Abs.",
}

// abbrevsAt indexes abbreviations by the offset of their first '.' and
// their lower-cased first byte, in list order: an abbreviation starting at
// i can only match if the first '.' at or after i is at that offset.
var abbrevsAt = func() (t [maxFirstDot + 1][128][]string) {
	for _, a := range abbreviations {
		f := strings.IndexByte(a, '.')
		t[f][lowerASCII(a[0])] = append(t[f][lowerASCII(a[0])], a)
	}
	return t
}()

// maxFirstDot is the largest offset of the first '.' of an abbreviation.
const maxFirstDot = len("Profas")

// beforeFirstDot flags the lower-cased bytes that precede the first '.' of
// some abbreviation: no abbreviation ends its first word at a '.' after
// another byte.
var beforeFirstDot = func() (t [256]bool) {
	for _, a := range abbreviations {
		t[lowerASCII(a[strings.IndexByte(a, '.')-1])] = true
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

// Byte classes of the sentence scanners (bit flags, ASCII only).
const (
	bLocal  uint8 = 1 << iota // [a-zA-Z0-9._%+-]: e-mail local part
	bDomain                   // [a-zA-Z0-9.-]: e-mail domain
	bLetter                   // [a-zA-Z]
	bDigit                    // [0-9]
	bWord                     // [a-zA-Z0-9_]: \w
)

var asciiFlags = func() (t [256]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		letter, digit := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		set := func(flag uint8, on bool) {
			if on {
				t[c] |= flag
			}
		}
		set(bLocal, letter || digit || strings.IndexByte("._%+-", byte(c)) >= 0)
		set(bDomain, letter || digit || c == '.' || c == '-')
		set(bLetter, letter)
		set(bDigit, digit)
		set(bWord, letter || digit || c == '_')
	}
	return t
}()

func isURLLocal(c byte) bool    { return asciiFlags[c]&bLocal != 0 }
func isDomain(c byte) bool      { return asciiFlags[c]&bDomain != 0 }
func isASCIILetter(c byte) bool { return asciiFlags[c]&bLetter != 0 }
func isDigit(c byte) bool       { return asciiFlags[c]&bDigit != 0 }
func isWordByte(c byte) bool    { return asciiFlags[c]&bWord != 0 }

// span is a half-open byte range.
type span struct{ start, end int }

// none is the start of a match that does not exist: after any position.
const none = math.MaxInt

// maskCursor tells whether positions of a text are masked, for positions
// asked in non-decreasing order, in amortized constant time.
type maskCursor struct {
	masks []span // sorted, disjoint
	next  int    // index of the first mask that ends after the last position asked
}

// end returns the end of the mask covering i, or -1 if i is not masked.
func (c *maskCursor) end(i int) int {
	for c.next < len(c.masks) && c.masks[c.next].end <= i {
		c.next++
	}
	if c.next < len(c.masks) && c.masks[c.next].start <= i {
		return c.masks[c.next].end
	}
	return -1
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

// maskBuffers are the span lists of one sentenceEnds call, reused.
type maskBuffers struct{ abbrev, urls, masks, numbers, all []span }

var maskPool = sync.Pool{New: func() any { return new(maskBuffers) }}

// sentenceEnds appends to ends the byte offsets at which natural's sentence
// tokenizer ends sentences in s, in increasing order, excluding len(s).
func sentenceEnds(s string, ends []int) []int {
	b := maskPool.Get().(*maskBuffers)
	defer maskPool.Put(b)
	b.abbrev = abbreviationSpans(s, b.abbrev[:0])
	b.urls = urlSpans(s, b.abbrev, b.urls[:0])
	// A list merged with an empty one is itself: not copied, it takes no
	// more memory ("Dr.Dr.Dr." is all abbreviations, "1.5,2.5" numbers).
	masks := b.abbrev
	if len(b.urls) > 0 {
		b.masks = mergeSpans(b.abbrev, b.urls, b.masks[:0])
		masks = b.masks
	}
	b.numbers = numberSpans(s, masks, b.numbers[:0])
	all := masks
	switch {
	case len(masks) == 0:
		all = b.numbers
	case len(b.numbers) > 0:
		b.all = mergeSpans(masks, b.numbers, b.all[:0])
		all = b.all
	}
	return delimiterEnds(s, all, ends)
}

// abbreviationSpans appends to out the leftmost, non-overlapping
// abbreviation matches, trying the starts before each '.' in turn.
func abbreviationSpans(s string, out []span) []span {
	for pos := 0; pos < len(s); {
		k := strings.IndexByte(s[pos:], '.')
		if k < 0 {
			break
		}
		dot := pos + k
		next := dot + 1 // where to go on when no abbreviation starts in [pos, dot]
		if dot == 0 || !beforeFirstDot[lowerASCII(s[dot-1])] {
			pos = next
			continue
		}
		for f := min(maxFirstDot, dot-pos); f > 0; f-- {
			if c := s[dot-f]; c < utf8.RuneSelf {
				if a := firstMatch(s, dot-f, abbrevsAt[f][lowerASCII(c)]); a != "" {
					out = append(out, span{dot - f, dot - f + len(a)})
					next = dot - f + len(a)
					break
				}
			}
		}
		pos = next
	}
	return out
}

// firstMatch returns the first of abbrevs that s[i:] starts with, ignoring
// ASCII case, or "".
func firstMatch(s string, i int, abbrevs []string) string {
	for _, a := range abbrevs {
		if hasPrefixFold(s, i, a) {
			return a
		}
	}
	return ""
}

// mergeSpans appends to out the merge of two sorted span lists; spans of b
// may cover spans of a (a URL swallowing an abbreviation), in which case the
// covered ones go.
func mergeSpans(a, b, out []span) []span {
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

// schemes are the prefixes of natural's URI pattern that hold a ':' ("mailto:"
// starts an e-mail address).
var schemes = [...]string{"http://", "https://", "ftp://", "file://", "mailto:"}

// schemeEnd flags the bytes that end a scheme (before its ':'), in either
// case.
var schemeEnd = func() (t [256]bool) {
	for _, p := range schemes {
		c := p[strings.IndexByte(p, ':')-1]
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// urlSpans appends to out the matches of natural's URI pattern
//
//	https?://\S+ | www\.\S+ | ftp://\S+ |
//	(mailto:)?[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,} | file://\S+
//
// (case-insensitive) in s, where abbreviation masks count as \S. Matches
// start only at unmasked positions.
//
// The leftmost match is the first of three kinds of candidates, each found
// from its anchor: a scheme from its ':', "www." from its '.', an e-mail
// address from its '@'. Two kinds can start at the same position only when
// an e-mail address starts with "www.", and the pattern tries www first.
func urlSpans(s string, abbrev []span, out []span) []span {
	u := urlScanner{s: s, masks: abbrev}
	scheme, www, email := span{-1, -1}, span{-1, -1}, span{-1, -1}
	for pos := 0; pos < len(s); {
		// Each cached candidate is the leftmost of its kind from any
		// position up to its start.
		if scheme.start < pos {
			scheme = u.nextScheme(pos)
		}
		if www.start < pos {
			www = u.nextWWW(pos)
		}
		if email.start < pos {
			email = u.nextEmail(pos)
		}
		m := scheme
		if www.start < m.start {
			m = www
		}
		if email.start < m.start {
			m = email
		}
		if m.start == none {
			break
		}
		out = append(out, m)
		pos = m.end
	}
	return out
}

// urlScanner finds the candidates of urlSpans.
type urlScanner struct {
	s     string
	masks []span // abbreviations
}

// nextScheme returns the leftmost match at or after from that starts with
// one of the schemes, or a span starting at none.
func (u *urlScanner) nextScheme(from int) span {
	s := u.s
	for c := from; c < len(s); c++ {
		k := strings.IndexByte(s[c:], ':')
		if k < 0 {
			break
		}
		c += k
		if c == 0 || !schemeEnd[s[c-1]] {
			continue
		}
		for _, p := range schemes {
			start := c - strings.IndexByte(p, ':')
			if start < from || !hasPrefixFold(s, start, p) {
				continue
			}
			if inMaskAny(u.masks, start) {
				break
			}
			if p == "mailto:" {
				if end, _ := emailEnd(s, start+len(p), u.masks); end >= 0 {
					return span{start, end}
				}
			} else if end := nonSpaceEnd(s, start+len(p)); end > start+len(p) {
				return span{start, end}
			}
			break // at most one scheme ends at this ':'
		}
	}
	return span{none, none}
}

// nextWWW returns the leftmost match of www\.\S+ at or after from, or a span
// starting at none.
func (u *urlScanner) nextWWW(from int) span {
	s := u.s
	for d := from + len("www"); d < len(s); d++ {
		k := strings.IndexByte(s[d:], '.')
		if k < 0 {
			break
		}
		d += k
		start := d - len("www")
		if s[d-1]|0x20 != 'w' || !hasPrefixFold(s, start, "www.") || inMaskAny(u.masks, start) {
			continue
		}
		if end := nonSpaceEnd(s, d+1); end > d+1 {
			return span{start, end}
		}
	}
	return span{none, none}
}

// nextEmail returns the leftmost e-mail address (without "mailto:") at or
// after from, or a span starting at none. All the starts in a run of
// local-part bytes before a '@' succeed or fail together, so the leftmost
// is the start of the run (or from).
func (u *urlScanner) nextEmail(from int) span {
	s := u.s
	for at := from + 1; at < len(s); at++ {
		k := strings.IndexByte(s[at:], '@')
		if k < 0 {
			break
		}
		at += k
		start := at
		for start > from && isURLLocal(s[start-1]) && !inMaskAny(u.masks, start-1) {
			start--
		}
		if start == at {
			continue
		}
		if end, _ := emailEnd(s, start, u.masks); end >= 0 {
			return span{start, end}
		}
	}
	return span{none, none}
}

// nonSpaceEnd returns the end of the run of non-white-space code points
// (JavaScript's \S+) from i. Abbreviation masks hold no white space.
func nonSpaceEnd(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if isSpaceClass(byteClasses[c]) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isJSSpace(r) {
			return i
		}
		i += n
	}
	return i
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

// numberSpans appends to out the matches of
// \b\d{1,3}(?:,\d{3})*(?:\.\d+)?\b outside the masks (which are non-word
// characters for \b) that can mask a '.'.
//
// A number only changes the sentence ends by masking its '.', as digits
// and ',' are neither delimiters, nor closers, nor spaces. A match lies
// within a run of [0-9,.] and depends only on that run, the bytes around
// it and the masks, so only the runs with a digit, '.', digit are scanned.
func numberSpans(s string, masks []span, out []span) []span {
	done := 0 // the runs before done are scanned
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], '.')
		if k < 0 {
			return out
		}
		if d := i + k; d >= done && d > 0 && d+1 < len(s) && isDigit(s[d-1]) && isDigit(s[d+1]) {
			start, end := d, d
			for start > 0 && isNumberByte(s[start-1]) {
				start--
			}
			for end < len(s) && isNumberByte(s[end]) {
				end++
			}
			out = numberSpansIn(s, start, end, masks, out)
			done = end
		}
		i += k
	}
}

func isNumberByte(c byte) bool { return isDigit(c) || c == ',' || c == '.' }

// numberSpansIn appends to out the number matches that start in s[from:to].
func numberSpansIn(s string, from, to int, masks []span, out []span) []span {
	// wordAt reports whether position i holds a word character.
	wordAt := func(i int) bool {
		return i >= 0 && i < len(s) && isWordByte(s[i]) && !inMaskAny(masks, i)
	}
	for i := from; i < to; i++ {
		if !isDigit(s[i]) || inMaskAny(masks, i) || wordAt(i-1) {
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
		for p := run; p+3 < len(s) && s[p] == ',' && isDigit(s[p+1]) && !inMaskAny(masks, p+1) && isDigit(s[p+2]) && isDigit(s[p+3]); p += 4 {
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

// delimWidth returns the width of the sentence delimiter [.?!…] at s[i],
// or 0.
func delimWidth(s string, i int) int {
	switch s[i] {
	case '.', '?', '!':
		return 1
	case 0xe2: // '…' is E2 80 A6
		if i+2 < len(s) && s[i+1] == 0x80 && s[i+2] == 0xa6 {
			return 3
		}
	}
	return 0
}

// closerWidth returns the width of the closer ["'”’)}\]] at s[i], or 0.
func closerWidth(s string, i int) int {
	switch s[i] {
	case '"', '\'', ')', '}', ']':
		return 1
	case 0xe2: // '”' is E2 80 9D, '’' E2 80 99
		if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0x9d || s[i+2] == 0x99) {
			return 3
		}
	}
	return 0
}

// delimiterEnds appends to ends the ends of the matches of
// ([.?!… ]*)([.?!…])(["'”’)}\]]?) outside masks, but not len(s). A match
// ends at the last delimiter of a run of [.?!… ] (plus a closer right after
// it), so only the runs that hold a delimiter matter: each is scanned from
// its first unmasked delimiter on.
func delimiterEnds(s string, masks []span, ends []int) []int {
	mc := maskCursor{masks: masks}
	next := newByteFinder(s, ".?!\xe2") // '…' starts with E2
	for i := 0; i < len(s); {
		if i = next.index(i); i == len(s) {
			break
		}
		w := delimWidth(s, i)
		if w == 0 {
			i++
			continue
		}
		if e := mc.end(i); e >= 0 {
			i = e
			continue
		}
		end := i + w
		j := end // the end of the run
		for j < len(s) && mc.end(j) < 0 {
			if s[j] == ' ' {
				j++
			} else if w = delimWidth(s, j); w > 0 {
				j += w
				end = j
			} else {
				break
			}
		}
		if end == j && end < len(s) && mc.end(end) < 0 {
			end += closerWidth(s, end)
		}
		if end < len(s) {
			ends = append(ends, end)
		}
		i = max(end, j) // the rest of the run is spaces
	}
	return ends
}
