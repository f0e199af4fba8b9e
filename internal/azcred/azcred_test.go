package azcred

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Kind
		ok   bool
	}{
		{"key", Key, true},
		{"apiKey", Key, true},
		{"API_KEY", Key, true},
		{"AzureKeyCredential", Key, true},
		{"keycredential", Key, true},
		{"default", Default, true},
		{"DefaultAzureCredential", Default, true},
		{"managedIdentity", ManagedIdentity, true},
		{"managed_identity", ManagedIdentity, true},
		{"ManagedIdentityCredential", ManagedIdentity, true},
		{"", 0, false},
		{"none", 0, false},
		{"entra", 0, false},
		{"azure key credential", 0, false},
	}
	for _, tt := range tests {
		if got, ok := Parse(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestQuote: names are shown; anything shaped like a key is not.
func TestQuote(t *testing.T) {
	const hidden = "a value (not shown: it may be a key)"
	tests := []struct{ in, want string }{
		{"entra", `"entra"`},
		{"Managed-Identity_X", `"Managed-Identity_X"`},
		{"", `""`},
		{"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", hidden},
		{"0123456789abcdef0123456789abcdef", hidden},           // an Azure OpenAI key: 32 hex digits
		{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnop", hidden}, // longer than any name
		{"key with spaces", hidden},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
}
