package reader

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestFileErrorMessages pins each failure's message: Error's remedy, and
// Problem and Fix, which callers without a source folder print instead.
func TestFileErrorMessages(t *testing.T) {
	tooLong := &fs.PathError{Op: "stat", Path: "docs/" + strings.Repeat("n", 8) + ".md", Err: syscall.ENAMETOOLONG}
	tests := []struct {
		name string
		err  *FileError
	}{
		{"binary", &FileError{Path: "a.png", Err: ErrBinary, Offset: 8}},
		{"invalid UTF-8", &FileError{Path: "l.txt", Err: ErrInvalidUTF8, Offset: 3}},
		{"UTF-16", &FileError{Path: "w.txt", Err: ErrUTF16, Detail: "little-endian byte-order mark FF FE"}},
		{"UTF-32", &FileError{Path: "w.txt", Err: ErrUTF32, Detail: "big-endian byte-order mark 00 00 FE FF"}},
		{"empty", &FileError{Path: "e.md", Err: ErrEmpty}},
		{"white space", &FileError{Path: "e.md", Err: ErrEmpty, Detail: "only white space, 3 bytes"}},
		{"named pipe", &FileError{Path: "p.md", Err: ErrNotRegular, Detail: "a named pipe"}},
		{"directory", &FileError{Path: "d.md", Err: ErrNotRegular, Detail: "a directory"}},
		{"permission", &FileError{Path: "x.md", Err: ErrUnreadable, Cause: &fs.PathError{Op: "open", Path: "x.md", Err: fs.ErrPermission}}},
		{"path too long", &FileError{Path: "docs/nnnnnnnn.md", Err: ErrUnreadable, Cause: tooLong}},
		{"vanished", &FileError{Path: "v.md", Err: ErrVanished, Detail: "removed before it could be read", Cause: fs.ErrNotExist}},
		{"outside root", &FileError{Path: "l.md", Err: ErrOutsideRoot, Detail: "target /etc/passwd"}},
		{"loop", &FileError{Path: "l", Err: ErrSymlinkLoop, Detail: "leads back to the root"}},
		{"broken link", &FileError{Path: "l.md", Err: ErrBrokenSymlink}},
	}
	var b strings.Builder
	for _, tt := range tests {
		fix := tt.err.Fix()
		if fix == "" {
			fix = "(none)"
		}
		fmt.Fprintf(&b, "%s\n  Error:   %s\n  Problem: %s\n  Fix:     %s\n", tt.name, tt.err.Error(), tt.err.Problem(), fix)
		if strings.Contains(tt.err.Problem()+tt.err.Fix(), "source.") && !errors.Is(tt.err, ErrOutsideRoot) {
			t.Errorf("%s: Problem or Fix names a setting: %q, %q", tt.name, tt.err.Problem(), tt.err.Fix())
		}
	}
	checkGolden(t, "errors.golden", b.String())
}

func TestNotRegularIsUnreadable(t *testing.T) {
	if !errors.Is(ErrNotRegular, ErrUnreadable) || errors.Is(ErrUnreadable, ErrNotRegular) {
		t.Error("ErrNotRegular must be a kind of ErrUnreadable, not the reverse")
	}
	fi, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckRegular("d", fi); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("CheckRegular(dir) = %v", err)
	}
}

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"guides/a.md", "guides/a.md"},
		{"café/naïve ✓.md", "café/naïve ✓.md"},
		{"with space.md", "with space.md"},
		{"new\nline.md", `"new\nline.md"`},
		{"esc\x1b[31mred.md", `"esc\x1b[31mred.md"`},
		{"tab\t.md", `"tab\t.md"`},
		{"caf\xe9.md", `"caf\xe9.md"`},
		{"del\x7f.md", `"del\x7f.md"`},
		{"c1\u009b31m.md", `"c1\u009b31m.md"`},
		{"\u202eevil.md", `"\u202eevil.md"`},         // right-to-left override: shows as "dm.live"
		{"a\u2066b\u2069.md", `"a\u2066b\u2069.md"`}, // isolates
		{"\u200fmark.md", `"\u200fmark.md"`},
		{"שלום.md", "שלום.md"}, // right-to-left letters are text
	} {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
