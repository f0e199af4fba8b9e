package cloudsearch

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// postIndex sends def to POST /indexes of the test server and returns the
// status and body of the answer.
func postIndex(t *testing.T, url string, def IndexDefinition) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	return postIndexJSON(t, url, body)
}

// postIndexJSON creates an index from its JSON definition, as another
// client (LlamaIndex, say) would, and returns the status and answer.
func postIndexJSON(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	return postJSON(t, url, "/indexes", body)
}

// TestIndexNameRulesAgree checks Config.Validate and the test server on
// the same names: both accept or both refuse, and Validate names the
// setting and the rule.
func TestIndexNameRulesAgree(t *testing.T) {
	_, url := startRulesServer(t)
	tests := []struct {
		name  string
		valid bool
	}{
		{"ab", true},
		{"a1", true},
		{"42", true},
		{"a-b-c", true},
		{strings.Repeat("x", 128), true},
		{"a", false},
		{"7", false},
		{strings.Repeat("x", 129), false},
		{"-ab", false},
		{"ab-", false},
		{"a--b", false},
		{"Docs", false},
		{"a_b", false},
		{"a.b", false},
		{"ü1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.IndexName = tt.name
			err := c.Validate()
			st, body := postIndex(t, url, c.Definition())
			if tt.valid {
				if err != nil || st != http.StatusCreated {
					t.Fatalf("Validate = %v, server answered %d %s; want both to accept", err, st, body)
				}
				return
			}
			if st != http.StatusBadRequest || !strings.Contains(string(body), azspec.IndexNameRule) {
				t.Errorf("server answered %d %s, want 400 stating the rule", st, body)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != settingPrefix+"indexName" {
				t.Fatalf("Validate = %v, want a *ConfigError on indexName", err)
			}
			for _, w := range []string{`"` + tt.name + `"`, "2 to 128 characters", "consecutive dashes"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestLanguageAnalyzerSetting checks the accepted spellings of
// languageAnalyzer, their wire value, and the error for anything else.
func TestLanguageAnalyzerSetting(t *testing.T) {
	tests := []struct {
		in   string
		want string // wire value; "" with ok false means refused
		ok   bool
	}{
		{"", "", true},
		{"en.lucene", "en.lucene", true},
		{"EnLucene", "en.lucene", true}, // the seed's example value
		{"StandardLucene", "standard.lucene", true},
		{"standard.lucene", "standard.lucene", true},
		{"FrMicrosoft", "fr.microsoft", true},
		{"ZhHantLucene", "zh-Hant.lucene", true},
		{"PtBRLucene", "pt-BR.lucene", true},
		{"Keyword", "keyword", true},
		{"whitespace", "whitespace", true},
		{"english", "", false},
		{"en-lucene", "", false},
		{"EnLucen", "", false},
		{"my_custom_analyzer", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := DefaultConfig()
			c.IndexName = "docs"
			c.LanguageAnalyzer = tt.in
			err := c.Validate()
			if !tt.ok {
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Setting != settingPrefix+"languageAnalyzer" || !errors.Is(err, ErrConfig) {
					t.Fatalf("Validate = %v, want a *ConfigError on languageAnalyzer", err)
				}
				for _, w := range []string{`"` + tt.in + `"`, "en.lucene", "EnLucene", "standard.lucene"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if got := c.normalize().LanguageAnalyzer; got != tt.want {
				t.Errorf("normalized to %q, want %q", got, tt.want)
			}
			var chunk Field
			for _, f := range c.Definition().Fields {
				if f.Name == "chunk" {
					chunk = f
				}
			}
			if chunk.Analyzer != tt.want {
				t.Errorf("Definition's chunk analyzer = %q, want %q", chunk.Analyzer, tt.want)
			}
		})
	}
}

// TestLanguageAnalyzerSentAsWireValue creates the index with the seed's
// spelling EnLucene: the server (which refuses anything but the REST
// names) receives en.lucene, and the index then validates.
func TestLanguageAnalyzerSentAsWireValue(t *testing.T) {
	for _, spelling := range []string{"EnLucene", "en.lucene", "EN.LUCENE"} {
		t.Run(spelling, func(t *testing.T) {
			srv, url := startRulesServer(t)
			s, err := openStore(t, url, func(c *Config) { c.LanguageAnalyzer = spelling })
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := srv.Index("docs")
			var def IndexDefinition
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			for _, f := range def.Fields {
				if f.Name == "chunk" && f.Analyzer != "en.lucene" {
					t.Errorf("chunk analyzer = %q, want en.lucene", f.Analyzer)
				}
			}
			if err := s.ValidateIndex(context.Background()); err != nil {
				t.Errorf("ValidateIndex: %v", err)
			}
			assertNoClientErrors(t, srv)
		})
	}
}

// TestVectorDimensionsAgree checks Config.Validate and the test server,
// validating against the official definitions, on the same dimensions:
// both take 2 to 4096 (the service's documented range, past the 2048 of
// the 2024-07-01 swagger) and both refuse anything else.
func TestVectorDimensionsAgree(t *testing.T) {
	_, url := searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrSkip(t)})
	for _, dims := range []int{1, 2, 1536, 2048, 2049, 3072, 4096, 4097} {
		t.Run(strconv.Itoa(dims), func(t *testing.T) {
			c := DefaultConfig()
			c.IndexName = "dims-" + strconv.Itoa(dims)
			c.EmbeddingDimensionality = dims
			err := c.Validate()
			st, body := postIndex(t, url, c.Definition())
			if dims >= 2 && dims <= 4096 {
				if err != nil || st != http.StatusCreated {
					t.Fatalf("Validate = %v, server answered %d %.300s; want both to accept", err, st, body)
				}
				return
			}
			if st != http.StatusBadRequest {
				t.Errorf("server answered %d %.300s, want 400", st, body)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != settingPrefix+"embeddingDimensionality" || !strings.Contains(err.Error(), "2 to 4096") {
				t.Errorf("Validate = %v, want a *ConfigError on embeddingDimensionality giving 2 to 4096", err)
			}
		})
	}
}

// TestDimensions3072 creates, fills and queries an index of 3072
// dimensions (text-embedding-3-large's) on the test server validating
// request bodies against the official definitions.
func TestDimensions3072(t *testing.T) {
	const dims = 3072
	s, srv := startStore(t, searchtest.Options{SpecDir: specOrSkip(t)}, func(c *Config) { c.EmbeddingDimensionality = dims })
	ctx := context.Background()
	nodes := makeNodes("large.md", 3)
	for i := range nodes {
		nodes[i].Embedding = make([]float32, dims)
		nodes[i].Embedding[i] = 1
	}
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	res, err := s.Query(ctx, sink.Query{Embedding: nodes[1].Embedding, TopK: 1})
	if err != nil || len(res) != 1 || res[0].ID != nodes[1].ID {
		t.Fatalf("Query = %v, %v; want node 1", res, err)
	}
	if err := s.ValidateIndex(ctx); err != nil {
		t.Errorf("ValidateIndex: %v", err)
	}
	assertNoClientErrors(t, srv)
}
