package embedder

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/internal/azcred"
	"github.com/sluice-dev/sluice/internal/credential"
)

// Provider names, the values of embedder.provider.
const (
	ProviderHash        = "hash"
	ProviderInstant     = "instant"
	ProviderOpenAI      = "openai"
	ProviderAzureOpenAI = "azure-openai"
)

// Authentication modes, the canonical values of embedder.auth. The setting
// also takes other spellings (see Config.Auth); ApplyDefaults rewrites them
// to these.
const (
	// AuthAPIKey sends the key read from the apiKeyEnv variable (default).
	AuthAPIKey = "apiKey"
	// AuthNone sends no key (openai only: Ollama, vLLM, LM Studio, TEI).
	AuthNone = "none"
	// AuthDefaultAzureCredential uses azidentity's DefaultAzureCredential
	// (azure-openai only).
	AuthDefaultAzureCredential = "defaultAzureCredential"
	// AuthManagedIdentity uses a managed identity (azure-openai only):
	// user-assigned when managedIdentityClientId or, failing that, the
	// AZURE_CLIENT_ID variable holds a client id, else system-assigned.
	AuthManagedIdentity = "managedIdentity"
)

// EnvAzureClientID is the environment variable that, when
// managedIdentityClientId is empty, holds the client id of the user-assigned
// managed identity of auth managedIdentity. It is the variable azidentity
// reads, and the default of sink.cloudsearch.managedIdentityClientIdEnv, so
// that the embedder and the search service authenticate as one identity.
const EnvAzureClientID = "AZURE_CLIENT_ID"

// parseAuth returns the canonical spelling of an embedder.auth value, or
// false if s is none of them: none, or a credential's name as
// sink.cloudsearch.credential takes it (azcred.Parse: apiKey, key,
// AzureKeyCredential; defaultAzureCredential, default; managedIdentity,
// ManagedIdentityCredential; in any letter case, with or without
// underscores). "" stays "" (the provider's default).
func parseAuth(s string) (string, bool) {
	if s == "" || strings.EqualFold(s, AuthNone) {
		return strings.ToLower(s), true
	}
	switch kind, _ := azcred.Parse(s); kind {
	case azcred.Key:
		return AuthAPIKey, true
	case azcred.Default:
		return AuthDefaultAzureCredential, true
	case azcred.ManagedIdentity:
		return AuthManagedIdentity, true
	}
	return "", false
}

// Defaults of the settings in Config.
//
// DefaultMaxTokensPerInput is 8192, the per-input cap of OpenAI's API
// reference for embeddings ("The input must not exceed the max input tokens
// for the model (8192 tokens for all embedding models)"), which the API
// enforces ("This model's maximum context length is 8192 tokens"). 8191, in
// older guides and cookbook notebooks, was one token too strict.
// DefaultMaxTokensPerRequest is the 300,000 tokens the same reference allows
// summed over the inputs of one request.
const (
	DefaultBatchSize           = 100
	DefaultConcurrency         = 4
	DefaultMaxRetries          = 3
	DefaultTimeout             = 60 * time.Second
	DefaultMaxInputsPerRequest = 2048
	DefaultMaxTokensPerRequest = 300_000
	DefaultMaxTokensPerInput   = 8192
	DefaultMaxRetryAfter       = 60 * time.Second
	DefaultRetryInitialDelay   = 500 * time.Millisecond
	DefaultRetryMaxDelay       = 30 * time.Second
	DefaultOpenAIBaseURL       = "https://api.openai.com/v1"
	DefaultAzureAPIVersion     = "2024-10-21"
	DefaultOpenAIKeyEnv        = "OPENAI_API_KEY"
	DefaultAzureKeyEnv         = "AZURE_OPENAI_API_KEY"
)

