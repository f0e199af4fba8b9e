package reader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

const (
	// bufSize bounds the bytes a Content holds, however large the file.
	bufSize = 64 << 10
	// sniffLen is how much of the start of a file is checked for a NUL byte
	// before anything is returned, so a binary file that also holds invalid
	// UTF-8 near its start is reported as binary.
	sniffLen = 8 << 10
)

// bom is the UTF-8 byte-order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// wideMarks are the byte-order marks of UTF-32 and UTF-16, in the order
// they are tested: FF FE 00 00 starts UTF-32, not UTF-16 text beginning
// with a NUL character.
var wideMarks = []struct {
	mark   []byte
	err    error
	endian string
}{
	{[]byte{0xFF, 0xFE, 0x00, 0x00}, ErrUTF32, "little-endian"},
	{[]byte{0x00, 0x00, 0xFE, 0xFF}, ErrUTF32, "big-endian"},
	{[]byte{0xFF, 0xFE}, ErrUTF16, "little-endian"},
	{[]byte{0xFE, 0xFF}, ErrUTF16, "big-endian"},
}

// openFile opens the file for Open; tests replace it to swap the file
// between Open's stat and its open.
var openFile = os.OpenFile

// Content streams one file's text while hashing it and checking that it is
// text. It holds at most a fixed 64 KiB buffer, however large the file.
//
// The text returned by Read is valid UTF-8 without NUL bytes, with a leading
// UTF-8 byte-order mark removed; the hash covers the raw bytes, mark
// included. Read never splits a multi-byte character across calls when p has
// room for it. A Content is not safe for concurrent use.
type Content struct {
	f    *os.File
	src  io.Reader // f, or a fault-injecting wrapper in tests
	id   string
	path string
	size int64 // at open

	h     hash.Hash
	raw   int64 // raw bytes read from the file
	skip  int64 // bytes of a UTF-8 byte-order mark before the text
	buf   []byte
	r, w  int // buf[r:w] is validated text not yet returned
	carry int // bytes of an incomplete character kept at buf[w:w+carry]
	first bool
	text  bool // a character other than white space has been seen
	eof   bool
	err   error // sticky
}

// Open opens f for streaming. A file that no longer exists gives a
// *FileError wrapping ErrVanished, and so does a folder at the path of f
// as Walk or Stat described it (a file removed since, with a folder made in
// its place); one that is not a regular file (a named pipe, a socket, a
// device, a directory where f has no ModTime) gives ErrNotRegular, and one
// that cannot be opened gives ErrUnreadable.
//
// Open never blocks on a named pipe: it refuses anything but a regular file
// before opening it, and opens without blocking and checks the opened file
// again, in case the path was replaced in between.
func Open(f File) (*Content, error) {
	id := f.ID
	if id == "" {
		id = f.Path
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		return nil, statFault(id, err)
	}
	if fi.IsDir() && !f.ModTime.IsZero() {
		// f was a file when Walk or Stat described it: removed since, and
		// a folder made in its place, whose files the next walk lists.
		return nil, &FileError{Path: id, Err: ErrVanished, Detail: "replaced by a folder since it was listed"}
	}
	if err := CheckRegular(id, fi); err != nil {
		return nil, err
	}
	fh, err := openFile(f.Path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, statFault(id, err)
	}
	if fi, err = checkOpened(id, fh); err != nil {
		fh.Close()
		return nil, err
	}
	return &Content{f: fh, src: fh, id: id, path: f.Path, size: fi.Size(), h: sha256.New(), buf: make([]byte, bufSize), first: true}, nil
}

// checkOpened checks that the file Open opened without blocking is a
// regular file, and makes its reads blocking again.
func checkOpened(id string, fh *os.File) (fs.FileInfo, error) {
	fi, err := fh.Stat()
	if err != nil {
		return nil, &FileError{Path: id, Err: ErrUnreadable, Cause: err}
	}
	if err := CheckRegular(id, fi); err != nil {
		return nil, err
	}
	if err := setBlocking(fh); err != nil {
		return nil, &FileError{Path: id, Err: ErrUnreadable, Cause: err}
	}
	return fi, nil
}

