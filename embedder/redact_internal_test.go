package embedder

import (
	"strings"
	"testing"
)

// TestRedactThenTruncate checks redact and truncate on their own: a key
// quoted whole or in part (8 characters or more) is replaced, and a cut
// never leaves part of a key, part of a "[redacted]" marker or half a
// UTF-8 character.
func TestRedactThenTruncate(t *testing.T) {
	const key = "MyOrgSecretKey0123456789abcdefXY"
	tests := []struct {
		name  string
		msg   string
		limit int
		want  string
	}{
		{"whole key", "bad key " + key + " here", 300, "bad key [redacted] here"},
		{"key cut short by the provider", "bad key " + key[:20] + "...", 300, "bad key [redacted]..."},
		{"key's tail", "bad key ..." + key[len(key)-9:], 300, "bad key ...[redacted]"},
		{"7 characters stay", "code " + key[:7] + " ok", 300, "code " + key[:7] + " ok"},
		{"OpenAI-shaped word", "Bearer sk-proj-abc other", 300, "Bearer [redacted] other"},
		{"cut inside the marker drops it", "abcd " + key, 8, "abcd ..."},
		{"cut after the marker keeps it", "abcd " + key + " tail", 16, "abcd [redacted] ..."},
		{"cut right after the marker", "ab " + key + " tail", 13, "ab [redacted]..."},
		{"cut inside a character", "abcé", 4, "abc..."},
		{"short message", "short", 300, "short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncate(redact(tt.msg, key), tt.limit)
			if got != tt.want {
				t.Errorf("truncate(redact(%q), %d) = %q, want %q", tt.msg, tt.limit, got, tt.want)
			}
			if strings.Contains(got, key[:8]) {
				t.Errorf("%q shows the key", got)
			}
		})
	}
}