// Upper bounds of Config, which Validate enforces for every provider.
//
// MaxBatchSize is four times the 2048 inputs OpenAI accepts in one request
// (the HTTP providers are also held to maxInputsPerRequest). A batch's
// texts and vectors are held in memory until it is written (8192 vectors of
// 1536 dimensions take 48 MiB, per request in flight), and beyond a few
// hundred inputs larger batches gain no throughput (see `sluice bench`).
//
// MaxConcurrency bounds the requests in flight; each holds a batch in
// memory, and no embedding quota rewards more.
const (
	MaxBatchSize   = 8192
	MaxConcurrency = 256
)

// Config is the embedder section of the Sluice configuration. A zero field
// means its default; ApplyDefaults fills them in.
type Config struct {
	// Provider selects the embedder: hash (default, local and offline),
	// openai (any OpenAI-compatible /v1/embeddings endpoint), azure-openai,
	// or instant (one constant vector for every text, at no cost: for
	// measuring the pipeline alone in benchmarks, not for real indexes).
	Provider string `yaml:"provider"`
	// Dimensions is the vector length; default 1536. It must equal the sink's
	// embeddingDimensionality.
	Dimensions int `yaml:"dimensions"`
	// BatchSize is the number of texts per embedding request; default 100,
	// at most MaxBatchSize (8192), and for the HTTP providers at most
	// MaxInputsPerRequest.
	BatchSize int `yaml:"batchSize"`
	// Concurrency caps the requests in flight; default 4, at most
	// MaxConcurrency (256). After a 429 the client lowers it and climbs
	// back gradually.
	Concurrency int `yaml:"concurrency"`
	// MaxRetries is how many times a failed request is retried: n > 0
	// allows up to n retries (n+1 attempts), -1 allows none (one attempt),
	// and 0 means the default, 3. So 0 does not turn retries off, as it
	// does for the OpenAI SDKs' maxRetries: write -1 for that.
	MaxRetries int `yaml:"maxRetries"`
	// Timeout bounds each HTTP attempt; default 60s. It is a duration with
	// a unit (500ms, 60s, 2m), not the seed's bare number of milliseconds:
	// the seed's timeout 60000 is 60s.
	Timeout time.Duration `yaml:"timeout"`
	// RequestsPerMinute is the request budget shared by all workers;
	// default 0, unlimited. The local providers (hash, instant) ignore it.
	RequestsPerMinute int `yaml:"requestsPerMinute"`
	// TokensPerMinute is the token budget shared by all workers; default 0,
	// unlimited. The local providers (hash, instant) ignore it.
	TokensPerMinute int `yaml:"tokensPerMinute"`
	// Model is the model name sent to an openai provider, e.g.
	// text-embedding-3-small; required for openai. Default "". For
	// azure-openai it is optional and never sent (the deployment selects the
	// model): naming the deployment's model lets Validate check dimensions
	// and sendDimensions against it.
	//
	// For OpenAI's own models (text-embedding-3-small, text-embedding-3-large,
	// text-embedding-ada-002) Validate rejects dimensions above the model's
	// size and sendDimensions for a model that cannot shorten its vectors;
	// other names (Ollama, vLLM, ...) are not checked.
	Model string `yaml:"model"`
	// BaseURL is the openai API root, up to and including /v1; default
	// https://api.openai.com/v1. It must not hold user information, a query
	// or a fragment: the key goes in the APIKeyEnv variable.
	BaseURL string `yaml:"baseURL"`
	// Endpoint is the Azure OpenAI resource URL, e.g.
	// https://NAME.openai.azure.com, without user information, a query or
	// a fragment; required for azure-openai. Default "".
	Endpoint string `yaml:"endpoint"`
	// Deployment is the Azure OpenAI deployment name; required for
	// azure-openai. Default "".
	Deployment string `yaml:"deployment"`
	// APIVersion is the Azure OpenAI api-version; default 2024-10-21.
	APIVersion string `yaml:"apiVersion"`
	// APIKeyEnv names the environment variable holding the API key (never
	// the key itself); default OPENAI_API_KEY for openai and
	// AZURE_OPENAI_API_KEY for azure-openai.
	APIKeyEnv string `yaml:"apiKeyEnv"`
	// Auth selects how requests authenticate: apiKey (default), none
	// (openai only), defaultAzureCredential or managedIdentity (azure-openai
	// only). Letter case and underscores do not matter, and the spellings
	// of sink.cloudsearch.credential and of the SDK's credential types are
	// accepted too: key, KeyCredential and AzureKeyCredential for apiKey,
	// default and DefaultAzureCredential, ManagedIdentityCredential.
	Auth string `yaml:"auth"`
	// ManagedIdentityClientID is the client id of the user-assigned managed
	// identity used when auth is managedIdentity. Default "": the client id
	// in the AZURE_CLIENT_ID environment variable, as for
	// sink.cloudsearch.credential: managedIdentity, or the system-assigned
	// identity when that is empty too.
	ManagedIdentityClientID string `yaml:"managedIdentityClientId"`
	// SendDimensions sends dimensions in each request, for models that can
	// shorten their vectors (text-embedding-3 and later); default false.
	// OpenAI rejects it (HTTP 400) for text-embedding-ada-002.
	SendDimensions bool `yaml:"sendDimensions"`
	// MaxInputsPerRequest caps the texts per request; default 2048.
	MaxInputsPerRequest int `yaml:"maxInputsPerRequest"`
	// MaxTokensPerRequest caps the tokens per request; default 300000.
	MaxTokensPerRequest int `yaml:"maxTokensPerRequest"`
	// MaxTokensPerInput caps the tokens of one text; default 8192.
	MaxTokensPerInput int `yaml:"maxTokensPerInput"`
	// MaxRetryAfter caps the delay a server may ask for with Retry-After or
	// retry-after-ms; default 60s.
	MaxRetryAfter time.Duration `yaml:"maxRetryAfter"`
	// RetryInitialDelay is the first computed retry delay, before jitter;
	// default 500ms. It doubles on each retry.
	RetryInitialDelay time.Duration `yaml:"retryInitialDelay"`
	// RetryMaxDelay caps the computed retry delay; default 30s.
	RetryMaxDelay time.Duration `yaml:"retryMaxDelay"`
	// PricePerMillionTokens is what the provider charges per million input
	// tokens; when set, run reports and dry-run plans give an estimated
	// cost. Default 0 (no estimate).
	PricePerMillionTokens float64 `yaml:"pricePerMillionTokens"`
}

