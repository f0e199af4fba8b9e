package cloudsearch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestSemanticConfigurationMissing checks a semantic_hybrid query on an
// index that lacks the configured semantic configuration, which
// ValidateIndex does not check (an index without one serves every other
// mode): the service's refusal becomes a *ConfigError naming
// sink.cloudsearch.semanticConfiguration, with the configurations the index
// has and the service's error, on one line, as its cause, while the other
// modes work.
func TestSemanticConfigurationMissing(t *testing.T) {
	tests := []struct {
		name    string
		created func(*Config) // the settings the index was created with
		reading func(*Config) // the settings of the store that queries it
		want    []string
		hybrid  bool // whether the reading store's hybrid query works
	}{
		{"another name",
			func(c *Config) { c.SemanticConfiguration = "other" },
			func(c *Config) { c.IndexManagement = ValidateIndex },
			[]string{`sink.cloudsearch.semanticConfiguration: is "mySemanticConfig", but index "docs" defines no semantic configuration of that name (it has "other")`,
				"set sink.cloudsearch.semanticConfiguration to one of the index's"}, true},
		{"none",
			func(c *Config) { c.HiddenFieldKeys = []string{"chunk"} },
			func(c *Config) { c.IndexManagement = NoValidation },
			[]string{`sink.cloudsearch.semanticConfiguration: index "docs" has no semantic configuration, which mode semantic_hybrid needs`,
				"use mode hybrid"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrNone(t)})
			creator, err := openStore(t, url, tt.created)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			ctx := context.Background()
			nodes := makeNodes("a.md", 3)
			if _, err := creator.Add(ctx, nodes); err != nil {
				t.Fatal(err)
			}
			s, err := openStore(t, url, tt.reading)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			q := sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[0].Embedding, QueryStr: "rivers", TopK: 2}
			_, err = s.Query(ctx, q)
			var ce *ConfigError
			var se *ServiceError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || !errors.As(err, &se) || se.StatusCode != 400 {
				t.Fatalf("Query = %v, want a *ConfigError wrapping the service's 400", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Query = %q\nwant it to hold %q", err, w)
				}
			}
			// The service's message breaks its line ("\r\nParameter name:"),
			// and its generic advice about the index's fields is not the remedy.
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, "matches the settings") {
				t.Errorf("Query = %q\nwant one line, without the advice about the index's fields", msg)
			}
			q.Mode = sink.Hybrid
			if res, err := s.Query(ctx, q); tt.hybrid && (err != nil || len(res) == 0) {
				t.Errorf("hybrid Query = %v, %v; want results", res, err)
			}
		})
	}
}
