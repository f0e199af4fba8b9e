package embedder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-dev/sluice/embedder"
)

func TestDefaultConfig(t *testing.T) {
	c := embedder.DefaultConfig()
	if c.Provider != "hash" || c.Dimensions != 1536 || c.BatchSize != 100 || c.Concurrency != 4 ||
		c.MaxRetries != 3 || c.Timeout != 60*time.Second || c.RequestsPerMinute != 0 || c.TokensPerMinute != 0 {
		t.Fatalf("DefaultConfig() = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	if l := c.Limits(); l != (embedder.Limits{MaxInputs: 100}) {
		t.Fatalf("hash limits = %+v, want only MaxInputs 100", l)
	}
}

func TestApplyDefaultsByProvider(t *testing.T) {
	o := embedder.Config{Provider: "openai"}
	o.ApplyDefaults()
	a := embedder.Config{Provider: "azure-openai"}
	a.ApplyDefaults()
	if o.APIKeyEnv != "OPENAI_API_KEY" || o.BaseURL != "https://api.openai.com/v1" || o.Auth != "apiKey" {
		t.Fatalf("openai defaults = %+v", o)
	}
	if a.APIKeyEnv != "AZURE_OPENAI_API_KEY" || a.APIVersion == "" || a.Auth != "apiKey" {
		t.Fatalf("azure-openai defaults = %+v", a)
	}
	if o.MaxInputsPerRequest != 2048 || o.MaxTokensPerRequest != 300000 || o.MaxTokensPerInput != 8192 {
		t.Fatalf("request caps = %d, %d, %d", o.MaxInputsPerRequest, o.MaxTokensPerRequest, o.MaxTokensPerInput)
	}
}

func TestValidate(t *testing.T) {
	openai := func(f func(*embedder.Config)) embedder.Config {
		c := embedder.Config{Provider: "openai", Model: "m"}
		f(&c)
		return c
	}
	azure := func(f func(*embedder.Config)) embedder.Config {
		c := embedder.Config{Provider: "azure-openai", Endpoint: "https://x.openai.azure.com", Deployment: "d"}
		f(&c)
		return c
	}
	tests := []struct {
		name  string
		cfg   embedder.Config
		field string // "" = valid
		not   string // must not appear in the message
	}{
		{"zero value is the default", embedder.Config{}, "", ""},
		{"valid openai", openai(func(*embedder.Config) {}), "", ""},
		{"valid azure", azure(func(*embedder.Config) {}), "", ""},
		{"unknown provider", embedder.Config{Provider: "cohere"}, "embedder.provider", ""},
		{"negative dimensions", embedder.Config{Dimensions: -1}, "embedder.dimensions", ""},
		{"huge dimensions", embedder.Config{Dimensions: 1 << 20}, "embedder.dimensions", ""},
		{"negative batch", embedder.Config{BatchSize: -5}, "embedder.batchSize", ""},
		{"price not a number", embedder.Config{PricePerMillionTokens: math.NaN()}, "embedder.pricePerMillionTokens", ""},
		{"infinite price", embedder.Config{PricePerMillionTokens: math.Inf(1)}, "embedder.pricePerMillionTokens", ""},
		{"a price", embedder.Config{PricePerMillionTokens: 0.02}, "", ""},
		{"negative concurrency", embedder.Config{Concurrency: -1}, "embedder.concurrency", ""},
		{"maxRetries below -1", embedder.Config{MaxRetries: -2}, "embedder.maxRetries", ""},
		{"negative timeout", embedder.Config{Timeout: -time.Second}, "embedder.timeout", ""},
		{"negative rpm", embedder.Config{RequestsPerMinute: -1}, "embedder.requestsPerMinute", ""},
		{"negative tpm", embedder.Config{TokensPerMinute: -1}, "embedder.tokensPerMinute", ""},
		{"batch above cap", openai(func(c *embedder.Config) { c.BatchSize = 5000 }), "embedder.batchSize", ""},
		{"largest local batch", embedder.Config{BatchSize: embedder.MaxBatchSize}, "", ""},
		{"local batch above the maximum", embedder.Config{BatchSize: embedder.MaxBatchSize + 1}, "embedder.batchSize", ""},
		{"local batch of max int", embedder.Config{BatchSize: math.MaxInt}, "embedder.batchSize", ""},
		{"instant batch of 10^12", embedder.Config{Provider: "instant", BatchSize: 1e12}, "embedder.batchSize", ""},
		{"batch of 10^8 under a raised input cap", openai(func(c *embedder.Config) { c.BatchSize, c.MaxInputsPerRequest = 1e8, 1e9 }), "embedder.batchSize", ""},
		{"largest concurrency", embedder.Config{Concurrency: embedder.MaxConcurrency}, "", ""},
		{"concurrency of 10^12", openai(func(c *embedder.Config) { c.Concurrency = 1e12 }), "embedder.concurrency", ""},
		{"input cap above request cap", openai(func(c *embedder.Config) { c.MaxTokensPerRequest = 100 }), "embedder.maxTokensPerInput", ""},
		{"openai without model", embedder.Config{Provider: "openai"}, "embedder.model", ""},
		{"openai bad url", openai(func(c *embedder.Config) { c.BaseURL = "localhost:11434" }), "embedder.baseURL", ""},
		{"openai url with password", openai(func(c *embedder.Config) { c.BaseURL = "https://u:hunter2@h/v1" }), "embedder.baseURL", "hunter2"},
		{"openai url is a pasted key", openai(func(c *embedder.Config) { c.BaseURL = "sk-proj-hunter3abc" }), "embedder.baseURL", "hunter3"},
		{"openai url with a key in its query", openai(func(c *embedder.Config) { c.BaseURL = "https://h.example/v1?api-key=hunter4" }), "embedder.baseURL", "hunter4"},
		{"openai url with a fragment", openai(func(c *embedder.Config) { c.BaseURL = "https://h.example/v1#hunter5" }), "embedder.baseURL", "hunter5"},
		{"azure endpoint is a pasted key", azure(func(c *embedder.Config) { c.Endpoint = "0123456789abcdef0123hunter6" }), "embedder.endpoint", "hunter6"},
		{"azure endpoint with a key in its query", azure(func(c *embedder.Config) { c.Endpoint = "https://r.openai.azure.com?api-key=hunter7" }), "embedder.endpoint", "hunter7"},
		{"openai azure auth", openai(func(c *embedder.Config) { c.Auth = "managedIdentity" }), "embedder.auth", ""},
		{"key pasted into apiKeyEnv", openai(func(c *embedder.Config) { c.APIKeyEnv = "sk-proj-abc123" }), "embedder.apiKeyEnv", "sk-proj-abc123"},
		{"alphanumeric key pasted into apiKeyEnv", openai(func(c *embedder.Config) { c.APIKeyEnv = "a0123456789abcdef0123456789abcdef" }), "embedder.apiKeyEnv", "a0123456789abcdef0123456789abcdef"},
		{"openai no auth", openai(func(c *embedder.Config) { c.Auth = "none" }), "", ""},
		{"azure without endpoint", embedder.Config{Provider: "azure-openai", Deployment: "d"}, "embedder.endpoint", ""},
		{"azure without deployment", azure(func(c *embedder.Config) { c.Deployment = "" }), "embedder.deployment", ""},
		{"azure deployment path", azure(func(c *embedder.Config) { c.Deployment = "a/b" }), "embedder.deployment", ""},
		{"azure auth none", azure(func(c *embedder.Config) { c.Auth = "none" }), "embedder.auth", ""},
		{"azure entra", azure(func(c *embedder.Config) { c.Auth = "defaultAzureCredential" }), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *embedder.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, embedder.ErrConfig) {
				t.Fatalf("Validate() = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field || !strings.HasPrefix(err.Error(), "embedder: "+tt.field+": ") {
				t.Fatalf("Validate() = %q, want it to name %s", err, tt.field)
			}
			if tt.not != "" && strings.Contains(err.Error(), tt.not) {
				t.Fatalf("Validate() = %q echoes the secret %q", err, tt.not)
			}
		})
	}
}