// DefaultConfig returns the default configuration: the hash provider with
// every default applied.
func DefaultConfig() Config {
	var c Config
	c.ApplyDefaults()
	return c
}

// ApplyDefaults replaces zero fields with their defaults, and spells a
// recognised auth value canonically (one of the Auth constants).
// Provider-specific defaults (baseURL, apiVersion, apiKeyEnv, auth) follow
// c.Provider.
func (c *Config) ApplyDefaults() {
	if a, ok := parseAuth(c.Auth); ok {
		c.Auth = a
	}
	setDefault(&c.Provider, ProviderHash)
	setDefault(&c.Dimensions, DefaultDimensions)
	setDefault(&c.BatchSize, DefaultBatchSize)
	setDefault(&c.Concurrency, DefaultConcurrency)
	setDefault(&c.MaxRetries, DefaultMaxRetries)
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.MaxInputsPerRequest, DefaultMaxInputsPerRequest)
	setDefault(&c.MaxTokensPerRequest, DefaultMaxTokensPerRequest)
	setDefault(&c.MaxTokensPerInput, DefaultMaxTokensPerInput)
	setDefault(&c.MaxRetryAfter, DefaultMaxRetryAfter)
	setDefault(&c.RetryInitialDelay, DefaultRetryInitialDelay)
	setDefault(&c.RetryMaxDelay, DefaultRetryMaxDelay)
	switch c.Provider {
	case ProviderOpenAI:
		setDefault(&c.BaseURL, DefaultOpenAIBaseURL)
		setDefault(&c.Auth, AuthAPIKey)
		setDefault(&c.APIKeyEnv, DefaultOpenAIKeyEnv)
	case ProviderAzureOpenAI:
		setDefault(&c.APIVersion, DefaultAzureAPIVersion)
		setDefault(&c.Auth, AuthAPIKey)
		setDefault(&c.APIKeyEnv, DefaultAzureKeyEnv)
	}
}

