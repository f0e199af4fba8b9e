package splitter

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// Reference implementations of the sentence scanners and of cutPhrases:
// they try every position in turn, as a regular expression engine does,
// which is slow but plainly right. TestScannersMatchReference compares the
// fast scanners, which jump from candidate to candidate, with them.

// refSentenceEnds is sentenceEnds by the reference scanners.
func refSentenceEnds(s string) []int {
	masks := refAbbreviationSpans(s)
	masks = mergeSpans(masks, refURLSpans(s, masks), nil)
	masks = mergeSpans(masks, refNumberSpans(s, masks), nil)
	return refDelimiterEnds(s, masks)
}

// refMasked is a text with sorted, disjoint masked ranges, read forward.
type refMasked struct {
	s     string
	masks []span
	next  int // the first mask that ends after the scan position
}

// at describes position i: if i is masked, plain is false and n is the
// rest of the mask's length; otherwise r is the rune at i and n its width.
func (m *refMasked) at(i int) (r rune, n int, plain bool) {
	for m.next < len(m.masks) && m.masks[m.next].end <= i {
		m.next++
	}
	if m.next < len(m.masks) && m.masks[m.next].start <= i {
		return 0, m.masks[m.next].end - i, false
	}
	r, n = utf8.DecodeRuneInString(m.s[i:])
	return r, n, true
}

func refAbbreviationSpans(s string) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		for _, a := range abbreviations {
			if hasPrefixFold(s, i, a) {
				out = append(out, span{i, i + len(a)})
				i += len(a) - 1
				break
			}
		}
	}
	return out
}

func refURLSpans(s string, abbrev []span) []span {
	var out []span
	m := &refMasked{s: s, masks: abbrev}
	nonSpaceEnd := func(i int) int {
		for i < len(s) {
			r, n, plain := m.at(i)
			if plain && isJSSpace(r) {
				break
			}
			i += n
		}
		return i
	}
	for i := 0; i < len(s); {
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
		if end < 0 {
			end, _ = emailEnd(s, i, abbrev)
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

// refNumberSpans scans every position of s: numberSpans must find the same
// matches while scanning only the runs that can hold one.
func refNumberSpans(s string, masks []span) []span {
	return numberSpansIn(s, 0, len(s), masks, nil)
}

func refDelimiterEnds(s string, masks []span) []int {
	isRun := func(r rune) bool { return strings.ContainsRune(".?!… ", r) }
	isDelim := func(r rune) bool { return strings.ContainsRune(".?!…", r) }
	var ends []int
	m := &refMasked{s: s, masks: masks}
	for i := 0; i < len(s); {
		r, n, plain := m.at(i)
		if !plain || !isRun(r) {
			i += n
			continue
		}
		j, last, lastW := i, -1, 0 // the run of [.?!… ] from i and its last delimiter
		for j < len(s) {
			r2, n2, plain2 := m.at(j)
			if !plain2 || !isRun(r2) {
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
			if r3, n3, plain3 := m.at(end); plain3 && strings.ContainsRune("\"'”’)}]", r3) {
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

func refCutPhrases(text string) []int {
	isEnd := func(r rune) bool { return strings.ContainsRune(",.;。？！", r) }
	var cuts []int
	first := true
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isEnd(r) {
			i += n
			continue
		}
		if !first {
			cuts = append(cuts, i)
		}
		first = false
		for i < len(text) {
			r, n = utf8.DecodeRuneInString(text[i:])
			i += n
			if isEnd(r) {
				break
			}
		}
	}
	return cuts
}

// TestScannersMatchReference compares sentenceEnds (and each of its
// stages) and cutPhrases with the reference scanners on random mixes of
// abbreviations, URL prefixes, e-mail addresses, numbers, delimiters,
// white space, multi-byte and invalid UTF-8.
func TestScannersMatchReference(t *testing.T) {
	fragments := []string{"a", "Z", "w", "ww", "www", "0", "12", "1234", " ", "  ", "\n", "\t", ".", ",", ";",
		"..", "@", "@@", ":", "//", "://", "http", "https", "ftp", "file", "mailto", "http://", "HTTPS://",
		"www.", "WwW.", "ftp://", "file://", "mailto:", "MAILTO:x@y.co", "x@y.org", "a.b@c-d.ef", "-", "_",
		"%", "+", "Dr.", "dr.", "A.S.A.P.", "a.m.", "i.e.", "etc.", "Art.", "Sras.", "Profas.", "Ab.",
		",000", ",12", "3.14", "?", "!", "…", "\"", "'", "”", "’", ")", "}", "]", "{", "é", "日", "🙂",
		"。", "？", "！", "\u00a0", "\u2028", "\u3000", "\ufeff", "\xff", "\xe2", "\xe2\x80", "\xef\xbc", "com"}
	r := rand.New(rand.NewPCG(11, 13))
	iterations := 20000
	if testing.Short() {
		iterations = 2000
	}
	for range iterations {
		var b []byte
		for range r.IntN(30) {
			if r.IntN(10) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, fragments[r.IntN(len(fragments))]...)
			}
		}
		checkScanners(t, string(b))
	}
}

// checkScanners compares each fast sentence scanner, and cutPhrases, with
// its reference on s.
func checkScanners(t *testing.T, s string) {
	t.Helper()
	abbrev := abbreviationSpans(s, nil)
	check := func(stage string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s of %q = %v, reference %v", stage, s, got, want)
		}
	}
	check("abbreviationSpans", abbrev, refAbbreviationSpans(s))
	urls := urlSpans(s, abbrev, nil)
	check("urlSpans", urls, refURLSpans(s, abbrev))
	masks := mergeSpans(abbrev, urls, nil)
	numbers := numberSpans(s, masks, nil)
	check("numberSpans", withDot(s, numbers), withDot(s, refNumberSpans(s, masks)))
	check("delimiterEnds", delimiterEnds(s, mergeSpans(masks, numbers, nil), nil),
		refDelimiterEnds(s, mergeSpans(masks, numbers, nil)))
	check("sentenceEnds", sentenceEnds(s, nil), refSentenceEnds(s))
	check("cutPhrases", collectCuts(cutPhrases, s), refCutPhrases(s))
}

// withDot returns the spans of s that hold a '.' (numberSpans leaves out
// numbers without one, as they change no sentence end).
func withDot(s string, spans []span) []span {
	var out []span
	for _, sp := range spans {
		if strings.Contains(s[sp.start:sp.end], ".") {
			out = append(out, sp)
		}
	}
	return out
}