// TestURLSettingShown checks that a URL setting that is not an http(s) URL
// is shown in the message when it reads as an address without its scheme,
// so the slip is plain to see, while one that may be a key is not (see
// TestValidate).
func TestURLSettingShown(t *testing.T) {
	for _, raw := range []string{"localhost:11434", "api.openai.com/v1", "127.0.0.1:8080/v1"} {
		err := embedder.Config{Provider: "openai", Model: "m", BaseURL: raw}.Validate()
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(raw)) {
			t.Errorf("Validate with baseURL %s = %v, want an error showing it", raw, err)
		}
	}
}

// TestAuthSpellings: embedder.auth takes any letter case, underscores, and
// the spellings of sink.cloudsearch.credential and of the SDK's credential
// types, and
// ApplyDefaults spells it canonically; a value that is none of them, or not
// for the provider, is refused with the value as written and what to use.
func TestAuthSpellings(t *testing.T) {
	tests := []struct {
		provider, auth string
		want           string // canonical after ApplyDefaults; "" = Validate refuses it
		msg            string // in Validate's message when refused
	}{
		{"azure-openai", "", "apiKey", ""},
		{"azure-openai", "apiKey", "apiKey", ""},
		{"azure-openai", "apikey", "apiKey", ""},
		{"azure-openai", "APIKEY", "apiKey", ""},
		{"azure-openai", "key", "apiKey", ""},
		{"azure-openai", "Key", "apiKey", ""},
		{"azure-openai", "AzureKeyCredential", "apiKey", ""},
		{"azure-openai", "KeyCredential", "apiKey", ""},
		{"azure-openai", "api_key", "apiKey", ""},
		{"azure-openai", "defaultAzureCredential", "defaultAzureCredential", ""},
		{"azure-openai", "DefaultAzureCredential", "defaultAzureCredential", ""},
		{"azure-openai", "default", "defaultAzureCredential", ""},
		{"azure-openai", "Default", "defaultAzureCredential", ""},
		{"azure-openai", "managedIdentity", "managedIdentity", ""},
		{"azure-openai", "managedidentity", "managedIdentity", ""},
		{"azure-openai", "ManagedIdentity", "managedIdentity", ""},
		{"azure-openai", "ManagedIdentityCredential", "managedIdentity", ""},
		{"azure-openai", "managedIdentityCredential", "managedIdentity", ""},
		{"azure-openai", "managed_identity", "managedIdentity", ""},
		{"azure-openai", "DEFAULT_AZURE_CREDENTIAL", "defaultAzureCredential", ""},
		{"azure-openai", "none", "", `"none" is not valid for provider azure-openai; use apiKey (or key), defaultAzureCredential (or default) or managedIdentity`},
		{"azure-openai", "managed-identity", "", `"managed-identity" is not valid for provider azure-openai`},
		{"azure-openai", "entra", "", `"entra" is not valid for provider azure-openai`},
		{"openai", "", "apiKey", ""},
		{"openai", "KEY", "apiKey", ""},
		{"openai", "AzureKeyCredential", "apiKey", ""},
		{"openai", "None", "none", ""},
		{"openai", "NONE", "none", ""},
		{"openai", "DefaultAzureCredential", "", `"DefaultAzureCredential" is not valid for provider openai (Microsoft Entra credentials are for provider azure-openai); use apiKey or none`},
		{"openai", "managedidentity", "", `"managedidentity" is not valid for provider openai (Microsoft Entra`},
		{"openai", "bearer", "", `"bearer" is not valid for provider openai; use apiKey (or key) or none`},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.auth, func(t *testing.T) {
			cfg := embedder.Config{Provider: tt.provider, Model: "m", Endpoint: "https://x.openai.azure.com", Deployment: "d", Auth: tt.auth}
			err := cfg.Validate()
			if tt.want == "" {
				var ce *embedder.ConfigError
				if !errors.As(err, &ce) || ce.Field != "embedder.auth" || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("Validate() = %v, want embedder.auth refused with %q", err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			cfg.ApplyDefaults()
			if cfg.Auth != tt.want {
				t.Fatalf("after ApplyDefaults auth = %q, want %q", cfg.Auth, tt.want)
			}
		})
	}
}

// TestMaxRetriesMessage: the message for a wrong maxRetries says what -1
// and 0 mean.
func TestMaxRetriesMessage(t *testing.T) {
	err := embedder.Config{MaxRetries: -2}.Validate()
	const want = "embedder: embedder.maxRetries: must be at least -1 (-1 means no retries, 0 means the default, 3), got -2"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want %q", err, want)
	}
}