func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// Validate checks every setting, defaults applied, and returns a
// *ConfigError naming the first wrong one (e.g. "embedder.dimensions") and
// what is allowed.
func (c Config) Validate() error {
	auth := c.Auth // as written, for messages
	c.ApplyDefaults()
	switch c.Provider {
	case ProviderHash, ProviderInstant, ProviderOpenAI, ProviderAzureOpenAI:
	default:
		switch strings.ToLower(c.Provider) {
		case "azureopenai", "azure_openai", "azure":
			return cfgErr("embedder.provider", "%q is not a provider; for Azure OpenAI (LlamaIndex's AzureOpenAI) write azure-openai", c.Provider)
		}
		return cfgErr("embedder.provider", "%q is not a provider; use hash, openai, azure-openai or instant (benchmarks only)", c.Provider)
	}
	for _, f := range []struct {
		name         string
		v, min, most int    // most 0: no upper bound
		low          string // what the lowest allowed values mean
	}{
		{"embedder.dimensions", c.Dimensions, 1, 65536, fmt.Sprintf("0 means the default, %d", DefaultDimensions)},
		{"embedder.batchSize", c.BatchSize, 1, MaxBatchSize, fmt.Sprintf("0 means the default, %d", DefaultBatchSize)},
		{"embedder.concurrency", c.Concurrency, 1, MaxConcurrency, fmt.Sprintf("0 means the default, %d", DefaultConcurrency)},
		{"embedder.maxRetries", c.MaxRetries, -1, 0, fmt.Sprintf("-1 means no retries, 0 means the default, %d", DefaultMaxRetries)},
		{"embedder.requestsPerMinute", c.RequestsPerMinute, 0, 0, "0 means unlimited"},
		{"embedder.tokensPerMinute", c.TokensPerMinute, 0, 0, "0 means unlimited"},
		{"embedder.maxInputsPerRequest", c.MaxInputsPerRequest, 1, 0, fmt.Sprintf("0 means the default, %d", DefaultMaxInputsPerRequest)},
		{"embedder.maxTokensPerRequest", c.MaxTokensPerRequest, 1, 0, fmt.Sprintf("0 means the default, %d", DefaultMaxTokensPerRequest)},
		{"embedder.maxTokensPerInput", c.MaxTokensPerInput, 1, 0, fmt.Sprintf("0 means the default, %d", DefaultMaxTokensPerInput)},
	} {
		switch {
		case f.most > 0 && (f.v < f.min || f.v > f.most):
			return cfgErr(f.name, "must be between %d and %d (%s), got %d", f.min, f.most, f.low, f.v)
		case f.v < f.min:
			return cfgErr(f.name, "must be at least %d (%s), got %d", f.min, f.low, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"embedder.timeout", c.Timeout},
		{"embedder.maxRetryAfter", c.MaxRetryAfter},
		{"embedder.retryInitialDelay", c.RetryInitialDelay},
		{"embedder.retryMaxDelay", c.RetryMaxDelay},
	} {
		if f.v < 0 {
			return cfgErr(f.name, "must be a positive duration such as 60s, got %s", f.v)
		}
	}
	if !(c.PricePerMillionTokens >= 0) || math.IsInf(c.PricePerMillionTokens, 1) { // NaN too
		return cfgErr("embedder.pricePerMillionTokens", "must be 0 (no estimate) or a finite price, got %v", c.PricePerMillionTokens)
	}
	if !c.Local() && c.BatchSize > c.MaxInputsPerRequest {
		return cfgErr("embedder.batchSize", "%d is above embedder.maxInputsPerRequest (%d); lower it", c.BatchSize, c.MaxInputsPerRequest)
	}
	if c.MaxTokensPerInput > c.MaxTokensPerRequest {
		return cfgErr("embedder.maxTokensPerInput", "%d is above embedder.maxTokensPerRequest (%d)", c.MaxTokensPerInput, c.MaxTokensPerRequest)
	}
	switch c.Provider {
	case ProviderOpenAI:
		if err := c.validateOpenAI(auth); err != nil {
			return err
		}
	case ProviderAzureOpenAI:
		if err := c.validateAzure(auth); err != nil {
			return err
		}
	default:
		return nil
	}
	return c.validateModel()
}

// openAIModel is what Validate knows of one of OpenAI's embedding models.
type openAIModel struct {
	dims    int  // length of the vectors it returns by default, its largest
	shorten bool // accepts the dimensions request parameter
}

// openAIModels are OpenAI's embedding models. OpenAI's API reference says
// of dimensions: "Only supported in text-embedding-3 and later models"; its
// embeddings guide gives the default vector lengths, 1536 for
// text-embedding-3-small and 3072 for text-embedding-3-large (ada-002: 1536).
// The API answers 400 to dimensions for ada-002 and to values above these.
var openAIModels = map[string]openAIModel{
	"text-embedding-3-small": {dims: 1536, shorten: true},
	"text-embedding-3-large": {dims: 3072, shorten: true},
	"text-embedding-ada-002": {dims: 1536, shorten: false},
}

// validateModel checks dimensions and sendDimensions against a known
// model. Other models (local servers, an Azure deployment whose model is not
// named) are not checked: their sizes are not known here.
func (c Config) validateModel() error {
	m, ok := openAIModels[c.Model]
	if !ok {
		return nil
	}
	if c.SendDimensions && !m.shorten {
		return cfgErr("embedder.sendDimensions", "model %s does not accept the dimensions parameter (only text-embedding-3 and later "+
			"models do; OpenAI answers HTTP 400) and always returns %d dimensions; set sendDimensions: false and "+
			"embedder.dimensions to %d"+alsoSinkDims+", or use text-embedding-3-small or "+
			"text-embedding-3-large to shorten vectors", c.Model, m.dims, m.dims)
	}
	if c.Dimensions > m.dims {
		fix := fmt.Sprintf("set embedder.dimensions to %d"+alsoSinkDims, m.dims)
		if m.shorten {
			fix += ", or lower with sendDimensions: true"
		}
		if c.Model != "text-embedding-3-large" {
			fix += ", or use text-embedding-3-large (3072)"
		}
		return cfgErr("embedder.dimensions", "%d is above the %d dimensions of model %s; %s", c.Dimensions, m.dims, c.Model, fix)
	}
	return nil
}

// validateOpenAI checks the settings of provider openai; auth is
// embedder.auth as written, c.Auth its canonical spelling.
func (c Config) validateOpenAI(auth string) error {
	if c.Model == "" {
		return cfgErr("embedder.model", "is required for provider openai, e.g. text-embedding-3-small (or the model name your server serves)")
	}
	if err := checkURL("embedder.baseURL", c.BaseURL, "https://api.openai.com/v1 or http://localhost:11434/v1"); err != nil {
		return err
	}
	switch c.Auth {
	case AuthAPIKey:
		return checkEnvName(c.APIKeyEnv)
	case AuthNone:
		return nil
	case AuthDefaultAzureCredential, AuthManagedIdentity:
		return cfgErr("embedder.auth", "%s is not valid for provider openai (Microsoft Entra credentials are for provider azure-openai); use apiKey or none", azcred.Quote(auth))
	}
	return cfgErr("embedder.auth", "%s is not valid for provider openai; use apiKey (or key) or none", azcred.Quote(auth))
}

// validateAzure checks the settings of provider azure-openai; auth is
// embedder.auth as written, c.Auth its canonical spelling.
func (c Config) validateAzure(auth string) error {
	if err := checkURL("embedder.endpoint", c.Endpoint, "https://NAME.openai.azure.com"); err != nil {
		return err
	}
	if c.Deployment == "" {
		return cfgErr("embedder.deployment", "is required for provider azure-openai: the name of your embedding deployment")
	}
	if strings.ContainsAny(c.Deployment, "/?#") {
		return cfgErr("embedder.deployment", "must be a deployment name, not a path or URL")
	}
	switch c.Auth {
	case AuthAPIKey:
		return checkEnvName(c.APIKeyEnv)
	case AuthDefaultAzureCredential, AuthManagedIdentity:
		return nil
	}
	return cfgErr("embedder.auth", "%s is not valid for provider azure-openai; use apiKey (or key), defaultAzureCredential (or default) "+
		"or managedIdentity, in any letter case", azcred.Quote(auth))
}

func checkURL(field, raw, example string) error {
	if raw == "" {
		return cfgErr(field, "is required, e.g. %s", example)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfgErr(field, "%s is not an http(s) URL; use e.g. %s", shownURL(raw), example)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return cfgErr(field, "must not hold credentials, a query or a fragment, which may hold a key (the value is not shown); "+
			"use e.g. %s, and put the key in the variable named by embedder.apiKeyEnv", example)
	}
	return nil
}

// shownURL returns raw, the value of a URL setting that is not an http(s)
// URL, quoted for a message when it reads as an address with its scheme
// left out (localhost:11434, api.openai.com/v1), and credential.NotShown
// otherwise: it may be a key set where the URL goes.
func shownURL(raw string) string {
	if credential.EndpointShown(raw) || credential.EndpointShown("http://"+raw) {
		return strconv.Quote(raw)
	}
	return credential.NotShown
}

// checkEnvName rejects an apiKeyEnv that is not a variable name, or looks
// like a key, without echoing it: a key pasted there must not reach an
// error message.
func checkEnvName(name string) error {
	if p := credential.EnvNameProblem(name); p != "" {
		return cfgErr("embedder.apiKeyEnv", "%s; it must name an environment variable (letters, digits and _), such as OPENAI_API_KEY, not hold the key itself", p)
	}
	return nil
}

func cfgErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Limits are the caps one embedding request must respect. The pipeline's
// batcher sizes batches by them; the HTTP providers also split larger
// batches themselves. A zero field means no cap.
type Limits struct {
	MaxInputs      int // texts per request
	MaxTokens      int // tokens per request
	MaxInputTokens int // tokens of one text
}

// Local reports whether the provider computes vectors in process (hash,
// instant): it has no request caps, no quota and no price.
func (c Config) Local() bool {
	return c.Provider == ProviderHash || c.Provider == ProviderInstant || c.Provider == ""
}

// Limits returns the request caps of the configuration, defaults applied.
// The local providers cap only the inputs, at batchSize. The HTTP providers
// cap inputs at min(batchSize, maxInputsPerRequest) and tokens at
// maxTokensPerRequest. With a tokensPerMinute budget, a request also
// carries at most 90% of one second's share of the budget, rounded down
// (floor(tokensPerMinute*9/600)); with a requestsPerMinute budget too, 90%
// of one request's share, floor(tokensPerMinute*9/10/requestsPerMinute),
// if that is larger; but never less than maxTokensPerInput, and never more
// than the budget itself. So pacing stays smooth and no request exceeds
// what the budget can ever admit.
//
// The tenth held back is headroom against the jitter of request arrival.
// A provider enforcing a per-minute quota over a short window holds about
// a second's share (or, with a request quota, a request's share) in its
// bucket and charges each request when it arrives, not when the client
// sent it. The client's token limiter refills at exactly tokensPerMinute/60
// per second with a burst of MaxTokens; were a request allowed a full
// second's share, one that arrived a little late would find the
// provider's bucket already full and losing refill, and the next full-size
// request, arriving on time, would be refused. A request of at most 90%
// of the bucket leaves a tenth of a second's refill for such delays, so
// that a budget equal to the quota gets no 429s.
func (c Config) Limits() Limits {
	c.ApplyDefaults()
	if c.Local() {
		return Limits{MaxInputs: c.BatchSize}
	}
	l := Limits{
		MaxInputs:      min(c.BatchSize, c.MaxInputsPerRequest),
		MaxTokens:      c.MaxTokensPerRequest,
		MaxInputTokens: c.MaxTokensPerInput,
	}
	if tpm := c.TokensPerMinute; tpm > 0 {
		usable := headroom(tpm)
		share := usable / 60
		if rpm := c.RequestsPerMinute; rpm > 0 {
			share = max(share, usable/rpm)
		}
		l.MaxTokens = min(l.MaxTokens, max(share, l.MaxInputTokens), tpm)
		l.MaxInputTokens = min(l.MaxInputTokens, l.MaxTokens)
	}
	return l
}

// headroom returns 90% of n, rounded down (floor(n*9/10)), without the
// overflow of n*9. Dividing it by d then rounds down floor(n*9/(10*d)).
func headroom(n int) int { return n/10*9 + n%10*9/10 }

// The settings that cap the tokens of one input (see Config.inputCap).
const (
	settingMaxTokensPerInput = "embedder.maxTokensPerInput"
	settingTokensPerMinute   = "embedder.tokensPerMinute"
)

// inputCap returns the most tokens one input may have, as Limits'
// MaxInputTokens (0 for the local providers: no cap), and the setting that
// sets it: embedder.maxTokensPerInput, or embedder.tokensPerMinute when
// Limits lowered the cap to that budget (no request above it can ever be
// admitted; Validate keeps maxTokensPerRequest above maxTokensPerInput).
func (c Config) inputCap() (int, string) {
	c.ApplyDefaults()
	limit := c.Limits().MaxInputTokens
	if !c.Local() && limit < c.MaxTokensPerInput {
		return limit, settingTokensPerMinute
	}
	return limit, settingMaxTokensPerInput
}

// CheckChunkSize returns a *ConfigError (ErrConfig) naming
// splitter.chunkSize when a chunk of chunkSize tokens could never be
// embedded: above embedder.maxTokensPerInput, which the provider enforces,
// or above embedder.tokensPerMinute, a budget that one input larger than it
// can never fit. Every document with such a chunk would fail, which only
// the run would find out; callers check the configuration with it before
// the run. Defaults are applied first; the local providers (hash, instant)
// take chunks of any size, and so does a chunkSize of 0 or less.
func (c Config) CheckChunkSize(chunkSize int) error {
	if c.Local() || chunkSize <= 0 {
		return nil
	}
	limit, setting := c.inputCap()
	if limit <= 0 || chunkSize <= limit {
		return nil
	}
	if setting == settingTokensPerMinute {
		return cfgErr("splitter.chunkSize", "%d is above embedder.tokensPerMinute (%d): one chunk of %d tokens can never fit a budget of %d tokens per minute, "+
			"so every document with a chunk that long would fail; raise embedder.tokensPerMinute to at least %d, or lower splitter.chunkSize to at most %d",
			chunkSize, limit, chunkSize, limit, chunkSize, limit)
	}
	return cfgErr("splitter.chunkSize", "%d is above embedder.maxTokensPerInput (%d): the provider would reject every chunk longer than %d tokens and fail its document; "+
		"lower splitter.chunkSize to at most %d, or raise embedder.maxTokensPerInput if the model takes longer inputs",
		chunkSize, limit, limit, limit)
}

// New returns the embedder the configuration selects. It validates cfg and,
// for the HTTP providers, checks that the API key variable is set, so a
// missing key is reported here (as a *MissingKeyError naming the variable)
// and not by the first request. ctx bounds the start-up checks (such as
// obtaining a first Microsoft Entra token). opts apply to the HTTP
// providers' Client; the local providers ignore them.
func New(ctx context.Context, cfg Config, opts ...Option) (Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.ApplyDefaults()
	switch cfg.Provider {
	case ProviderOpenAI:
		return NewOpenAI(cfg, opts...)
	case ProviderAzureOpenAI:
		return NewAzureOpenAI(ctx, cfg, opts...)
	case ProviderInstant:
		return NewInstant(cfg.Dimensions), nil
	}
	return NewHash(cfg.Dimensions), nil
}
