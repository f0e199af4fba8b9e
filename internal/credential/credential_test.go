package credential_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/credential"
)

func TestRedact(t *testing.T) {
	const key = "TOPSECRETKEY42-0123456789"
	tests := []struct {
		name, text, want string
	}{
		{"whole", "Invalid api-key: " + key, "Invalid api-key: [redacted]"},
		{"twice", key + " and " + key, "[redacted] and [redacted]"},
		{"head", "key " + key[:10] + "...", "key [redacted]..."},
		{"tail", "key ..." + key[len(key)-8:], "key ...[redacted]"},
		{"7 characters stay", "code " + key[:7], "code " + key[:7]},
		{"nothing", "index not found", "index not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := credential.Redact(tt.text, "", key); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestHeaderProblem(t *testing.T) {
	tests := []struct{ key, want string }{
		{"abc-DEF_123", ""},
		{"ab\ncd", "a line break (\\n) at byte 3 of 5"},
		{"abcd\r", "a carriage return (\\r) at byte 5 of 5"},
		{"a\tb", "a tab at byte 2 of 3"},
		{"devkey\x7f", "a DEL character (0x7F) at byte 7 of 7"},
		{"x\x00", "a control character (0x00) at byte 2 of 2"},
	}
	for _, tt := range tests {
		got := credential.HeaderProblem(tt.key)
		if got != tt.want {
			t.Errorf("HeaderProblem(%q) = %q, want %q", tt.key, got, tt.want)
		}
		if tt.key != "" && strings.Contains(got, tt.key) {
			t.Errorf("HeaderProblem(%q) quotes the key", tt.key)
		}
	}
}
