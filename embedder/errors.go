package embedder

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/internal/credential"
)

// Sentinel errors. The typed errors below wrap them (and ErrEmbed, for errors
// that come from embedding) so callers classify failures with errors.Is.
var (
	// ErrConfig marks an invalid embedder configuration.
	ErrConfig = errors.New("embedder: invalid configuration")
	// ErrMissingKey marks an API key environment variable that is not set.
	ErrMissingKey = errors.New("embedder: API key not set")
	// ErrUnauthorized marks a request the provider refused (401, 403).
	ErrUnauthorized = errors.New("embedder: unauthorized")
	// ErrNotFound marks an unknown model, deployment or URL (404).
	ErrNotFound = errors.New("embedder: model or deployment not found")
	// ErrBadRequest marks a request the provider rejected as invalid: 400,
	// 422 and any other 4xx status that no other error names.
	ErrBadRequest = errors.New("embedder: request rejected")
	// ErrThrottled marks a rate-limited request (429).
	ErrThrottled = errors.New("embedder: rate limited")
	// ErrQuotaExhausted marks a 429 that is not a rate limit: the account's
	// quota or prepaid credits are used up, or a spend limit was reached
	// (OpenAI's insufficient_quota). Waiting and retrying do not help; only
	// adding credits or raising the limit does, so it is never retried.
	ErrQuotaExhausted = errors.New("embedder: quota exhausted")
	// ErrRequestTooLarge marks a 429 that is not a rate limit either: the
	// provider's token quota can never admit a request that large ("Request
	// too large", as OpenAI and embedtest word it), however long the client
	// waits. It is never retried; the remedy is a configuration change
	// (embedder.tokensPerMinute at the real quota, or a lower
	// embedder.maxTokensPerRequest), so an *APIError that wraps it wraps
	// ErrConfig too.
	ErrRequestTooLarge = errors.New("embedder: request too large for the quota")
	// ErrServer marks a transient provider failure (408, 5xx).
	ErrServer = errors.New("embedder: server error")
	// ErrTransport marks a request that failed before a response arrived:
	// connection reset, timeout, refused connection.
	ErrTransport = errors.New("embedder: transport error")
	// ErrBadResponse marks a response that could not be mapped to the inputs.
	ErrBadResponse = errors.New("embedder: malformed response")
	// ErrDimensions marks a vector whose length differs from the configured
	// dimensions.
	ErrDimensions = errors.New("embedder: dimension mismatch")
	// ErrInputTooLarge marks an input above maxTokensPerInput.
	ErrInputTooLarge = errors.New("embedder: input too large")
)

// ConfigError reports an invalid setting. Field is the full setting name,
// such as "embedder.dimensions".
type ConfigError struct {
	Field  string
	Reason string
}

// Error names the setting and what is wrong with it.
func (e *ConfigError) Error() string { return "embedder: " + e.Field + ": " + e.Reason }

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// MissingKeyError reports an API key environment variable that is unset or
// empty. It is returned by New, before any request is sent.
type MissingKeyError struct {
	Provider string // "openai" or "azure-openai"
	Env      string // the environment variable that should hold the key
}

// Error names the environment variable to set and the settings that avoid
// needing it.
func (e *MissingKeyError) Error() string {
	s := "embedder: environment variable " + e.Env + " is not set; export " + e.Env +
		" with your " + e.Provider + " API key, or set embedder.apiKeyEnv to the variable that holds it"
	switch e.Provider {
	case ProviderAzureOpenAI:
		s += " (or set embedder.auth: defaultAzureCredential to use Microsoft Entra ID)"
	case ProviderOpenAI:
		s += " (or set embedder.auth: none for a local server that needs no key)"
	}
	return s
}

// Unwrap returns ErrMissingKey and ErrConfig.
func (e *MissingKeyError) Unwrap() []error { return []error{ErrMissingKey, ErrConfig} }

// InvalidKeyError reports an API key environment variable whose value
// holds a control character (a line break, a carriage return, a tab,
// DEL...) once the white space around it is dropped: no key holds one, and
// most cannot travel in an HTTP header. It is returned by New, before any
// request is sent, and never shows the key.
type InvalidKeyError struct {
	Provider string // "openai" or "azure-openai"
	Env      string // the environment variable that holds the key
	Problem  string // what is wrong, e.g. "a line break (\\n) at byte 12 of 40"
}

