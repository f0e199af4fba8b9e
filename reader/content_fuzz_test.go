package reader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// sizedReader returns r's bytes in reads of the sizes sizes gives, in
// turn: a size byte b below 128 gives reads of 1+b bytes, one from 128 on
// reads of 1+(b-128)*1024 bytes, so that reads both split characters and
// cross the 64 KiB blocks of a Content.
type sizedReader struct {
	data  []byte
	sizes []byte
	n     int
}

func (r *sizedReader) size() int {
	if len(r.sizes) == 0 {
		return len(r.data) + 1
	}
	b := int(r.sizes[r.n%len(r.sizes)])
	if b < 128 {
		return 1 + b
	}
	return 1 + (b-128)*1024
}

func (r *sizedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.size())], r.data)
	r.n++
	r.data = r.data[k:]
	return k, nil
}

// firstBlock returns how many bytes of a file of n bytes the first block
// of a Content holds when the file is read in reads of sizes: what
// io.ReadAtLeast reads for sniffLen bytes into a buffer of bufSize.
func firstBlock(n int, sizes []byte) int {
	r := &sizedReader{sizes: sizes}
	total := 0
	for total < sniffLen && total < n {
		total += min(r.size(), bufSize-total, n-total)
		r.n++
	}
	return total
}

// FuzzContent reads arbitrary files through Content, the decoder every
// file of the input folder goes through, in reads of arbitrary sizes
// (splitting characters, crossing its 64 KiB blocks: the fuzzed bytes
// come after pad bytes of "a") into buffers of arbitrary sizes, and
// compares with a reference reading of the whole file:
//   - a UTF-32 or UTF-16 byte-order mark gives ErrUTF32 or ErrUTF16;
//   - a NUL byte in the first block gives ErrUTF16 for UTF-16 without a
//     mark (markless16), ErrBinary at the NUL otherwise;
//   - otherwise, after a UTF-8 byte-order mark, the first NUL byte or
//     invalid UTF-8 gives ErrBinary or ErrInvalidUTF8 at its offset in the
//     file, and text of white space only gives ErrEmpty;
//   - otherwise the text read is the file's, without the mark, Sum is the
//     SHA-256 of the file, BytesRead its size and TextStart the mark's;
//   - before an error, the text returned is a prefix of the file's that
//     stops before the offending byte, and the error is a *FileError for
//     the file that every later Read returns again;
//   - a buffer of at least 64 KiB never gets part of a character.
func FuzzContent(f *testing.F) {
	f.Add([]byte("hello, world\n"), uint32(0), []byte{}, uint16(100))
	f.Add([]byte("\xef\xbb\xbfwith a mark"), uint32(0), []byte{0, 1, 2}, uint16(2))
	f.Add([]byte("\xff\xfeH\x00i\x00"), uint32(0), []byte{}, uint16(10))
	f.Add([]byte("\xff\xfe\x00\x00H\x00\x00\x00"), uint32(0), []byte{}, uint16(10))
	f.Add(utf16Bytes("Hello, this is UTF-16", true), uint32(0), []byte{3}, uint16(7))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), uint32(0), []byte{}, uint16(64))
	f.Add([]byte("é€😀 \xe2\x82x"), uint32(sniffLen-1), []byte{0, 200}, uint16(3))
	f.Add([]byte("😀 and more"), uint32(bufSize-2), []byte{130, 0, 5}, uint16(65535))
	f.Add([]byte("ab\x00cd"), uint32(sniffLen+10), []byte{140}, uint16(1000))
	f.Add([]byte(" \t\n\u3000\ufeff "), uint32(0), []byte{1}, uint16(2))
	f.Add([]byte("\xf0\x9f\x98"), uint32(bufSize-1), []byte{}, uint16(65535))
	f.Fuzz(func(t *testing.T, data []byte, pad uint32, sizes []byte, psize uint16) {
		padLen := int(pad % (2*bufSize + 16))
		if len(data) > bufSize || len(sizes) > 64 {
			return
		}
		whole := append(bytes.Repeat([]byte("a"), padLen), data...)
		p := filepath.Join(t.TempDir(), "f.txt")
		if err := os.WriteFile(p, whole, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Open(newFile("f.txt", p, fi))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.src = &sizedReader{data: whole, sizes: sizes}

		var out []byte
		buf := make([]byte, 1+int(psize))
		var readErr error
		for {
			n, err := c.Read(buf)
			if n > 0 && len(buf) >= bufSize && !utf8.Valid(buf[:n]) {
				t.Fatalf("a Read into %d bytes returned part of a character: %q", len(buf), buf[:n])
			}
			out = append(out, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				break
			}
		}

		offset, skip, wantErr := refContent(whole, firstBlock(len(whole), sizes))
		text := whole[skip:]
		if !bytes.HasPrefix(text, out) {
			t.Fatalf("Read returned %d bytes that are not the start of the text (pad %d, data %q)", len(out), padLen, data)
		}
		if wantErr == nil {
			if readErr != nil {
				t.Fatalf("Read: %v; want the text (pad %d, data %q)", readErr, padLen, data)
			}
			if len(out) != len(text) || c.Sum() != sum(whole) || c.BytesRead() != int64(len(whole)) || c.TextStart() != int64(skip) {
				t.Fatalf("read %d bytes, Sum %s, BytesRead %d, TextStart %d; want %d, %s, %d, %d",
					len(out), c.Sum(), c.BytesRead(), c.TextStart(), len(text), sum(whole), len(whole), skip)
			}
			return
		}
		var fe *FileError
		if !errors.As(readErr, &fe) || !errors.Is(readErr, wantErr) || fe.Path != "f.txt" {
			t.Fatalf("Read: %#v; want a *FileError for f.txt wrapping %v (pad %d, data %q, reads %v)", readErr, wantErr, padLen, data, sizes)
		}
		if wantErr == ErrBinary || wantErr == ErrInvalidUTF8 {
			if fe.Offset != int64(offset) {
				t.Fatalf("Read: %v at offset %d, want %d (pad %d, data %q, reads %v)", readErr, fe.Offset, offset, padLen, data, sizes)
			}
			if skip+len(out) > offset {
				t.Fatalf("Read returned text up to offset %d, past the bad byte at %d", skip+len(out), offset)
			}
		}
		if n, again := c.Read(buf); n != 0 || again != readErr {
			t.Fatalf("Read after %v = %d, %v; want the same error", readErr, n, again)
		}
	})
}

// refContent is a reference reading of the file whole whose first block,
// as Content reads it, holds first bytes: the file offset of the offending
// byte for ErrBinary and ErrInvalidUTF8, the length of a UTF-8 byte-order
// mark, and the error Content must give (nil for text).
func refContent(whole []byte, first int) (offset, skip int, err error) {
	for _, m := range wideMarks {
		if bytes.HasPrefix(whole, m.mark) {
			return 0, 0, m.err
		}
	}
	if i := bytes.IndexByte(whole[:first], 0); i >= 0 {
		if _, ok := markless16(whole[:first]); ok {
			return 0, 0, ErrUTF16
		}
		return i, 0, ErrBinary
	}
	if bytes.HasPrefix(whole, bom) {
		skip = len(bom)
	}
	text := whole[skip:]
	nul := bytes.IndexByte(text, 0)
	bad := -1
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n == 1 {
			bad = i
			break
		}
		i += n
	}
	switch {
	case nul >= 0 && (bad < 0 || nul < bad):
		return skip + nul, skip, ErrBinary
	case bad >= 0:
		return skip + bad, skip, ErrInvalidUTF8
	case !hasText(text):
		return 0, skip, ErrEmpty
	}
	return 0, skip, nil
}