// Read reads text into p. It returns a *FileError wrapping ErrBinary,
// ErrInvalidUTF8, ErrUTF16, ErrUTF32, ErrEmpty, ErrVanished or
// ErrUnreadable as soon as the bytes read so far prove the file unusable,
// before returning any byte of the offending chunk; every later call
// returns the same error. A file that holds only white space gives ErrEmpty
// in place of io.EOF, which only its end can prove: the white space before
// its last block may have been returned by then (it gives no chunk).
func (c *Content) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, c.err
	}
	for c.r == c.w {
		if c.err != nil {
			return 0, c.err
		}
		if c.eof {
			c.err = io.EOF
			return 0, io.EOF
		}
		if err := c.fill(); err != nil {
			c.err = err
			return 0, err
		}
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}

// fill reads the next block of the file into buf and validates it.
func (c *Content) fill() error {
	// Keep the incomplete character left over from the last block.
	k := copy(c.buf, c.buf[c.w:c.w+c.carry])
	atLeast := 1
	if c.first {
		atLeast = sniffLen
	}
	n, err := io.ReadAtLeast(c.src, c.buf[k:], atLeast)
	c.h.Write(c.buf[k : k+n])
	c.raw += int64(n)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		c.eof = true
	case err != nil:
		return &FileError{Path: c.id, Err: ErrUnreadable, Cause: err}
	}
	if c.eof {
		if err := c.checkVanished(); err != nil {
			return err
		}
	}
	data := c.buf[:k+n]
	off := c.raw - int64(len(data)) // file offset of data[0]
	start := 0
	if c.first {
		c.first = false
		for _, m := range wideMarks {
			if bytes.HasPrefix(data, m.mark) {
				return &FileError{Path: c.id, Err: m.err, Detail: fmt.Sprintf("%s byte-order mark % X", m.endian, m.mark)}
			}
		}
		if i := bytes.IndexByte(data, 0); i >= 0 {
			if endian, ok := markless16(data); ok {
				return &FileError{Path: c.id, Err: ErrUTF16, Detail: "no byte-order mark; " + endian + ", by its NUL bytes"}
			}
			return &FileError{Path: c.id, Err: ErrBinary, Offset: off + int64(i)}
		}
		if bytes.HasPrefix(data, bom) {
			start = len(bom)
			c.skip = int64(len(bom))
		}
	}
	end := len(data)
	if !c.eof {
		end -= incompleteTail(data[start:])
	}
	if err := c.check(data[start:end], off+int64(start)); err != nil {
		return err
	}
	if !c.text {
		c.text = hasText(data[start:end])
		if !c.text && c.eof {
			return c.empty()
		}
	}
	c.r, c.w, c.carry = start, end, len(data)-end
	return nil
}

// empty reports a file without text: no bytes, or only white space.
func (c *Content) empty() error {
	fe := &FileError{Path: c.id, Err: ErrEmpty}
	if n := c.raw - c.skip; n > 0 {
		fe.Detail = fmt.Sprintf("only white space, %d bytes", n)
	}
	return fe
}

// hasText reports whether the valid UTF-8 text b holds a character other
// than white space. White space is JavaScript's \s, which the splitter trims
// (U+FEFF included, U+0085 not), so a file without text gives no chunk.
func hasText(b []byte) bool {
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if !isSpace(r) {
			return true
		}
		i += n
	}
	return false
}

