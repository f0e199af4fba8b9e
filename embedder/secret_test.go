package embedder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// TestClientNeverPrintsKey prints and logs Clients of every provider and
// auth mode in every way a program might, and checks that neither the API
// key nor an Entra token (here testKey) appears, while the description still
// says which client it is.
func TestClientNeverPrintsKey(t *testing.T) {
	t.Setenv("SLUICE_TEST_KEY", testKey)
	_, url := embedtest.Start(t, embedtest.Options{Key: testKey, Dimensions: 16})
	azure := embedder.Config{Provider: "azure-openai", Endpoint: url, Deployment: "emb", Dimensions: 16}
	tests := []struct {
		name string
		new  func(...embedder.Option) (*embedder.Client, error)
		want []string // what the description shows
	}{
		{"openai api key", func(opts ...embedder.Option) (*embedder.Client, error) {
			return embedder.NewOpenAI(embedder.Config{BaseURL: url + "/v1", Model: "m", Dimensions: 16, APIKeyEnv: "SLUICE_TEST_KEY"}, opts...)
		}, []string{"openai", url + "/v1/embeddings", "m", "16", "apiKey", "SLUICE_TEST_KEY"}},
		{"azure api key", func(opts ...embedder.Option) (*embedder.Client, error) {
			cfg := azure
			cfg.APIKeyEnv = "SLUICE_TEST_KEY"
			return embedder.NewAzureOpenAI(context.Background(), cfg, opts...)
		}, []string{"azure-openai", "emb", "SLUICE_TEST_KEY"}},
		{"azure entra", func(opts ...embedder.Option) (*embedder.Client, error) {
			cfg := azure
			cfg.Auth = "defaultAzureCredential"
			return embedder.NewAzureOpenAI(context.Background(), cfg, append(opts, embedder.WithTokenCredential(fakeCredential{testKey}))...)
		}, []string{"azure-openai", "emb", "defaultAzureCredential"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := testHTTPClient(t)
			c, err := tt.new(embedder.WithHTTPClient(hc))
			if err != nil {
				t.Fatal(err)
			}
			// The client must still authenticate: the key is hidden, not lost.
			if _, err := c.Embed(context.Background(), embedder.Texts("hello")); err != nil {
				t.Fatalf("Embed() = %v", err)
			}
			outputs := map[string]string{}
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
				outputs[verb] = fmt.Sprintf(verb, c)
				outputs[verb+" in a struct"] = fmt.Sprintf(verb, struct{ Embedder *embedder.Client }{c})
				outputs[verb+" as an Embedder in a slice"] = fmt.Sprintf(verb, []embedder.Embedder{c})
				outputs[verb+" in an unexported field"] = fmt.Sprintf(verb, struct{ e *embedder.Client }{c})
				// A copy of the Client value has no methods: fmt walks its
				// fields, and must still not reach a credential.
				outputs[verb+" of a copied value"] = fmt.Sprintf(verb, reflect.ValueOf(c).Elem().Interface())
			}
			var text, js bytes.Buffer
			slog.New(slog.NewTextHandler(&text, nil)).Info("embedding", slog.Any("embedder", c), "value", c)
			slog.New(slog.NewJSONHandler(&js, nil)).Info("embedding", slog.Any("embedder", c), "value", c)
			outputs["slog text"], outputs["slog JSON"] = text.String(), js.String()
			for name, out := range outputs {
				if strings.Contains(out, testKey) {
					t.Errorf("%s shows the key: %s", name, out)
				}
			}
			for _, name := range []string{"%v", "%+v", "%#v", "slog text", "slog JSON"} {
				for _, w := range tt.want {
					if !strings.Contains(outputs[name], w) {
						t.Errorf("%s = %s, want it to show %q", name, outputs[name], w)
					}
				}
			}
		})
	}
}

// TestProviderMessageRedacted sends a key the server refuses, with the
// server quoting it in its 401 message (masked as OpenAI did, or in full as
// some OpenAI-compatible servers do), and checks that neither the error nor
// the debug log shows the key or any 8 characters of it in a row: the
// provider's message is kept, with the key replaced by "[redacted]".
func TestProviderMessageRedacted(t *testing.T) {
	const (
		skKey    = "sk-proj-Zq8TfR2mLx9VbN4kWp7sYc3H" // OpenAI-shaped
		plainKey = "vllm-local-5d41402abc4b2a76e9"    // an OpenAI-compatible server's own key
		azureKey = "3f9a1c7e5b2d48f6a0c9e1b7d4f2a8c6" // Azure OpenAI-shaped
	)
	tests := []struct {
		name     string
		provider string
		key      string // the Client's key, which the server refuses
		echo     embedtest.KeyEcho
		says     string // the provider's own words, still shown
		redacted bool   // the quoted key must show as [redacted]
	}{
		{"openai masked", "openai", skKey, embedtest.EchoMasked, "Incorrect API key provided:", true},
		{"openai full", "openai", skKey, embedtest.EchoFull, "Incorrect API key provided:", true},
		{"openai-compatible full, any key", "openai", plainKey, embedtest.EchoFull, "Incorrect API key provided:", true},
		{"azure api-key full", "azure-openai", azureKey, embedtest.EchoFull, "invalid subscription key", true},
		// The mask shows 9 of the key's 32 characters, never 8 in a row,
		// and is not OpenAI-shaped: it stays as the provider wrote it.
		{"azure api-key masked", "azure-openai", azureKey, embedtest.EchoMasked, "invalid subscription key 3f9a1c***...8c6", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SLUICE_TEST_REFUSED_KEY", tt.key)
			srv, url := embedtest.Start(t, embedtest.Options{Key: "the-key-the-server-wants", Deployment: "emb", Dimensions: 16, EchoKey: tt.echo})
			hc := testHTTPClient(t)
			var log bytes.Buffer
			opts := []embedder.Option{
				embedder.WithHTTPClient(hc),
				embedder.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			}
			cfg := embedder.Config{Provider: tt.provider, Dimensions: 16, APIKeyEnv: "SLUICE_TEST_REFUSED_KEY"}
			var c *embedder.Client
			var err error
			if tt.provider == "openai" {
				cfg.BaseURL, cfg.Model = url+"/v1", "test-model"
				c, err = embedder.NewOpenAI(cfg, opts...)
			} else {
				cfg.Endpoint, cfg.Deployment = url, "emb"
				c, err = embedder.NewAzureOpenAI(context.Background(), cfg, opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Embed(context.Background(), texts(2))
			if !errors.Is(err, embedder.ErrUnauthorized) || srv.Stats().Unauthorized != 1 {
				t.Fatalf("Embed() = %v (server %+v), want one 401", err, srv.Stats())
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.says) {
				t.Errorf("error %q does not carry the provider's message %q", msg, tt.says)
			}
			if tt.redacted && !strings.Contains(msg, tt.says+" [redacted]") {
				t.Errorf("error %q does not show the quoted key as [redacted]", msg)
			}
			if !strings.Contains(log.String(), "status=401") {
				t.Errorf("the debug log lacks the request:\n%s", log.String())
			}
			for name, out := range map[string]string{"error": msg, "debug log": log.String()} {
				for i := 0; i+8 <= len(tt.key); i++ {
					if part := tt.key[i : i+8]; strings.Contains(out, part) {
						t.Errorf("the %s shows %q of the key: %s", name, part, out)
						break
					}
				}
			}
		})
	}
}
