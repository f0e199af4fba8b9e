package splitter

import (
	"fmt"
	"log/slog"
)

// Chunk is a piece of the input text.
type Chunk struct {
	// Text is the chunk, trimmed of surrounding white space.
	Text string
	// Start and End are byte offsets into the input: input[Start:End] == Text.
	// (LlamaIndex reports UTF-16 code unit indexes instead.)
	Start int
	End   int
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

// CountTokens returns the number of cl100k_base tokens of text.
func (s *Splitter) CountTokens(text string) int { return s.tok.count(text, -1) }

// Split splits text into chunks of at most ChunkSize tokens, overlapping
// by at most ChunkOverlap tokens. White-space-only text gives no chunks.
func (s *Splitter) Split(text string) []Chunk {
	var out []Chunk
	s.split(text, 0, s.cfg.ChunkSize, func(c Chunk) error {
		out = append(out, c)
		return nil
	})
	return out
}

// ChunkSizeFor returns the chunk size left for text when metadataText is
// embedded with every chunk (LlamaIndex's metadata-aware splitting). It
// returns a *MetadataError (ErrMetadataTooLong) when fewer than
// MinChunkSize tokens are left.
func (s *Splitter) ChunkSizeFor(metadataText string) (int, error) {
	m := s.tok.count(metadataText, -1)
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
	var out []Chunk
	s.split(text, 0, size, func(c Chunk) error {
		out = append(out, c)
		return nil
	})
	return out, nil
}

func (s *Splitter) warnSmall(size int) {
	if size < SmallChunkTokens && s.logger != nil {
		s.logger.Warn("splitter: metadata leaves small chunks; raise splitter.chunkSize or embed less metadata",
			"chunk_size", s.cfg.ChunkSize, "tokens_left_for_text", size)
	}
}

// split splits text, whose first byte is at offset base of the input, into
// chunks of at most size tokens and passes them to emit in order.
func (s *Splitter) split(text string, base, size int, emit func(Chunk) error) error {
	if text == "" {
		return nil
	}
	m := newMerger(s, size, emit)
	m.text, m.base = text, base
	m.pieces = s.pieces(text, 0, size, false, nil)
	return m.run(true)
}

// pieces appends the splits of text (whose first byte is at offset off), as
// LlamaIndex's #split makes them: the whole text if it fits size, else its
// parts by the first cutter that cuts it, each cut again if still too long.
// over reports that text is already known to exceed size.
func (s *Splitter) pieces(text string, off, size int, over bool, out []piece) []piece {
	if !over {
		if c := s.tok.countTally(text, size); c.tokens <= size {
			return append(out, newPiece(off, 0, len(text), c))
		}
	}
	var cuts []int
	for _, cut := range cutters {
		if cuts = cut(text, cuts[:0]); len(cuts) > 0 {
			break
		}
	}
	if len(cuts) == 0 { // a single code point: cannot happen with size >= MinChunkSize
		return append(out, newPiece(off, 0, len(text), s.tok.countTally(text, -1)))
	}
	prev := 0
	for k := 0; k <= len(cuts); k++ {
		end := len(text)
		if k < len(cuts) {
			end = cuts[k]
		}
		part := text[prev:end]
		if c := s.tok.countTally(part, size); c.tokens <= size {
			out = append(out, newPiece(off, prev, end, c))
		} else {
			out = s.pieces(part, off+prev, size, true, out)
		}
		prev = end
	}
	return out
}