// isSpace reports whether r is white space in JavaScript's \s (as the
// splitter's isJSSpace).
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// markless16 reports whether data, the start of a file that holds a NUL
// byte, reads as UTF-16 text without a byte-order mark, and in which byte
// order: text in the Latin alphabets has a NUL in every other byte (the
// high byte of each code unit), and printable ASCII or white space in the
// bytes between. It looks at the first 512 bytes, and wants at least 8.
func markless16(data []byte) (endian string, ok bool) {
	n := min(len(data), 512) &^ 1
	if n < 8 {
		return "", false
	}
	// nul[k] and text[k] count the NULs, and the printable or space bytes,
	// at even (k = 0) and odd (k = 1) offsets.
	var nul, text [2]int
	for i, b := range data[:n] {
		switch {
		case b == 0:
			nul[i&1]++
		case b >= 0x20 && b < 0x7f, b == '\t', b == '\n', b == '\r':
			text[i&1]++
		}
	}
	units := n / 2
	mostly := func(count int) bool { return count*10 >= units*9 }
	switch {
	case mostly(nul[1]) && mostly(text[0]):
		return "little-endian", true
	case mostly(nul[0]) && mostly(text[1]):
		return "big-endian", true
	}
	return "", false
}

// check returns a *FileError if text holds a NUL byte or invalid UTF-8; off
// is the file offset of text[0].
func (c *Content) check(text []byte, off int64) error {
	nul := bytes.IndexByte(text, 0)
	bad := -1
	if !utf8.Valid(text) {
		bad = invalidAt(text)
	}
	switch {
	case nul >= 0 && (bad < 0 || nul < bad):
		return &FileError{Path: c.id, Err: ErrBinary, Offset: off + int64(nul)}
	case bad >= 0:
		return &FileError{Path: c.id, Err: ErrInvalidUTF8, Offset: off + int64(bad)}
	}
	return nil
}

// checkVanished reports a file removed or truncated while it was read.
func (c *Content) checkVanished() error {
	if c.raw < c.size {
		// The file ended at c.raw bytes when it was read there; it may
		// have been cut shorter than that.
		now := c.raw
		if fi, err := c.f.Stat(); err == nil && fi.Size() < now {
			now = fi.Size()
		}
		return &FileError{Path: c.id, Err: ErrShrank, Detail: fmt.Sprintf("from %d to %d bytes", c.size, now)}
	}
	if _, err := os.Stat(c.path); errors.Is(err, fs.ErrNotExist) {
		return &FileError{Path: c.id, Err: ErrVanished, Detail: "removed while being read", Cause: err}
	}
	return nil
}

// incompleteTail returns the length of a trailing prefix of a multi-byte
// character that the next block may complete, or 0.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// invalidAt returns the index of the first invalid UTF-8 byte in b, or -1.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// Close closes the file. Calling it twice is harmless.
func (c *Content) Close() error {
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	if c.err == nil {
		c.err = &FileError{Path: c.id, Err: ErrUnreadable, Detail: "read after Close", Cause: os.ErrClosed}
	}
	if err != nil {
		return &FileError{Path: c.id, Err: ErrUnreadable, Cause: err}
	}
	return nil
}

// Sum returns the hex SHA-256 of the raw bytes read so far; after Read has
// returned io.EOF it is the hash of the whole file.
func (c *Content) Sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// Size returns the file's size in bytes when Open opened it. A file that is
// being written may hold more by the time it is read to its end, and some
// (those of /proc, for one) say 0 and hold text.
func (c *Content) Size() int64 { return c.size }

// BytesRead returns the number of raw bytes read from the file so far,
// byte-order mark included.
func (c *Content) BytesRead() int64 { return c.raw }

// TextStart returns the offset in the file of the first byte of the text:
// 3 when the file starts with a UTF-8 byte-order mark, which Read removes,
// and 0 otherwise. An offset into the text plus TextStart is an offset into
// the file. It is known once Read has returned anything.
func (c *Content) TextStart() int64 { return c.skip }

// ReadAll reads the whole file f, for small files: its text (without a
// byte-order mark) and the hex SHA-256 of its raw bytes. Errors are as for
// Open and Content.Read.
func ReadAll(f File) (text string, sha256hex string, err error) {
	c, err := Open(f)
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	var sb strings.Builder
	if f.Size > 0 && f.Size < 1<<30 {
		sb.Grow(int(f.Size))
	}
	if _, err := io.Copy(&sb, c); err != nil {
		return "", "", err
	}
	return sb.String(), c.Sum(), nil
}