// TestUpperBoundsGiveTheRange: a setting above its maximum names the
// allowed range, for every provider.
func TestUpperBoundsGiveTheRange(t *testing.T) {
	for _, tt := range []struct {
		cfg  embedder.Config
		want string
	}{
		{embedder.Config{BatchSize: math.MaxInt}, fmt.Sprintf("embedder.batchSize: must be between 1 and %d", embedder.MaxBatchSize)},
		{embedder.Config{Provider: "instant", Concurrency: 1e12}, fmt.Sprintf("embedder.concurrency: must be between 1 and %d", embedder.MaxConcurrency)},
	} {
		if err := tt.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestValidateKnownModels checks dimensions and sendDimensions against
// OpenAI's models: OpenAI answers 400 to dimensions for ada-002 and to values
// above a model's size. Unknown models (local servers, an Azure deployment
// whose model is not named) are not checked.
func TestValidateKnownModels(t *testing.T) {
	openai := func(model string, dims int, send bool) embedder.Config {
		return embedder.Config{Provider: "openai", Model: model, Dimensions: dims, SendDimensions: send}
	}
	azure := func(model string, dims int, send bool) embedder.Config {
		return embedder.Config{Provider: "azure-openai", Endpoint: "https://x.openai.azure.com", Deployment: "text-embedding-ada-002",
			Model: model, Dimensions: dims, SendDimensions: send}
	}
	tests := []struct {
		name    string
		cfg     embedder.Config
		field   string   // "" = valid
		mention []string // what the message must say
	}{
		{"3-small shortened", openai("text-embedding-3-small", 256, true), "", nil},
		{"3-small native", openai("text-embedding-3-small", 1536, true), "", nil},
		{"3-large native", openai("text-embedding-3-large", 3072, true), "", nil},
		{"ada-002 native", openai("text-embedding-ada-002", 1536, false), "", nil},
		{"ada-002 default dimensions", openai("text-embedding-ada-002", 0, false), "", nil},
		{"unknown model may send anything", openai("nomic-embed-text", 4096, true), "", nil},
		{"azure model unknown behind the deployment", azure("", 1536, true), "", nil},
		{"ada-002 cannot shorten", openai("text-embedding-ada-002", 1536, true), "embedder.sendDimensions",
			[]string{"text-embedding-ada-002", "sendDimensions: false", "embedder.dimensions", "1536", "text-embedding-3"}},
		{"ada-002 shorter", openai("text-embedding-ada-002", 512, true), "embedder.sendDimensions", []string{"sendDimensions: false"}},
		{"azure ada-002 named", azure("text-embedding-ada-002", 1536, true), "embedder.sendDimensions", []string{"sendDimensions: false"}},
		{"3-small above its size", openai("text-embedding-3-small", 3072, true), "embedder.dimensions",
			[]string{"3072", "1536", "text-embedding-3-small", "embedder.dimensions", "to 1536", "text-embedding-3-large"}},
		{"3-small above its size, not sent", openai("text-embedding-3-small", 2048, false), "embedder.dimensions",
			[]string{"to 1536 (with the Cloud AI Search sink, sink.cloudsearch.embeddingDimensionality too)"}},
		{"3-large above its size", openai("text-embedding-3-large", 4096, true), "embedder.dimensions", []string{"4096", "to 3072"}},
		{"ada-002 above its size", openai("text-embedding-ada-002", 3072, false), "embedder.dimensions", []string{"to 1536"}},
		{"azure 3-small above its size", azure("text-embedding-3-small", 3072, true), "embedder.dimensions", []string{"to 1536"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *embedder.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, embedder.ErrConfig) || ce.Field != tt.field {
				t.Fatalf("Validate() = %v, want a *ConfigError for %s", err, tt.field)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Validate() = %q does not say %q", err, m)
				}
			}
		})
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name string
		cfg  embedder.Config
		want embedder.Limits
	}{
		{"hash", embedder.Config{BatchSize: 32}, embedder.Limits{MaxInputs: 32}},
		{"instant", embedder.Config{Provider: "instant", BatchSize: 4096}, embedder.Limits{MaxInputs: 4096}},
		{"openai defaults", embedder.Config{Provider: "openai"}, embedder.Limits{MaxInputs: 100, MaxTokens: 300000, MaxInputTokens: 8192}},
		{"custom caps", embedder.Config{Provider: "openai", BatchSize: 500, MaxInputsPerRequest: 256, MaxTokensPerRequest: 9000, MaxTokensPerInput: 512},
			embedder.Limits{MaxInputs: 256, MaxTokens: 9000, MaxInputTokens: 512}},
		// A request carries 90% of a second's share, rounded down:
		// floor(tpm*9/600).
		{"90% of one second of a large TPM", embedder.Config{Provider: "openai", TokensPerMinute: 6_000_000}, embedder.Limits{MaxInputs: 100, MaxTokens: 90000, MaxInputTokens: 8192}},
		{"TPM not a multiple of 60 rounds down", embedder.Config{Provider: "openai", TokensPerMinute: 1_000_000}, embedder.Limits{MaxInputs: 100, MaxTokens: 15000, MaxInputTokens: 8192}},
		{"floor of tpm*9/600, not of 90% of tpm/60", embedder.Config{Provider: "openai", TokensPerMinute: 1_000_070}, embedder.Limits{MaxInputs: 100, MaxTokens: 15001, MaxInputTokens: 8192}},
		{"small TPM keeps one full input", embedder.Config{Provider: "openai", TokensPerMinute: 60_000}, embedder.Limits{MaxInputs: 100, MaxTokens: 8192, MaxInputTokens: 8192}},
		{"TPM below one input", embedder.Config{Provider: "azure-openai", TokensPerMinute: 1000}, embedder.Limits{MaxInputs: 100, MaxTokens: 1000, MaxInputTokens: 1000}},
		// With RPM, 90% of a request's share, floor(tpm*9/10/rpm), if larger.
		{"few requests carry more", embedder.Config{Provider: "openai", TokensPerMinute: 1_200_000, RequestsPerMinute: 10}, embedder.Limits{MaxInputs: 100, MaxTokens: 108000, MaxInputTokens: 8192}},
		{"a request's share rounds down", embedder.Config{Provider: "openai", TokensPerMinute: 1_000_003, RequestsPerMinute: 7}, embedder.Limits{MaxInputs: 100, MaxTokens: 128571, MaxInputTokens: 8192}},
		{"many requests: a second's share", embedder.Config{Provider: "openai", TokensPerMinute: 600_000, RequestsPerMinute: 600}, embedder.Limits{MaxInputs: 100, MaxTokens: 9000, MaxInputTokens: 8192}},
		{"a request's share capped by maxTokensPerRequest", embedder.Config{Provider: "openai", TokensPerMinute: 60_000_000, RequestsPerMinute: 60}, embedder.Limits{MaxInputs: 100, MaxTokens: 300000, MaxInputTokens: 8192}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.Limits(); got != tt.want {
				t.Fatalf("Limits() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The example configs must exist, decode strictly into Config and
// validate.
func TestExampleConfigs(t *testing.T) {
	for _, name := range []string{"openai.yaml", "azure-openai.yaml", "local.yaml"} {
		t.Run(name, func(t *testing.T) {
			// A missing file fails: the examples are documented, so a
			// renamed or deleted one must be noticed.
			raw, err := os.ReadFile(filepath.Join("..", "configs", name))
			if err != nil {
				t.Fatal(err)
			}
			var file struct {
				Embedder embedder.Config `yaml:"embedder"`
			}
			var doc map[string]yaml.Node
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			section := doc["embedder"]
			var buf bytes.Buffer
			if err := yaml.NewEncoder(&buf).Encode(map[string]*yaml.Node{"embedder": &section}); err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(&buf)
			dec.KnownFields(true)
			if err := dec.Decode(&file); err != nil {
				t.Fatalf("embedder section does not match Config: %v", err)
			}
			if err := file.Embedder.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if file.Embedder.Timeout != 60*time.Second && file.Embedder.Timeout != 0 {
				t.Fatalf("timeout decoded as %v", file.Embedder.Timeout)
			}
		})
	}
}

func TestNewMissingKey(t *testing.T) {
	t.Setenv("SLUICE_TEST_UNSET_KEY", "")
	tests := []embedder.Config{
		{Provider: "openai", Model: "m", APIKeyEnv: "SLUICE_TEST_UNSET_KEY"},
		{Provider: "azure-openai", Endpoint: "https://x.openai.azure.com", Deployment: "d", APIKeyEnv: "SLUICE_TEST_UNSET_KEY"},
	}
	for _, cfg := range tests {
		t.Run(cfg.Provider, func(t *testing.T) {
			_, err := embedder.New(context.Background(), cfg)
			var mk *embedder.MissingKeyError
			if !errors.As(err, &mk) || mk.Env != "SLUICE_TEST_UNSET_KEY" || !errors.Is(err, embedder.ErrMissingKey) {
				t.Fatalf("New() = %v, want a *MissingKeyError for SLUICE_TEST_UNSET_KEY", err)
			}
			if !strings.Contains(err.Error(), "SLUICE_TEST_UNSET_KEY") || !strings.Contains(err.Error(), "embedder.apiKeyEnv") {
				t.Fatalf("message %q must name the variable and the setting", err)
			}
		})
	}
}

func TestNewHashProvider(t *testing.T) {
	e, err := embedder.New(context.Background(), embedder.Config{Dimensions: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*embedder.Hash); !ok || e.Dimensions() != 8 {
		t.Fatalf("New(hash) = %T with %d dimensions", e, e.Dimensions())
	}
	if _, err := embedder.New(context.Background(), embedder.Config{Provider: "nope"}); !errors.Is(err, embedder.ErrConfig) {
		t.Fatalf("New(bad provider) = %v, want ErrConfig", err)
	}
}

// TestAuthKeyNotShown: a key pasted into embedder.auth instead of its
// variable is refused without being repeated.
func TestAuthKeyNotShown(t *testing.T) {
	const key = "sk-proj-0123456789abcdefghijklmnopqrstuv"
	for _, provider := range []string{embedder.ProviderOpenAI, embedder.ProviderAzureOpenAI} {
		c := embedder.DefaultConfig()
		c.Provider, c.Model, c.Endpoint, c.Deployment, c.Auth = provider, "text-embedding-3-small", "https://x.openai.azure.com", "emb", key
		err := c.Validate()
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "embedder.auth") {
			t.Errorf("%s: Validate = %v; want an embedder.auth error that does not show the key", provider, err)
		}
	}
}
