package splitter

import "strings"

// Fast scanning for the cutters: the next of a few bytes.

// byteFinder finds the next occurrence in s of any of up to five bytes,
// with one strings.IndexByte per byte, remembering the next occurrence of
// each.
type byteFinder struct {
	s     string
	bytes string
	// at[k] is the first occurrence of bytes[k] at or after the last
	// position asked (len(s) if none), or -1 before the first.
	at [5]int
}

func newByteFinder(s, bytes string) byteFinder {
	f := byteFinder{s: s, bytes: bytes}
	for k := range f.at {
		f.at[k] = -1
	}
	return f
}

// index returns the first position at or after i that holds one of the
// bytes, or len(s). i must not decrease from call to call.
func (f *byteFinder) index(i int) int {
	first := len(f.s)
	for k := 0; k < len(f.bytes); k++ {
		if f.at[k] < i {
			f.at[k] = len(f.s)
			if j := strings.IndexByte(f.s[i:], f.bytes[k]); j >= 0 {
				f.at[k] = i + j
			}
		}
		first = min(first, f.at[k])
	}
	return first
}
