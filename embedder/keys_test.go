package embedder_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/internal/testenv"
)

// TestLongBodyRedactedBeforeCut answers 401 with a text body (not JSON)
// that quotes the key the request sent where the body is cut to 300 bytes
// (a key straddling the cut, ending just past it, or starting just before
// it), and checks that the error shows no 8 characters of the key in a
// row, nor a piece of the "[redacted]" marker, while the provider's own
// words before the key are kept.
func TestLongBodyRedactedBeforeCut(t *testing.T) {
	const key = "MyOrgSecretKey0123456789abcdefXY" // 32 bytes, not OpenAI-shaped
	const quote = "Bearer "
	tests := []struct {
		name     string
		provider string
		keyStart int // byte offset of the key in the body
	}{
		{"openai key ends 1 byte past the cut", "openai", 301 - len(key)},
		{"openai key ends 3 bytes past the cut", "openai", 303 - len(key)},
		{"openai key straddles the cut", "openai", 300 - len(key)/2},
		{"openai marker would straddle the cut", "openai", 295},
		{"openai key starts at the cut", "openai", 300},
		{"azure key ends 2 bytes past the cut", "azure-openai", 302 - len(key)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SLUICE_TEST_LONG_KEY", key)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sent := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				if sent == "" {
					sent = r.Header.Get("api-key")
				}
				pad := strings.Repeat("x", tt.keyStart-len(quote))
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(pad + quote + sent + " is not a valid key for this organisation"))
			}))
			t.Cleanup(srv.Close)
			cfg := embedder.Config{Provider: tt.provider, Dimensions: 16, APIKeyEnv: "SLUICE_TEST_LONG_KEY", MaxRetries: -1}
			var c *embedder.Client
			var err error
			if tt.provider == "openai" {
				cfg.BaseURL, cfg.Model = srv.URL+"/v1", "test-model"
				c, err = embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)))
			} else {
				cfg.Endpoint, cfg.Deployment = srv.URL, "emb"
				c, err = embedder.NewAzureOpenAI(context.Background(), cfg, embedder.WithHTTPClient(testHTTPClient(t)))
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Embed(context.Background(), texts(1))
			if !errors.Is(err, embedder.ErrUnauthorized) {
				t.Fatalf("Embed() = %v, want a 401", err)
			}
			msg := err.Error()
			if part := testenv.SecretRun(msg, key); part != "" {
				t.Errorf("the error shows %q of the key: %s", part, msg)
			}
			if rest := strings.ReplaceAll(msg, "[redacted]", ""); strings.Contains(rest, "[r") {
				t.Errorf("the error shows a piece of the [redacted] marker: %s", msg)
			}
			if !strings.Contains(msg, "xxxxxxxx") || !strings.Contains(msg, "...") {
				t.Errorf("the error lost the provider's message or its cut: %s", msg)
			}
		})
	}
}

// TestMalformedKeyNamesVariable sets the key variable to a key holding a
// character no HTTP header can carry, and checks that NewOpenAI and
// NewAzureOpenAI refuse it at once with a configuration error (exit 2)
// that names the variable and the character, never shows the key and
// sends nothing; white space around a key is dropped, not refused.
func TestMalformedKeyNamesVariable(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		value    string // the variable's value
		problem  string // what the error must say; "" when the key is accepted
	}{
		{"line break", "openai", testKey[:10] + "\n" + testKey[10:], "a line break"},
		{"carriage return", "azure-openai", testKey[:4] + "\r" + testKey[4:], "a carriage return"},
		{"DEL at the end", "openai", testKey + "\x7f", "a DEL character (0x7F) at byte 27 of 27"},
		{"tab inside", "azure-openai", testKey[:12] + "\t" + testKey[12:], "a tab"},
		{"other control character", "openai", testKey[:3] + "\x01" + testKey[3:], "a control character (0x01)"},
		{"CRLF and spaces around", "openai", "  " + testKey + "\r\n", ""},
		{"tab around", "azure-openai", "\t" + testKey + " ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{Key: testKey, Deployment: "emb", Dimensions: 16})
			env := "SLUICE_TEST_BAD_KEY"
			if tt.provider == "azure-openai" {
				env = "SLUICE_TEST_BAD_AZURE_KEY"
			}
			t.Setenv(env, tt.value)
			cfg := embedder.Config{Provider: tt.provider, Dimensions: 16, APIKeyEnv: env}
			if tt.provider == "openai" {
				cfg.BaseURL, cfg.Model = url+"/v1", "test-model"
			} else {
				cfg.Endpoint, cfg.Deployment = url, "emb"
			}
			e, err := embedder.New(context.Background(), cfg, embedder.WithHTTPClient(testHTTPClient(t)))
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("New() = %v, want the key accepted without the white space around it", err)
				}
				if _, err := e.Embed(context.Background(), texts(1)); err != nil {
					t.Fatalf("Embed() = %v, want the trimmed key accepted by the server", err)
				}
				return
			}
			var ik *embedder.InvalidKeyError
			if !errors.As(err, &ik) || !errors.Is(err, embedder.ErrConfig) {
				t.Fatalf("New() = %v, want an *InvalidKeyError (ErrConfig)", err)
			}
			msg := err.Error()
			for _, want := range []string{env, tt.problem} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Count(msg, "a control character") > 1 || !strings.Contains(msg, "no key") {
				t.Errorf("error %q names the kind of character twice, or does not say that no key holds one", msg)
			}
			if strings.Contains(msg, "Authorization") || strings.Contains(msg, "header field") {
				t.Errorf("error %q names the header, not the variable", msg)
			}
			if part := testenv.SecretRun(msg, testKey); part != "" {
				t.Errorf("the error shows %q of the key: %s", part, msg)
			}
			if n := srv.Stats().Requests; n != 0 {
				t.Errorf("%d requests sent with a malformed key", n)
			}
		})
	}
}

