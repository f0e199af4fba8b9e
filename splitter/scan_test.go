package splitter

import (
	"strings"
	"testing"
)

// TestByteFinder checks byteFinder against a byte-by-byte search.
func TestByteFinder(t *testing.T) {
	s := "ab.c?d!!e\xe2\x80\xa6f..g?h"
	f := newByteFinder(s, ".?!\xe2")
	for i := 0; i <= len(s); i++ {
		want := strings.IndexAny(s[i:], ".?!")
		if k := strings.IndexByte(s[i:], 0xe2); k >= 0 && (want < 0 || k < want) {
			want = k
		}
		if want < 0 {
			want = len(s) - i
		}
		if got := f.index(i); got != i+want {
			t.Fatalf("index(%d) = %d, want %d", i, got, i+want)
		}
	}
}
