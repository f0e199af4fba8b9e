package splitter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// minWindow is the smallest streaming window, in bytes.
const minWindow = 1 << 20

// windowSize returns the streaming window: large enough for many chunks.
func (s *Splitter) windowSize() int {
	if s.window > 0 {
		return s.window
	}
	return max(minWindow, 64*s.cfg.ChunkSize)
}

// SplitReader splits the text read from r and calls fn with each chunk in
// order; offsets count bytes from the start of the stream. Memory stays
// bounded whatever the stream's length: the text is split in windows of about
// 1 MiB (64 bytes per token of ChunkSize if larger) that end on paragraph
// separators ("\n\n\n", LlamaIndex's first split), and the unfinished chunk
// is carried from one window to the next, so the chunks are those of Split on
// the whole text. Only a window with no paragraph separator in its last
// three quarters ends after its last newline or space (or character)
// instead; chunks within one chunk of such a cut may differ. Every window
// but the last is the same number of bytes, so the windows, and the chunks,
// depend on the text alone, never on how r's reads divide it. Chunk texts are
// copies, so holding a chunk does not pin a window. Memory stays bounded
// whatever the text too, beyond the window (see the package documentation):
// a few MiB for a megabyte of spaces, of one letter or of random letters.
//
// SplitReader stops with ctx.Err() when ctx is done, and returns fn's first
// error as is.
func (s *Splitter) SplitReader(ctx context.Context, r io.Reader, fn func(Chunk) error) error {
	w := s.windowSize()
	m := newMerger(s, s.cfg.ChunkSize, func(c Chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.Text = strings.Clone(c.Text)
		return fn(c)
	})
	// buf holds the text carried over from the previous window (the
	// unfinished chunk, already cut into pieces) followed by unread text.
	buf := make([]byte, 0, 2*w)
	carried, read, eof := 0, 0, false
	for {
		// Read one byte past a window, if the stream has it: a window
		// is then always w bytes unless it is the last, so the windows,
		// and the chunks, depend on the text alone, never on the sizes
		// of the reads.
		for !eof && len(buf)-carried <= w {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(buf) == cap(buf) {
				buf = append(buf, make([]byte, w)...)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return fmt.Errorf("splitter: reading text at byte %d: %w", read+len(buf)-carried, err)
			}
		}
		last := eof && len(buf)-carried <= w
		cut := len(buf)
		if !last {
			cut = carried + windowCut(buf[carried:carried+w])
		}
		// The window's pieces are those whole-text splitting finds in it
		// (it starts and ends on paragraph separators); the merger keeps
		// its unfinished chunk across windows.
		m.text = string(buf[:cut])
		var ok bool
		if read == 0 && last { // the whole stream is one window
			ok = s.pieces(m.text, 0, s.cfg.ChunkSize, m)
		} else {
			ok = s.paragraphPieces(m.text[carried:], carried, s.cfg.ChunkSize, m)
		}
		if !ok {
			return m.err
		}
		if err := m.run(last); err != nil {
			return err
		}
		if last {
			return nil
		}
		read += cut - carried
		keep := len(m.carry()) // m.text[cut-keep:] == buf[cut-keep:cut]
		// Keep the carried text, then what was read past the window.
		buf = buf[:copy(buf, buf[cut-keep:])]
		carried = keep
	}
}

// paragraphPieces passes to m the pieces of text (at offset off) as
// splitting a longer text that contains it would find them: by paragraph
// first.
func (s *Splitter) paragraphPieces(text string, off, size int, m *merger) bool {
	prev, ok := 0, true
	cutParagraphs(text, func(end int) bool {
		ok = s.pieces(text[prev:end], off+prev, size, m)
		prev = end
		return ok
	})
	return ok && s.pieces(text[prev:], off+prev, size, m)
}

// windowCut returns where the window buf ends: at its last paragraph
// separator (found scanning left to right, as String.split does) past the
// first quarter, else after its last newline or space, else at the first
// character boundary after the first quarter.
func windowCut(buf []byte) int {
	sep := []byte(paragraphSeparator)
	last := -1
	for i := 0; ; {
		k := bytes.Index(buf[i:], sep)
		if k < 0 {
			break
		}
		last = i + k
		i += k + len(sep)
	}
	quarter := len(buf) / 4
	if last > quarter {
		return last
	}
	if k := bytes.LastIndexByte(buf, '\n'); k > quarter {
		return k + 1
	}
	if k := bytes.LastIndexByte(buf, ' '); k > quarter {
		return k + 1
	}
	// One long word: it is cut into characters, each a piece, so keep the
	// window short (a quarter) to bound memory; cut at a character start.
	end := max(quarter, 1)
	for k := 0; k < utf8.UTFMax && end < len(buf) && !utf8.RuneStart(buf[end]); k++ {
		end++
	}
	return end
}
