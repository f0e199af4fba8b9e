package reader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func fileAt(t *testing.T, name string, body []byte) File {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return newFile(name, p, fi)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// utf16Bytes encodes the ASCII text s as UTF-16 without a byte-order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	for _, c := range []byte(s) {
		if bigEndian {
			b = append(b, 0, c)
		} else {
			b = append(b, c, 0)
		}
	}
	return b
}

func TestReadAll(t *testing.T) {
	big := bytes.Repeat([]byte("héllo wörld ✓ 😀\n"), 10000)
	tests := []struct {
		name     string
		body     []byte
		wantText string
		wantErr  error
		offset   int64
	}{
		{"ascii", []byte("hello\n"), "hello\n", nil, 0},
		{"multibyte", []byte("grüße 世界 😀"), "grüße 世界 😀", nil, 0},
		{"bom stripped", []byte("\xEF\xBB\xBFtitle\n"), "title\n", nil, 0},
		{"bom only is empty", []byte("\xEF\xBB\xBF"), "", ErrEmpty, 0},
		{"empty", nil, "", ErrEmpty, 0},
		{"whitespace is empty", []byte("  \n"), "", ErrEmpty, 0},
		{"unicode whitespace is empty", []byte("\t\v\f\r\n\u00a0\u2003\u3000\u2028\ufeff"), "", ErrEmpty, 0},
		{"bom then whitespace is empty", []byte("\xEF\xBB\xBF \r\n"), "", ErrEmpty, 0},
		{"long whitespace is empty", bytes.Repeat([]byte(" \n\t"), bufSize), "", ErrEmpty, 0},
		{"text after long whitespace", append(bytes.Repeat([]byte("\n"), 3*bufSize), 'x'), strings.Repeat("\n", 3*bufSize) + "x", nil, 0},
		{"next line is text", []byte("\u0085"), "\u0085", nil, 0}, // not white space to the splitter
		{"zero width space is text", []byte(" \u200b "), " \u200b ", nil, 0},
		{"utf-16le", []byte("\xFF\xFEh\x00i\x00"), "", ErrUTF16, 0},
		{"utf-16be", []byte("\xFE\xFF\x00h\x00i"), "", ErrUTF16, 0},
		{"utf-16 mark only", []byte("\xFF\xFE"), "", ErrUTF16, 0},
		{"utf-16le without a mark", utf16Bytes("Hello, world.\r\n", false), "", ErrUTF16, 0},
		{"utf-16be without a mark", utf16Bytes("# Title\n\nText.\n", true), "", ErrUTF16, 0},
		{"utf-16 without a mark, too short to tell", utf16Bytes("Hi", false), "", ErrBinary, 1},
		{"nul every other byte, not text", bytes.Repeat([]byte{0x01, 0x00}, 20), "", ErrBinary, 1},
		{"utf-32le", []byte("\xFF\xFE\x00\x00h\x00\x00\x00"), "", ErrUTF32, 0},
		{"utf-32be", []byte("\x00\x00\xFE\xFF\x00\x00\x00h"), "", ErrUTF32, 0},
		{"invalid then whitespace", []byte("\xff  "), "", ErrInvalidUTF8, 0},
		{"large", big, string(big), nil, 0},
		{"nul at start", []byte("\x00abc"), "", ErrBinary, 0},
		{"png header", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "", ErrBinary, 8},
		{"nul late", append(bytes.Repeat([]byte("a"), 100000), 0, 'b'), "", ErrBinary, 100000},
		{"invalid utf8", []byte("abc\xffdef"), "", ErrInvalidUTF8, 3},
		{"latin1", []byte("caf\xe9 au lait"), "", ErrInvalidUTF8, 3},
		{"truncated at end", []byte("ok \xe2\x82"), "", ErrInvalidUTF8, 3},
		{"invalid late", append(bytes.Repeat([]byte("é"), 50000), 0xC0, 0x80), "", ErrInvalidUTF8, 100000},
		{"surrogate", []byte("a\xed\xa0\x80b"), "", ErrInvalidUTF8, 1},
		{"bom then invalid", []byte("\xEF\xBB\xBFab\xfe"), "", ErrInvalidUTF8, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fileAt(t, "doc.md", tt.body)
			text, hash, err := ReadAll(f)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ReadAll: %v", err)
				}
				if text != tt.wantText {
					t.Errorf("text = %.40q, want %.40q", text, tt.wantText)
				}
				if hash != sum(tt.body) {
					t.Errorf("hash = %s, want sha256 of raw bytes %s", hash, sum(tt.body))
				}
				return
			}
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadAll error = %v, want *FileError wrapping %v", err, tt.wantErr)
			}
			if fe.Path != "doc.md" || !strings.Contains(err.Error(), "doc.md") {
				t.Errorf("error %q does not name the file", err)
			}
			if fe.Offset != tt.offset {
				t.Errorf("Offset = %d, want %d", fe.Offset, tt.offset)
			}
		})
	}
}