// Error names the environment variable, says what is wrong with its value
// and how to fix it, without quoting the key.
func (e *InvalidKeyError) Error() string {
	return "embedder: environment variable " + e.Env + " holds " + e.Problem +
		"; no key holds control characters (the value is not shown here): set " + e.Env +
		" to your " + e.Provider + " API key alone, copied again without line breaks or other control characters"
}

// Unwrap returns ErrConfig.
func (e *InvalidKeyError) Unwrap() error { return ErrConfig }

// APIError is an HTTP error answer from an embeddings provider. Its Unwrap
// returns ErrEmbed and the sentinel of its class (ErrUnauthorized,
// ErrNotFound, ErrBadRequest, ErrThrottled, ErrQuotaExhausted,
// ErrRequestTooLarge, with ErrConfig, or ErrServer); a 400 from a server
// that speaks HTTPS to an http:// URL returns ErrConfig instead of
// ErrBadRequest, since no request can succeed until the URL is fixed.
type APIError struct {
	Provider string // "openai" or "azure-openai"
	Status   int    // HTTP status code
	// Message is the provider's own error message, if it sent one.
	Message string
	// Type and Code are the provider's error.type and error.code, if it
	// sent them, e.g. "insufficient_quota".
	Type, Code string
	// Hint says what to change, when Sluice knows. For a failure worth
	// retrying (a rate-limit 429, 408, 5xx) whose retries are used up it
	// also says how many attempts were made, over how long, and names
	// embedder.maxRetries.
	Hint string
	// RetryAfter is the delay the server asked for (retry-after-ms or
	// Retry-After); 0 when it did not say.
	RetryAfter time.Duration

	// plainHTTP marks a 400 from a server that speaks HTTPS to an http://
	// URL: a configuration error (ErrConfig), not a rejected batch.
	plainHTTP bool
}

