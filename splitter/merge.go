package splitter

import (
	"unicode/utf16"
	"unicode/utf8"
)

// merger greedily merges pieces into chunks (LlamaIndex's #merge), with the
// corrections listed in the package documentation: a chunk's exact token
// count never exceeds size, and an overlap never exceeds ChunkOverlap
// exact tokens nor crowds out the next piece.
type merger struct {
	s      *Splitter
	text   string
	base   int
	size   int
	pieces []piece
	emit   func(Chunk) error
	// flushAt, if set, is the number of pieces at which add merges those
	// it has and drops the ones done with; 0 only collects pieces.
	flushAt int
	err     error // the first error of emit, when add merges

	lo, i  int  // the current chunk is pieces[lo:i]
	ovEnd  int  // pieces[lo:ovEnd] are the overlap taken from the previous chunk
	curLen int  // sum of the token counts of pieces[lo:i]
	fresh  bool // no piece added since the last close (LlamaIndex's newChunk)
	// prevEnd is the end of the last emitted chunk (relative to text), -1
	// before the first.
	prevEnd int
	// units is the number of UTF-16 code units of the input before byte
	// unitsAt of text (see Chunk.CharStart).
	units, unitsAt int
}

// unitsBefore returns the UTF-16 code units of the input before byte i of
// text, moving the merger's count there: forward over a chunk to its end,
// then back over the overlap to the next chunk's start, so each byte is
// counted once, and those of overlaps three times.
func (m *merger) unitsBefore(i int) int {
	if i >= m.unitsAt {
		m.units += utf16Len(m.text[m.unitsAt:i])
	} else {
		m.units -= utf16Len(m.text[i:m.unitsAt])
	}
	m.unitsAt = i
	return m.units
}

// carry drops the text before the unfinished chunk (and its overlap) and
// returns the rest, rebasing the merger's offsets onto it; the next window
// appends its text and pieces to what carry returns.
func (m *merger) carry() string {
	from := len(m.text)
	if m.lo < len(m.pieces) {
		from = m.pieces[m.lo].start
	}
	m.drop()
	for k := range m.pieces {
		p := &m.pieces[k]
		p.start -= from
		p.end -= from
		p.firstEnd -= from
		p.lastStart -= from
	}
	m.prevEnd -= from
	m.base += from
	m.unitsBefore(from)
	m.unitsAt -= from
	return m.text[from:]
}

// drop forgets the pieces before the unfinished chunk (and its overlap),
// which merging never looks at again.
func (m *merger) drop() {
	m.pieces = m.pieces[:copy(m.pieces, m.pieces[m.lo:])]
	m.i -= m.lo
	m.ovEnd = max(m.ovEnd-m.lo, 0)
	m.lo = 0
}

// newMerger returns a merger that emits chunks of at most size tokens,
// merging pieces as add receives them.
func newMerger(s *Splitter, size int, emit func(Chunk) error) *merger {
	return &merger{s: s, size: size, emit: emit, fresh: true, prevEnd: -1, flushAt: size + flushPieces}
}

// flushPieces is how many pieces beyond a chunk's worth (at most size: a
// piece has at least one token) add lets pile up before merging them.
const flushPieces = 4096

// add appends p, the next piece of the text, to the pieces. When flushAt
// pieces have piled up, it merges them (run without final) and drops those
// before the unfinished chunk, so that the pieces held never exceed
// flushAt, however many a text has: a run of spaces or letters is cut into
// one piece per byte. Merging in steps emits the same chunks as merging
// all the pieces at once: run stops where the pieces end in the state it
// would pass through there with all of them, and never looks back before
// the unfinished chunk. add reports false, keeping the error in m.err,
// once emit has failed.
func (m *merger) add(p piece) bool {
	m.pieces = append(m.pieces, p)
	if m.flushAt == 0 || len(m.pieces) < m.flushAt {
		return true
	}
	if m.err = m.run(false); m.err != nil {
		return false
	}
	m.drop()
	return true
}

// run merges the pieces not merged yet. Unless final, it stops when the
// pieces run out, keeping the unfinished chunk for the pieces of the next
// window (see carry).
func (m *merger) run(final bool) error {
	for m.i < len(m.pieces) || (final && !m.fresh) {
		if m.i == len(m.pieces) {
			if err := m.close(); err != nil {
				return err
			}
			continue
		}
		p := m.pieces[m.i]
		if m.curLen+p.tokens > m.size && !m.fresh {
			if err := m.close(); err != nil {
				return err
			}
			continue
		}
		if m.fresh {
			// LlamaIndex adds the piece whatever the overlap; Sluice drops
			// overlap pieces until it fits.
			for m.lo < m.i && m.curLen+p.tokens > m.size {
				m.curLen -= m.pieces[m.lo].tokens
				m.lo++
			}
		}
		m.curLen += p.tokens
		m.i++
		m.fresh = false
	}
	return nil
}

