package local

import (
	"strings"
	"unicode"
)

// maxQueryTerms bounds the number of words of a full-text query.
const maxQueryTerms = 64

// ftsQuery turns free text into a safe FTS5 query: the words (runs of
// letters, digits and marks, as the unicode61 tokenizer sees them), each
// quoted as an FTS5 string and joined by OR. Operators and punctuation in
// the text are thus never interpreted. It returns "" when the text holds no
// word.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
	seen := make(map[string]bool, len(words))
	var b strings.Builder
	n := 0
	for _, w := range words {
		key := strings.ToLower(w)
		if seen[key] {
			continue
		}
		seen[key] = true
		if n > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(w, `"`, `""`))
		b.WriteByte('"')
		if n++; n == maxQueryTerms {
			break
		}
	}
	return b.String()
}
