// Package embedder turns batches of texts into vectors. It defines the
// Embedder interface and its providers: the local hashing embedder (the
// offline default), the instant embedder (one constant vector, to measure
// the pipeline alone; not for real indexes), and the OpenAI-compatible and
// Azure OpenAI clients with request limits, RPM/TPM pacing and retries.
package embedder

import (
	"context"
	"errors"
)

// Input is one text to embed with its token count. Tokens is the count of
// the splitter's tokenizer (cl100k_base), computed once when the text was
// chunked; 0 means unknown, and providers that need it count it themselves.
type Input struct {
	Text   string
	Tokens int
}

// Embedder embeds batches of texts.
//
// Implementations are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per input, in input order, each of
	// Dimensions() floats.
	Embed(ctx context.Context, inputs []Input) ([][]float32, error)
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
}

// ErrEmbed marks errors returned by providers; typed errors wrap it.
var ErrEmbed = errors.New("embedder: embedding failed")

// Texts wraps plain strings as Inputs with unknown token counts.
func Texts(texts ...string) []Input {
	in := make([]Input, len(texts))
	for i, t := range texts {
		in[i] = Input{Text: t}
	}
	return in
}