// close emits the current chunk (if not blank), then starts the next one
// with the overlap. If the chunk's exact count exceeds size, it first gives
// pieces back (or drops overlap, or splits its only piece finer).
func (m *merger) close() error {
	emitted := false
	for {
		start, end := trimSpace(m.text, m.pieces[m.lo].start, m.pieces[m.i-1].end)
		if start == end || end <= m.prevEnd {
			break // blank, or nothing beyond the previous chunk's overlap
		}
		n := m.exact(start, end)
		if n > m.size {
			switch {
			case m.i-1 > m.lo && m.i-1 >= m.ovEnd+1:
				m.i-- // give the last piece back to the next chunk
				continue
			case m.lo < m.ovEnd:
				m.lo++ // drop an overlap piece
				continue
			case m.refine(m.lo): // the only piece: cut it finer
				continue
			}
		}
		c := Chunk{Text: m.text[start:end], Start: m.base + start, End: m.base + end, Tokens: n}
		c.CharStart = m.unitsBefore(start)
		c.CharEnd = m.unitsBefore(end)
		if err := m.emit(c); err != nil {
			return err
		}
		m.prevEnd, emitted = end, true
		break
	}
	// The next chunk starts with the longest tail of this one whose pieces
	// sum to at most ChunkOverlap tokens, and whose exact count does too.
	lo, sum := m.i, 0
	for lo > m.lo && sum+m.pieces[lo-1].tokens <= m.s.cfg.ChunkOverlap {
		lo--
		sum += m.pieces[lo].tokens
	}
	for lo < m.i && emitted {
		start, _ := trimSpace(m.text, m.pieces[lo].start, m.pieces[m.i-1].end)
		// A text has at most as many tokens as bytes: the overlap of a run
		// of letters, one piece per letter, needs no counting.
		if start >= m.prevEnd || m.prevEnd-start <= m.s.cfg.ChunkOverlap ||
			m.exact(start, m.prevEnd) <= m.s.cfg.ChunkOverlap {
			break
		}
		sum -= m.pieces[lo].tokens
		lo++
	}
	m.lo, m.ovEnd, m.curLen, m.fresh = lo, m.i, sum, true
	return nil
}

// exact returns the token count of text[start:end], a trimmed run of the
// pieces from m.lo on, mostly without tokenizing it again.
//
// Pre-tokenization only looks forward: from a position where the run and a
// piece alone both have a pre-token boundary, they agree on every pre-token
// up to the piece's last one (whose end may differ, as the run goes on). So
// exact scans the run pre-token by pre-token only until it reaches the
// start or the end of the first pre-token of a piece, takes the piece's
// own count up to its last pre-token, and checks with one more pre-token
// whether the run also has a boundary at the piece's end. Trimmed ends and
// joins that are no boundary (".\n" across a join) cost a few pre-tokens.
func (m *merger) exact(start, end int) int {
	run := m.text[:end]
	n, cur := 0, start
	// scan counts the run's pre-tokens from cur up to limit (or the end).
	scan := func(limit int, stop func() bool) {
		for cur < limit && cur < end && !stop() {
			j := nextPiece(run, cur)
			n += m.s.tok.countPiece(run[cur:j])
			cur = j
		}
	}
	never := func() bool { return false }
	for k := m.lo; cur < end; k++ {
		p := &m.pieces[k]
		scan(p.end, func() bool { return cur == p.start || cur == p.firstEnd })
		if cur >= p.end || cur >= end {
			continue
		}
		// cur is p.start, or p.firstEnd before p.end (so p has two or more
		// pre-tokens): the run agrees with p alone up to p.lastStart.
		if p.lastStart >= end {
			scan(p.end, never) // trimming cut p before its last pre-token
			continue
		}
		if cur == p.start {
			n += p.tokens - p.lastTokens
		} else {
			n += p.tokens - p.firstTokens - p.lastTokens
		}
		cur = p.lastStart
		if j := nextPiece(run, cur); j == p.end {
			n += p.lastTokens
			cur = j
		}
		scan(p.end, never)
	}
	return n
}

// refine replaces pieces[k], whose trimmed text alone exceeds size, by
// finer pieces (rare: trimming can make a piece cost more tokens, e.g.
// " unbelievable" is 1 token and "unbelievable" 3). It reports false if the
// piece cannot be cut, which cannot happen: only a piece of several code
// points can exceed size >= MinChunkSize.
func (m *merger) refine(k int) bool {
	p := m.pieces[k]
	var fine merger // collects only
	m.s.cutPieces(m.text[p.start:p.end], p.start, m.size, &fine)
	finer := fine.pieces
	if len(finer) < 2 {
		return false
	}
	m.pieces = append(m.pieces[:k], append(finer, m.pieces[k+1:]...)...)
	m.i = k + 1
	return true
}

// trimSpace returns the bounds of text[start:end] without leading and
// trailing white space (JavaScript's String.prototype.trim).
func trimSpace(text string, start, end int) (int, int) {
	for start < end {
		c, n := classAt(text, start)
		if !isSpaceClass(c) {
			break
		}
		start += n
	}
	for end > start {
		r, n := utf8.DecodeLastRuneInString(text[start:end])
		if !isJSSpace(r) {
			break
		}
		end -= n
	}
	return start, end
}

// utf16Len returns the length of s in UTF-16 code units, as JavaScript
// counts a string: one per code point, two beyond U+FFFF, one per invalid
// byte.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		// Eight ASCII bytes at a time: one unit each.
		for i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if w&0x8080808080808080 != 0 {
				break
			}
			n += 8
			i += 8
		}
		if i == len(s) {
			break
		}
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += utf16.RuneLen(r) // 1 for utf8.RuneError
		i += size
	}
	return n
}
