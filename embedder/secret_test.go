package embedder_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
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
			hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			t.Cleanup(hc.CloseIdleConnections)
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
