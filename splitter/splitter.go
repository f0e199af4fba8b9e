package splitter

import (
	"fmt"
	"log/slog"
	"sync"
)

// Chunk is a piece of the input text.
type Chunk struct {
	// Text is the chunk, trimmed of surrounding white space.
	Text string
	// Start and End are byte offsets into the input: input[Start:End] == Text.
	Start int
	End   int
	// CharStart and CharEnd are the same offsets in UTF-16 code units, the
	// indexes of a JavaScript string, which LlamaIndex.TS reports as a
	// node's startCharIdx and endCharIdx (LlamaIndex for Python counts code
	// points: the same for text without characters beyond U+FFFF). An
	// invalid UTF-8 byte counts as one, as the U+FFFD replacing it would.
	CharStart int
	CharEnd   int
	// Tokens is the cl100k_base token count of Text; never above the chunk size.
	Tokens int
}

// SmallChunkTokens is the chunk size left by metadata below which
// SplitWithMetadata logs a warning, as LlamaIndex does.
const SmallChunkTokens = 50

// Splitter splits text into chunks of at most ChunkSize tokens following
// LlamaIndex's SentenceSplitter. It is safe for concurrent use.
type Splitter struct {
	cfg    Config
	tok    *cl100k
	logger *slog.Logger
	window int // streaming window in bytes; 0 means windowSize's default
}

// New returns a Splitter for cfg, which must be valid as given: apply
// DefaultConfig or Config.WithDefaults first for defaults.
func New(cfg Config) (*Splitter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tok, err := loadTokenizer()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTokenizer, err)
	}
	return &Splitter{cfg: cfg, tok: tok, logger: slog.Default()}, nil
}

// WithLogger returns a copy of s that logs warnings (small chunks left by
// metadata) to l instead of slog.Default(). Texts are never logged.
func (s *Splitter) WithLogger(l *slog.Logger) *Splitter {
	c := *s
	c.logger = l
	return &c
}

// Config returns the settings of s.
func (s *Splitter) Config() Config { return s.cfg }

// CountTokens returns the number of cl100k_base tokens of text. Its memory
// grows with the longest pre-token of text, a run of letters or of white
// space, by about 20 bytes per byte; Split and SplitReader never merge
// more than ChunkSize tokens' worth of one.
func (s *Splitter) CountTokens(text string) int { return s.tok.count(text) }

// Split splits text into chunks of at most ChunkSize tokens, overlapping
// by at most ChunkOverlap tokens. White-space-only text gives no chunks.
func (s *Splitter) Split(text string) []Chunk { return s.collect(text, s.cfg.ChunkSize) }

// ChunkSizeFor returns the chunk size left for text when metadataText is
// embedded with every chunk (LlamaIndex's metadata-aware splitting). It
// returns a *MetadataError (ErrMetadataTooLong) when fewer than
// MinChunkSize tokens are left.
func (s *Splitter) ChunkSizeFor(metadataText string) (int, error) {
	m := s.tok.count(metadataText)
	size := s.cfg.ChunkSize - m
	if size < MinChunkSize {
		return 0, &MetadataError{MetadataTokens: m, ChunkSize: s.cfg.ChunkSize}
	}
	return size, nil
}

// SplitWithMetadata splits text so that each chunk plus metadataText fits
// ChunkSize tokens. It logs a warning when fewer than SmallChunkTokens
// tokens are left for text, and fails with ErrMetadataTooLong when fewer
// than MinChunkSize are.
func (s *Splitter) SplitWithMetadata(text, metadataText string) ([]Chunk, error) {
	size, err := s.ChunkSizeFor(metadataText)
	if err != nil {
		return nil, err
	}
	s.warnSmall(size)
	return s.collect(text, size), nil
}

func (s *Splitter) warnSmall(size int) {
	if size < SmallChunkTokens && s.logger != nil {
		s.logger.Warn("splitter: metadata leaves small chunks; raise splitter.chunkSize or embed less metadata",
			"chunk_size", s.cfg.ChunkSize, "tokens_left_for_text", size)
	}
}

