package splitter

import (
	"errors"
	"fmt"
)

// Default sizes, as in LlamaIndex (seed §8).
const (
	DefaultChunkSize    = 1024
	DefaultChunkOverlap = 200
)

// MinChunkSize is the smallest chunk size, in tokens, that can hold any
// single character (a code point is at most four bytes, hence four tokens).
// It bounds both Config.ChunkSize and the chunk size left by metadata.
const MinChunkSize = 4

// Config holds the splitter settings (the `splitter` section of the
// configuration file).
type Config struct {
	// ChunkSize is the largest chunk, in cl100k_base tokens. Default 1024.
	ChunkSize int `yaml:"chunkSize"`
	// ChunkOverlap is the most tokens a chunk repeats from the end of the
	// previous one. Default 200. It must be smaller than ChunkSize.
	ChunkOverlap int `yaml:"chunkOverlap"`
}

// DefaultConfig returns the default settings: 1024 / 200.
func DefaultConfig() Config {
	return Config{ChunkSize: DefaultChunkSize, ChunkOverlap: DefaultChunkOverlap}
}

// WithDefaults returns c with a zero ChunkSize set to 1024; a zero
// ChunkOverlap takes its default (200) only when ChunkSize was zero too,
// since no overlap is a valid choice. To keep the defaults of keys missing
// from a YAML file, decode into DefaultConfig() instead.
func (c Config) WithDefaults() Config {
	if c.ChunkSize == 0 {
		if c.ChunkOverlap == 0 {
			c.ChunkOverlap = DefaultChunkOverlap
		}
		c.ChunkSize = DefaultChunkSize
	}
	return c
}

// Validate reports the first invalid setting, naming it as it appears in
// the configuration file.
func (c Config) Validate() error {
	switch {
	case c.ChunkSize < MinChunkSize:
		return &ConfigError{Field: "splitter.chunkSize", Value: c.ChunkSize,
			Reason: fmt.Sprintf("must be at least %d tokens (default %d)", MinChunkSize, DefaultChunkSize)}
	case c.ChunkOverlap < 0:
		return &ConfigError{Field: "splitter.chunkOverlap", Value: c.ChunkOverlap,
			Reason: fmt.Sprintf("must be 0 or more tokens (default %d)", DefaultChunkOverlap)}
	case c.ChunkOverlap >= c.ChunkSize:
		return &ConfigError{Field: "splitter.chunkOverlap", Value: c.ChunkOverlap,
			Reason: fmt.Sprintf("must be smaller than splitter.chunkSize (%d); lower the overlap or raise the chunk size", c.ChunkSize)}
	}
	return nil
}

// ErrInvalidConfig is wrapped by every *ConfigError.
var ErrInvalidConfig = errors.New("splitter: invalid configuration")

// ErrMetadataTooLong reports metadata that leaves no room for text in a
// chunk; *MetadataError wraps it.
var ErrMetadataTooLong = errors.New("splitter: metadata too long for chunk size")

// ErrTokenizer reports that the cl100k_base vocabulary could not be loaded.
var ErrTokenizer = errors.New("splitter: cannot load the cl100k_base tokenizer")

// ConfigError names an invalid setting.
type ConfigError struct {
	Field  string // setting as written in the config file, e.g. "splitter.chunkOverlap"
	Value  int
	Reason string
}

// Error names the setting, its value and what is allowed.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: %d is invalid: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// MetadataError reports metadata whose tokens leave fewer than MinChunkSize
// tokens of a chunk for text.
type MetadataError struct {
	MetadataTokens int // tokens of the metadata text embedded with each chunk
	ChunkSize      int // splitter.chunkSize
}

// Error says how many tokens the metadata takes and how to make room.
func (e *MetadataError) Error() string {
	return fmt.Sprintf("splitter: metadata takes %d tokens of splitter.chunkSize %d, leaving fewer than %d for text; "+
		"raise splitter.chunkSize or embed less metadata", e.MetadataTokens, e.ChunkSize, MinChunkSize)
}

// Unwrap returns ErrMetadataTooLong.
func (e *MetadataError) Unwrap() error { return ErrMetadataTooLong }
