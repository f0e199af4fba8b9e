package cloudsearch

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestStorePrintsNoKey prints a store every way fmt and slog can and
// checks that the admin key never shows, wherever it came from.
func TestStorePrintsNoKey(t *testing.T) {
	const secret = "printed-admin-key-7f3e9a"
	tests := []struct {
		name   string
		mutate func(*Config)
		opts   []Option
	}{
		{"key in the configuration", func(c *Config) { c.Key = secret }, nil},
		{"key in the environment", nil, []Option{WithGetenv(envOf(map[string]string{EnvKey: secret}))}},
		{"key credential", nil, []Option{WithGetenv(envOf(nil)), WithKeyCredential(azcore.NewKeyCredential(secret))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := searchtest.Start(t, searchtest.Options{Key: secret})
			s, err := openStore(t, url, tt.mutate, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{}
			for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
				outputs[verb+" of *Store"] = fmt.Sprintf(verb, s)
				outputs[verb+" of Store"] = fmt.Sprintf(verb, *s)
				outputs[verb+" of a struct holding it"] = fmt.Sprintf(verb, struct{ S *Store }{s})
			}
			for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
				"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
				"JSON": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			} {
				var b bytes.Buffer
				slog.New(h(&b)).Info("opened", "store", s, "value", *s, slog.Any("any", s))
				outputs["slog "+name] = b.String()
			}
			for what, out := range outputs {
				if strings.Contains(out, secret) {
					t.Errorf("%s shows the key: %s", what, out)
				}
			}
			for _, what := range []string{"%v of *Store", "%+v of *Store", "%#v of *Store", "slog text", "slog JSON"} {
				if !strings.Contains(outputs[what], url) || !strings.Contains(outputs[what], "docs") {
					t.Errorf("%s = %s, want the endpoint and index", what, outputs[what])
				}
			}
		})
	}
}
