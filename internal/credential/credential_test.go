package credential_test

import (
	"strconv"
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

func TestEnvNameProblem(t *testing.T) {
	tests := []struct {
		name string
		want string // part of the problem; "" for none
	}{
		{"OPENAI_API_KEY", ""},
		{"CLOUD_AI_SEARCH_KEY", ""},
		{"_PRIVATE", ""},
		{"myKey2", ""},
		{"AZURE_OPENAI_API_KEY_FOR_THE_PRODUCTION_DEPLOYMENT", ""}, // long, but with underscores
		{"", "is empty"},
		{"2KEY", "not an environment variable name"},
		{"sk-proj-abc123", "not an environment variable name"},
		{"MY KEY", "not an environment variable name"},
		{"AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789ABCD", "looks like a key"}, // an Azure AI Search admin key's shape
		{"a0123456789abcdef0123456789abcdef", "looks like a key"},                    // 32+ hex digits
		{"Xk9fLm2QpR7sTv4WnY8z", "looks like a key"},                                 // 20 mixed
	}
	for _, tt := range tests {
		got := credential.EnvNameProblem(tt.name)
		switch {
		case tt.want == "" && got != "":
			t.Errorf("EnvNameProblem(%q) = %q, want none", tt.name, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("EnvNameProblem(%q) = %q, want it to say %q", tt.name, got, tt.want)
		}
		if tt.name != "" && strings.Contains(got, tt.name) {
			t.Errorf("EnvNameProblem(%q) = %q shows the value", tt.name, got)
		}
	}
}

func TestClause(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Invalid key.", "Invalid key"},
		{"Invalid key", "Invalid key"},
		{"cut short...", "cut short..."},
		{"v1.", "v1"},
		{".", ""},
		{"", ""},
	} {
		if got := credential.Clause(tt.in); got != tt.want {
			t.Errorf("credential.Clause(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEndpointShown(t *testing.T) {
	tests := []struct {
		value string
		shown bool
	}{
		{"https://svc.search.windows.net", true},
		{"http://localhost:8080", true},
		{"http://127.0.0.1:19100/", true},
		{"http://[::1]:8700", true},
		{"https://[2001:db8::1]/", true},
		{"http://[not-an-address]:8700", false},
		{"svc.search.windows.net", true}, // no scheme: shown, the usual slip
		{"https://svc.search.windows.net/indexes", true},
		{"k3yAzSeAAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef", false}, // an admin key's shape
		{"sk-proj-abcdefghijklmnop", false},
		{"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRydWV9.sig", false}, // a token
		{"https://user:pass@svc.search.windows.net", false},
		{"https://svc.search.windows.net?api-key=abc", false},
		{"ftp://svc.search.windows.net", false},
		{"https://", false},
		{"svc search.windows.net", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := credential.EndpointShown(tt.value); got != tt.shown {
			t.Errorf("EndpointShown(%q) = %v, want %v", tt.value, got, tt.shown)
		}
		q := credential.QuoteEndpoint(tt.value)
		if tt.shown && q != strconv.Quote(tt.value) || !tt.shown && (q != credential.NotShown || tt.value != "" && strings.Contains(q, tt.value)) {
			t.Errorf("QuoteEndpoint(%q) = %q", tt.value, q)
		}
	}
}