// TestEmptyFileMessage checks that an empty file and a file of white space
// are the same failure, with the same remedy.
func TestEmptyFileMessage(t *testing.T) {
	const hint = "; write text into it, or delete or exclude it (source.exclude); its earlier chunks stay in the index until then"
	tests := []struct {
		body string
		want string
	}{
		{"", "reader: e.md: empty file: nothing to index" + hint},
		{"\xEF\xBB\xBF", "reader: e.md: empty file: nothing to index" + hint},
		{" \n\n", "reader: e.md: empty file: nothing to index (only white space, 3 bytes)" + hint},
	}
	for _, tt := range tests {
		_, _, err := ReadAll(fileAt(t, "e.md", []byte(tt.body)))
		if !errors.Is(err, ErrEmpty) || err.Error() != tt.want {
			t.Errorf("%q: error = %v, want %s", tt.body, err, tt.want)
		}
	}
}

func TestTextStart(t *testing.T) {
	tests := []struct {
		body string
		want int64
	}{
		{"abc", 0}, {"\xEF\xBB\xBFabc", 3}, {"abc\xEF\xBB\xBF", 0},
	}
	for _, tt := range tests {
		c, err := Open(fileAt(t, "t.md", []byte(tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := c.TextStart(); got != tt.want || tt.body[got:] != string(text) {
			t.Errorf("%q: TextStart = %d, want %d (text %q)", tt.body, got, tt.want, text)
		}
	}
}

// TestUTF8AcrossReadBoundaries forces one-byte reads from the file after the
// first block, so every multi-byte character is split across reads.
func TestUTF8AcrossReadBoundaries(t *testing.T) {
	prefix := bytes.Repeat([]byte("x"), sniffLen-1) // first block ends mid-character
	tests := []struct {
		name    string
		tail    []byte
		wantErr error
		offset  int64
	}{
		{"valid 2-byte", []byte("é and more"), nil, 0},
		{"valid 3-byte", []byte("€ and more"), nil, 0},
		{"valid 4-byte", []byte("😀 and more"), nil, 0},
		{"bad continuation", []byte("\xe2\x82x"), ErrInvalidUTF8, sniffLen - 1},
		{"overlong", []byte("\xc0\xafok"), ErrInvalidUTF8, sniffLen - 1},
		{"truncated at eof", []byte("\xf0\x9f\x98"), ErrInvalidUTF8, sniffLen - 1},
		{"stray continuation", []byte("ab\x80"), ErrInvalidUTF8, sniffLen + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := append(append([]byte(nil), prefix...), tt.tail...)
			c, err := Open(fileAt(t, "u.txt", body))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.src = iotest.OneByteReader(c.f)
			var out bytes.Buffer
			buf := make([]byte, 3) // small p: also splits returned text
			for {
				n, err := c.Read(buf)
				out.Write(buf[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					if tt.wantErr == nil || !errors.Is(err, tt.wantErr) {
						t.Fatalf("Read error %v, want %v", err, tt.wantErr)
					}
					var fe *FileError
					if errors.As(err, &fe); fe.Offset != tt.offset {
						t.Errorf("Offset = %d, want %d", fe.Offset, tt.offset)
					}
					if int64(out.Len()) > tt.offset {
						t.Errorf("returned %d bytes, beyond the bad byte at %d", out.Len(), tt.offset)
					}
					if _, again := c.Read(buf); again != err {
						t.Errorf("error not sticky: %v", again)
					}
					return
				}
			}
			if tt.wantErr != nil {
				t.Fatalf("no error, want %v", tt.wantErr)
			}
			if !bytes.Equal(out.Bytes(), body) {
				t.Errorf("text differs from file")
			}
			if c.Sum() != sum(body) || c.BytesRead() != int64(len(body)) {
				t.Errorf("Sum/BytesRead = %s/%d, want %s/%d", c.Sum(), c.BytesRead(), sum(body), len(body))
			}
		})
	}
}

func TestIncompleteTail(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 0}, {"a\xc3", 1}, {"a\xe2\x82", 2}, {"\xf0\x9f\x98", 3},
		{"a😀", 0}, {"a\xff", 0}, {"\x80\x80\x80", 0}, {"é", 0},
	}
	for _, tt := range tests {
		if got := incompleteTail([]byte(tt.in)); got != tt.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestLargeFileStreamsWithBoundedMemory(t *testing.T) {
	const size = 16 << 20
	line := []byte("The quick brown fox jumps over the lazy dog — ünïcödé 😀.\n")
	body := bytes.Repeat(line, size/len(line)+1)
	f := fileAt(t, "big.txt", body)
	c, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := sha256.New()
	buf := make([]byte, 4096)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := io.CopyBuffer(h, struct{ io.Reader }{c}, buf)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(body)) || c.BytesRead() != int64(len(body)) {
		t.Fatalf("read %d bytes (BytesRead %d), want %d", n, c.BytesRead(), len(body))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != c.Sum() || got != sum(body) {
		t.Errorf("hash mismatch")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("streaming %d MiB allocated %d bytes, want under 1 MiB", size>>20, alloc)
	}
}

// TestLargeWhitespaceFileStreams checks that a huge file of white space is
// found empty at its end while streaming, with bounded memory.
func TestLargeWhitespaceFileStreams(t *testing.T) {
	const size = 16 << 20
	f := fileAt(t, "blank.txt", bytes.Repeat([]byte(" \n\u3000\t"), size/6))
	c, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4096)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, buf)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "only white space") {
		t.Fatalf("error = %v, want ErrEmpty for white space", err)
	}
	if c.BytesRead() != f.Size {
		t.Errorf("BytesRead = %d, want the whole file, %d", c.BytesRead(), f.Size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("streaming %d MiB allocated %d bytes, want under 1 MiB", size>>20, alloc)
	}
}

func TestOpenFailures(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("a file where a folder was"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    File
		wantErr error
		mention string
	}{
		{"vanished before open", File{ID: "gone.md", Path: filepath.Join(dir, "gone.md")}, ErrVanished, "gone.md"},
		{"folder replaced by a file", File{ID: "f/x.md", Path: filepath.Join(dir, "file", "x.md")}, ErrVanished, "f/x.md"},
		{"directory named like a file", File{ID: "dir.md", Path: dir}, ErrNotRegular, "directory"},
		{"directory is unreadable too", File{ID: "dir.md", Path: dir}, ErrUnreadable, "not a regular file"},
		{"path too long", File{ID: "long.md", Path: filepath.Join(dir, strings.Repeat("n", 300)+".md")}, ErrUnreadable, "path too long"},
	}
	// A file Walk listed, removed before it is read and a folder made in
	// its place: gone, not a directory to exclude (the next walk lists
	// the folder's files).
	replaced := fileAt(t, "was-a-file.md", []byte("text"))
	if err := os.Remove(replaced.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(replaced.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name    string
		file    File
		wantErr error
		mention string
	}{"file replaced by a folder since it was listed", replaced, ErrVanished, "was-a-file.md: file vanished (replaced by a folder since it was listed); it will be picked up by the next run"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadAll(tt.file)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

// TestReadErrorIsUnreadable injects an I/O error after the first block.
func TestReadErrorIsUnreadable(t *testing.T) {
	body := bytes.Repeat([]byte("a"), 3*bufSize)
	c, err := Open(fileAt(t, "io.md", body))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.src = iotest.TimeoutReader(c.f) // second read fails
	_, err = io.Copy(io.Discard, c)
	if !errors.Is(err, ErrUnreadable) || !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("error = %v, want ErrUnreadable wrapping the I/O error", err)
	}
}

func TestVanishedMidRead(t *testing.T) {
	tests := []struct {
		name   string
		fault  func(path string) error
		detail string // in the error
	}{
		{"removed", os.Remove, "removed while being read"},
		// A file that shrank is there still: the message says so rather
		// than that it vanished (ErrShrank is a kind of ErrVanished).
		{"truncated", func(p string) error { return os.Truncate(p, bufSize) }, fmt.Sprintf("v.md: file shrank while being read (from %d to %d bytes); it will be picked up by the next run", 8*bufSize, bufSize)},
		// Cut shorter than what was read already: the error names the
		// new size, not the bytes read.
		{"truncated before the read", func(p string) error { return os.Truncate(p, 100) }, fmt.Sprintf("file shrank while being read (from %d to 100 bytes)", 8*bufSize)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("abcdefgh"), bufSize)
			f := fileAt(t, "v.md", body)
			c, err := Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Read(make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			if err := tt.fault(f.Path); err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, c)
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, ErrVanished) || !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("error = %v, want ErrVanished saying %q", err, tt.detail)
			}
		})
	}
}

