package splitter

// Pre-tokenization: the cl100k_base regular expression, hand-written.

import (
	"unicode"
	"unicode/utf8"
)

// Character classes of the cl100k_base pattern
//
//	's|'S|'t|'T|'re|...|'d|'D | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} |
//	 ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//
// with JavaScript's definition of \s.
const (
	clsOther uint8 = iota
	clsLetter
	clsNumber
	clsSpace
	clsNewline
	clsMulti // not a class: a byte of a multi-byte code point, see classAt
)

// byteClasses holds the class of each ASCII byte, and clsMulti for the
// other bytes.
var byteClasses = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = clsMulti
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = clsLetter
		case c >= '0' && c <= '9':
			t[c] = clsNumber
		case c == '\r' || c == '\n':
			t[c] = clsNewline
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			t[c] = clsSpace
		}
	}
	return t
}()

// isJSSpace reports whether r is in JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// classAt returns the class of the rune at s[i] and its width. (Written
// so that it is inlined, as utf8.DecodeRuneInString.)
func classAt(s string, i int) (c uint8, n int) {
	if c = byteClasses[s[i]]; c != clsMulti {
		n = 1
	} else {
		c, n = runeClassAt(s, i)
	}
	return
}

// runeClassAt is classAt for a non-ASCII rune.
func runeClassAt(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return clsLetter, n
	case unicode.IsNumber(r):
		return clsNumber, n
	case isJSSpace(r):
		return clsSpace, n
	}
	return clsOther, n
}

func isSpaceClass(c uint8) bool { return c == clsSpace || c == clsNewline }

// runEnd returns the end of the run of runes of class want starting at i.
func runEnd(s string, i int, want uint8) int {
	for i < len(s) {
		c := byteClasses[s[i]]
		if c == want {
			i++
			continue
		}
		if c != clsMulti {
			break
		}
		c, n := runeClassAt(s, i)
		if c != want {
			break
		}
		i += n
	}
	return i
}

// nextPiece returns the end of the pre-token that starts at s[i].
func nextPiece(s string, i int) int {
	if s[i] == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
			return i + 2
		case 'r', 'R', 'v', 'V':
			if i+2 < len(s) && (s[i+2] == 'e' || s[i+2] == 'E') {
				return i + 3
			}
		case 'l', 'L':
			if i+2 < len(s) && (s[i+2] == 'l' || s[i+2] == 'L') {
				return i + 3
			}
		}
	}
	c, n := classAt(s, i)
	switch c {
	case clsLetter:
		return runEnd(s, i+n, clsLetter)
	case clsNumber:
		j := i + n
		for k := 1; k < 3 && j < len(s); k++ {
			c2, n2 := classAt(s, j)
			if c2 != clsNumber {
				break
			}
			j += n2
		}
		return j
	case clsNewline:
		// falls through to the whitespace rules below
	default:
		if i+n < len(s) {
			if c2, _ := classAt(s, i+n); c2 == clsLetter {
				return runEnd(s, i+n, clsLetter)
			}
		}
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j := i
	if s[i] == ' ' {
		j++
	}
	if j < len(s) {
		if c2, _ := classAt(s, j); c2 == clsOther {
			k := runEnd(s, j, clsOther)
			return runEnd(s, k, clsNewline)
		}
	}
	// Whitespace: `\s*[\r\n]+`, then `\s+(?!\S)`, then `\s+`.
	end, lastNL, lastStart := i, -1, i
	for end < len(s) {
		c2, n2 := classAt(s, end)
		if !isSpaceClass(c2) {
			break
		}
		if c2 == clsNewline {
			lastNL = end
		}
		lastStart = end
		end += n2
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case end == len(s) || lastStart == i:
		return end
	default:
		return lastStart
	}
}
