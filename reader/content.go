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
	buf   []byte
	r, w  int // buf[r:w] is validated text not yet returned
	carry int // bytes of an incomplete character kept at buf[w:w+carry]
	first bool
	eof   bool
	err   error // sticky
}

// Open opens f for streaming. A file that no longer exists gives a
// *FileError wrapping ErrVanished; one that cannot be opened, is a directory
// or is not a regular file gives ErrUnreadable.
func Open(f File) (*Content, error) {
	id := f.ID
	if id == "" {
		id = f.Path
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FileError{Path: id, Err: ErrVanished, Detail: "removed before it could be read", Cause: err}
		}
		return nil, &FileError{Path: id, Err: ErrUnreadable, Cause: err}
	}
	fi, err := fh.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "is a directory"
		}
		err = &FileError{Path: id, Err: ErrUnreadable, Detail: what}
	} else if err != nil {
		err = &FileError{Path: id, Err: ErrUnreadable, Cause: err}
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return &Content{f: fh, src: fh, id: id, path: f.Path, size: fi.Size(), h: sha256.New(), buf: make([]byte, bufSize), first: true}, nil
}

// Read reads text into p. It returns a *FileError wrapping ErrBinary,
// ErrInvalidUTF8, ErrEmpty, ErrVanished or ErrUnreadable as soon as the
// bytes read so far prove the file unusable, before returning any byte of
// the offending chunk; every later call returns the same error.
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
	min := 1
	if c.first {
		min = sniffLen
	}
	n, err := io.ReadAtLeast(c.src, c.buf[k:], min)
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
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return &FileError{Path: c.id, Err: ErrBinary, Offset: off + int64(i)}
		}
		if bytes.HasPrefix(data, bom) {
			start = len(bom)
		}
		if c.eof && len(data) == start {
			return &FileError{Path: c.id, Err: ErrEmpty}
		}
	}
	end := len(data)
	if !c.eof {
		end -= incompleteTail(data[start:])
	}
	if err := c.check(data[start:end], off+int64(start)); err != nil {
		return err
	}
	c.r, c.w, c.carry = start, end, len(data)-end
	return nil
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
		return &FileError{Path: c.id, Err: ErrVanished, Detail: fmt.Sprintf("shrank from %d to %d bytes while being read", c.size, c.raw)}
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

// BytesRead returns the number of raw bytes read from the file so far,
// byte-order mark included.
func (c *Content) BytesRead() int64 { return c.raw }

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
