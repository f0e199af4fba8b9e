package embedder

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var cl100k = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.Cl100kBase)
})

// countTokens counts the cl100k_base tokens of s, the tokenizer of the
// splitter and of OpenAI's embedding models.
func countTokens(s string) (int, error) {
	codec, err := cl100k()
	if err != nil {
		return 0, fmt.Errorf("loading the cl100k_base tokenizer: %w", err)
	}
	return codec.Count(s)
}