func TestCloseTwice(t *testing.T) {
	c, err := Open(fileAt(t, "c.md", []byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrUnreadable) {
		t.Errorf("Read after Close = %v, want ErrUnreadable", err)
	}
}

func TestMIMEType(t *testing.T) {
	for name, want := range map[string]string{
		"a.md": "text/markdown", "A.MARKDOWN": "text/markdown", "x.txt": "text/plain",
		"x.text": "text/plain", "i.rst": "text/x-rst", "noext": "text/plain", "d.json": "application/json",
	} {
		if got := MIMEType(name); got != want {
			t.Errorf("MIMEType(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestMarklessUTF16Message: UTF-16 without a byte-order mark is named as
// such, with its byte order, and gets the remedy of UTF-16 with one.
func TestMarklessUTF16Message(t *testing.T) {
	for _, tt := range []struct {
		big  bool
		want string
	}{
		{false, "doc.md: UTF-16 text, not UTF-8 (no byte-order mark; little-endian, by its NUL bytes); re-save it as UTF-8 or exclude it with source.exclude"},
		{true, "doc.md: UTF-16 text, not UTF-8 (no byte-order mark; big-endian, by its NUL bytes); re-save it as UTF-8 or exclude it with source.exclude"},
	} {
		_, _, err := ReadAll(fileAt(t, "doc.md", utf16Bytes("Notes about the release.\n", tt.big)))
		if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("error %v, want it to end %q", err, tt.want)
		}
	}
}