// collect returns the chunks of text of at most size tokens.
func (s *Splitter) collect(text string, size int) []Chunk {
	var out []Chunk
	_ = s.split(text, 0, size, func(c Chunk) error { // never fails: the callback does not
		out = append(out, c)
		return nil
	})
	return out
}

// split splits text, whose first byte is at offset base of the input, into
// chunks of at most size tokens and passes them to emit in order.
func (s *Splitter) split(text string, base, size int, emit func(Chunk) error) error {
	if text == "" {
		return nil
	}
	m := newMerger(s, size, emit)
	m.text, m.base = text, base
	buf := piecePool.Get().(*[]piece)
	defer piecePool.Put(buf)
	m.pieces = (*buf)[:0]
	var err error
	if s.pieces(text, 0, size, m) {
		err = m.run(true)
	} else {
		err = m.err
	}
	*buf = m.pieces[:0]
	return err
}

// piecePool holds the piece lists of finished splits for reuse.
var piecePool = sync.Pool{New: func() any { return new([]piece) }}

// cutBuffers are the scratch buffers of pieces, one level per depth of
// cutting, reused across calls.
type cutBuffers struct {
	pre [][]preToken // pre-tokens of the text, or of the part, at each depth
}

var cutPool = sync.Pool{New: func() any { return new(cutBuffers) }}

// grow makes room for depth.
func (b *cutBuffers) grow(depth int) {
	for len(b.pre) <= depth {
		b.pre = append(b.pre, nil)
	}
}

// pieces passes to out, in order, the splits of text (whose first byte is
// at offset off), as LlamaIndex's #split makes them: the whole text if it
// fits size, else its parts by the first cutter that cuts it, each cut
// again if still too long. It reports false if out failed (see
// merger.add).
func (s *Splitter) pieces(text string, off, size int, out *merger) bool {
	b := cutPool.Get().(*cutBuffers)
	defer cutPool.Put(b)
	b.grow(0)
	c, pre := s.tok.countPart(text, 0, len(text), nil, size, b.pre[0][:0])
	b.pre[0] = pre
	if c.tokens <= size {
		return out.add(newPiece(off, 0, len(text), c))
	}
	return s.cut(text, off, size, b, 0, out)
}

// cutPieces is pieces for a text that is cut however it counts.
func (s *Splitter) cutPieces(text string, off, size int, out *merger) bool {
	b := cutPool.Get().(*cutBuffers)
	defer cutPool.Put(b)
	b.grow(0)
	b.pre[0] = b.pre[0][:0]
	return s.cut(text, off, size, b, 0, out)
}

// cut passes to out the pieces of text, which exceeds size, cut at depth:
// b.pre[depth] holds its pre-tokens as far as they were counted, which the
// counts of its parts reuse. Each part is counted, and made a piece or cut
// again, as soon as the cutter finds its end.
func (s *Splitter) cut(text string, off, size int, b *cutBuffers, depth int, out *merger) bool {
	b.grow(depth + 1)
	parent := b.pre[depth]
	prev, ok := 0, true
	part := func(end int) bool {
		c, pre := s.tok.countPart(text, prev, end, parent, size, b.pre[depth+1][:0])
		b.pre[depth+1] = pre
		if c.tokens <= size {
			ok = out.add(newPiece(off, prev, end, c))
		} else {
			ok = s.cut(text[prev:end], off+prev, size, b, depth+1, out)
		}
		prev = end
		return ok
	}
	for _, cut := range cutters {
		if cut(text, part); prev > 0 { // the text was cut: its last part
			return ok && part(len(text))
		}
	}
	// A single code point: cannot happen with size >= MinChunkSize.
	c, _ := s.tok.countPart(text, 0, len(text), parent, -1, b.pre[depth+1][:0])
	return out.add(newPiece(off, 0, len(text), c))
}