// Error gives the provider, the HTTP status, the provider's message and a
// hint on what to change.
func (e *APIError) Error() string {
	s := "embedder: " + e.Provider + " returned HTTP " + strconv.Itoa(e.Status)
	switch {
	case e.Message != "" && e.Hint != "":
		s += ": " + credential.Clause(e.Message)
	case e.Message != "":
		s += ": " + e.Message
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns ErrEmbed and the sentinel of the status class: for a 429,
// ErrQuotaExhausted when the body says the quota or credits are used up,
// ErrRequestTooLarge and ErrConfig when it says the request is larger than
// the quota ever admits, else ErrThrottled.
func (e *APIError) Unwrap() []error {
	if e.tooLargeForQuota() {
		return []error{ErrRequestTooLarge, ErrConfig, ErrEmbed}
	}
	if e.plainHTTP {
		return []error{ErrConfig, ErrEmbed}
	}
	return []error{e.sentinel(), ErrEmbed}
}

func (e *APIError) sentinel() error {
	switch status := e.Status; {
	case status == 401 || status == 403:
		return ErrUnauthorized
	case status == 404:
		return ErrNotFound
	case e.quotaExhausted(): // a 429 whose body names the quota or credits
		return ErrQuotaExhausted
	case status == 429:
		return ErrThrottled
	case status == 408 || status >= 500:
		return ErrServer
	default:
		return ErrBadRequest
	}
}

// billingCodes are the error codes of OpenAI's 429s that no retry can fix:
// the account has no quota or credits left, or a spend or usage limit was
// reached. OpenAI's error-code guide says retrying them will not restore
// access; their error.type is insufficient_quota.
var billingCodes = map[string]bool{
	"insufficient_quota":                true,
	"credit_balance_exhausted":          true,
	"organization_spend_limit_exceeded": true,
	"project_spend_limit_exceeded":      true,
	"organization_usage_limit_exceeded": true,
}

// quotaExhausted reports whether e is a 429 saying that the account's quota
// or credits are used up, rather than a rate limit.
func (e *APIError) quotaExhausted() bool {
	return e.Status == 429 && (e.Type == "insufficient_quota" || billingCodes[e.Code])
}

// tooLargePrefix begins the message of a 429 for a request larger than the
// token quota can ever admit: OpenAI's "Request too large for MODEL in
// organization ORG on tokens per min (TPM): Limit L, Requested R." and
// embedtest's "Request too large: R tokens is more than the token quota
// admits at once (L)."
const tooLargePrefix = "request too large"

// tooLargeForQuota reports whether e is a 429 saying that the request is
// larger than the quota can ever admit, rather than a rate limit: waiting
// does not help, only smaller requests do.
func (e *APIError) tooLargeForQuota() bool {
	return e.Status == 429 && len(e.Message) >= len(tooLargePrefix) && strings.EqualFold(e.Message[:len(tooLargePrefix)], tooLargePrefix)
}

// rateLimited reports whether e is a 429 for a rate limit, which passes:
// neither an exhausted quota nor a request too large for the quota.
func (e *APIError) rateLimited() bool {
	return e.Status == 429 && !e.quotaExhausted() && !e.tooLargeForQuota()
}

// TransportError reports a request that got no HTTP answer.
type TransportError struct {
	Provider string
	URL      string // the endpoint, without credentials
	Err      error

	hint string // once the retries are used up: how many attempts failed, what to change
}

// Error names the provider and the URL that could not be reached and, once
// the retries are used up, how many attempts were made and what to change.
func (e *TransportError) Error() string {
	return withHint("embedder: "+e.Provider+" request to "+e.URL+" failed: "+e.Err.Error(), e.hint)
}

// Unwrap returns the cause, ErrTransport and ErrEmbed.
func (e *TransportError) Unwrap() []error { return []error{e.Err, ErrTransport, ErrEmbed} }

// ResponseError reports a response body that does not match the request:
// undecodable JSON, an index out of range, duplicated or missing.
type ResponseError struct {
	Provider string
	Reason   string

	hint string // once the retries are used up: how many attempts failed, what to change
}

// Error names the provider and what was wrong with its response and, once
// the retries are used up, how many attempts were made and what to change.
func (e *ResponseError) Error() string {
	return withHint("embedder: malformed "+e.Provider+" response: "+e.Reason, e.hint)
}

// withHint appends hint, if any, to msg.
func withHint(msg, hint string) string {
	if hint == "" {
		return msg
	}
	return msg + "; " + hint
}

// Unwrap returns ErrBadResponse and ErrEmbed.
func (e *ResponseError) Unwrap() []error { return []error{ErrBadResponse, ErrEmbed} }

// DimensionError reports a vector whose length differs from the configured
// dimensions. It stops the run before anything is written.
type DimensionError struct {
	Want int // embedder.dimensions
	Got  int // length of the vector the provider returned
}

// Error gives both sizes and the settings that make them agree.
func (e *DimensionError) Error() string {
	return fmt.Sprintf("embedder: the provider returned %d-dimensional vectors but embedder.dimensions is %d; "+
		"set embedder.dimensions to %d"+alsoSinkDims+", or choose a model whose output size is %d", e.Got, e.Want, e.Got, e.Want)
}

// alsoSinkDims completes a remedy that sets embedder.dimensions: the Cloud
// AI Search sink has a setting of its own that must agree, the local store
// takes the length of the vectors it is given.
const alsoSinkDims = " (with the Cloud AI Search sink, sink.cloudsearch.embeddingDimensionality too)"

// Unwrap returns ErrDimensions and ErrEmbed.
func (e *DimensionError) Unwrap() []error { return []error{ErrDimensions, ErrEmbed} }

// InputTooLargeError reports an input with more tokens than one request may
// carry for one input.
type InputTooLargeError struct {
	Index  int // position of the input in the Embed call
	Tokens int // its token count
	Max    int // the cap (Limits().MaxInputTokens)
	// Setting is the setting that sets Max: embedder.maxTokensPerInput, or
	// embedder.tokensPerMinute when that budget is below it (no input above
	// the budget can ever be sent). "" means embedder.maxTokensPerInput.
	Setting string
}

// Error gives the input's index and token count, the limit, the setting
// that sets it and the remedy.
func (e *InputTooLargeError) Error() string {
	if e.Setting == settingTokensPerMinute {
		return fmt.Sprintf("embedder: input %d has %d tokens, above embedder.tokensPerMinute (%d): one input of %d tokens "+
			"can never fit a budget of %d tokens per minute; raise embedder.tokensPerMinute or lower splitter.chunkSize",
			e.Index, e.Tokens, e.Max, e.Tokens, e.Max)
	}
	return fmt.Sprintf("embedder: input %d has %d tokens, above embedder.maxTokensPerInput (%d); "+
		"lower splitter.chunkSize", e.Index, e.Tokens, e.Max)
}

// Unwrap returns ErrInputTooLarge and ErrEmbed.
func (e *InputTooLargeError) Unwrap() []error { return []error{ErrInputTooLarge, ErrEmbed} }