// TestTokensPerMinuteCapNamed checks that an input refused because it is
// above a tokensPerMinute budget smaller than maxTokensPerInput names
// embedder.tokensPerMinute, not maxTokensPerInput (which the user did not
// set), while an input above maxTokensPerInput still names that.
func TestTokensPerMinuteCapNamed(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*embedder.Config)
		tokens  int
		setting string // the setting the error must name
		other   string // the setting it must not name
	}{
		{"tokensPerMinute below one input", func(c *embedder.Config) { c.TokensPerMinute = 10 }, 17,
			"embedder.tokensPerMinute", "maxTokensPerInput"},
		{"maxTokensPerInput below tokensPerMinute", func(c *embedder.Config) { c.TokensPerMinute, c.MaxTokensPerInput = 100, 10 }, 17,
			"embedder.maxTokensPerInput", "tokensPerMinute"},
		{"maxTokensPerInput alone", func(c *embedder.Config) { c.MaxTokensPerInput = 10 }, 17,
			"embedder.maxTokensPerInput", "tokensPerMinute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, embedtest.Options{}, tt.edit)
			_, err := c.Embed(context.Background(), []embedder.Input{{Text: "a long chunk", Tokens: tt.tokens}})
			var tl *embedder.InputTooLargeError
			if !errors.As(err, &tl) || !errors.Is(err, embedder.ErrInputTooLarge) {
				t.Fatalf("Embed() = %v, want an *InputTooLargeError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.setting) || strings.Contains(msg, tt.other) {
				t.Errorf("error %q should name %s and not %s", msg, tt.setting, tt.other)
			}
			if tt.setting == "embedder.tokensPerMinute" && !strings.Contains(msg, "can never fit a budget of 10 tokens per minute") {
				t.Errorf("error %q does not say why the input cannot be sent", msg)
			}
			if n := srv.Stats().Requests; n != 0 {
				t.Errorf("%d requests sent for an input that can never be sent", n)
			}
		})
	}
}

// TestCheckChunkSize checks the up-front check of splitter.chunkSize
// against the per-input cap: embedder.maxTokensPerInput, or a smaller
// embedder.tokensPerMinute budget.
func TestCheckChunkSize(t *testing.T) {
	openai := embedder.Config{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:1/v1"}
	with := func(edit func(*embedder.Config)) embedder.Config {
		c := openai
		edit(&c)
		return c
	}
	tests := []struct {
		name      string
		cfg       embedder.Config
		chunkSize int
		setting   string // the setting the error names; "" for no error
	}{
		{"hash takes any size", embedder.Config{TokensPerMinute: 10}, 100_000, ""},
		{"instant takes any size", embedder.Config{Provider: "instant", MaxTokensPerInput: 5}, 100, ""},
		{"default cap fits", openai, 8192, ""},
		{"above the default cap", openai, 8193, "embedder.maxTokensPerInput"},
		{"zero chunk size", with(func(c *embedder.Config) { c.TokensPerMinute = 10 }), 0, ""},
		{"tokensPerMinute below the chunk", with(func(c *embedder.Config) { c.TokensPerMinute = 10 }), 512, "embedder.tokensPerMinute"},
		{"tokensPerMinute equal to the chunk", with(func(c *embedder.Config) { c.TokensPerMinute = 512 }), 512, ""},
		{"tokensPerMinute above the chunk", with(func(c *embedder.Config) { c.TokensPerMinute = 600 }), 512, ""},
		{"maxTokensPerInput below tokensPerMinute", with(func(c *embedder.Config) { c.TokensPerMinute, c.MaxTokensPerInput = 100_000, 256 }), 512, "embedder.maxTokensPerInput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.CheckChunkSize(tt.chunkSize)
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("CheckChunkSize(%d) = %v, want nil", tt.chunkSize, err)
				}
				return
			}
			var ce *embedder.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, embedder.ErrConfig) || ce.Field != "splitter.chunkSize" {
				t.Fatalf("CheckChunkSize(%d) = %v, want a *ConfigError for splitter.chunkSize", tt.chunkSize, err)
			}
			if !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("CheckChunkSize(%d) = %q, want it to name %s", tt.chunkSize, err, tt.setting)
			}
		})
	}
}

// TestEntraTokenRedacted quotes the Microsoft Entra token a request sent in
// the provider's 401 message and checks that the error does not show it.
func TestEntraTokenRedacted(t *testing.T) {
	const token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-token-body"
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"401","message":"Token ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + ` is expired"}}`))
	}))
	t.Cleanup(srv.Close)
	cfg := embedder.Config{Provider: "azure-openai", Endpoint: srv.URL, Deployment: "emb", Dimensions: 16, Auth: "defaultAzureCredential", MaxRetries: -1}
	c, err := embedder.NewAzureOpenAI(context.Background(), cfg, embedder.WithHTTPClient(testHTTPClient(t)), embedder.WithTokenCredential(fakeCredential{token}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), texts(1))
	if !errors.Is(err, embedder.ErrUnauthorized) || calls.Load() == 0 {
		t.Fatalf("Embed() = %v, want a 401", err)
	}
	if part := testenv.SecretRun(err.Error(), token); part != "" || !strings.Contains(err.Error(), "Token [redacted] is expired") {
		t.Errorf("error %q shows %q of the token, or lost the provider's message", err, part)
	}
}
