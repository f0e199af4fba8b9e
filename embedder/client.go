package embedder

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/time/rate"

	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/internal/retryafter"
)

// Client is an Embedder backed by an HTTP embeddings API: the openai
// provider (NewOpenAI) or the azure-openai provider (NewAzureOpenAI).
//
// One Client holds one budget shared by every goroutine that calls Embed:
// requests per minute and tokens per minute (waited for before each
// request), an adaptive cap on requests in flight, and the server's own
// rate-limit headers. Embed splits its inputs into requests within Limits,
// sends them concurrently, retries transient failures with exponential
// backoff and jitter, and maps results back by the response's index.
//
// A Client is safe for concurrent use.
type Client struct {
	cfg          Config // defaults applied
	provider     string
	url          string // endpoint URL, never holding credentials
	limits       Limits
	capSetting   string // the setting that sets limits.MaxInputTokens, for *InputTooLargeError
	batchSetting string // the setting that sets how many inputs a request holds, for timeout hints
	auth         func(context.Context, *http.Request) error
	authHint     string                 // how to fix a 401
	notFound     string                 // how to fix a 404
	secret       secret                 // the API key, redacted from provider messages; nil without one
	credential   azcore.TokenCredential // Entra auth, from WithTokenCredential; cleared once auth holds it
	hc           *http.Client
	count        func(string) (int, error)
	log          *slog.Logger

	gate  *gate
	pace  pacer
	rpm   *rate.Limiter // nil: unlimited
	tpm   *rate.Limiter // nil: unlimited
	stats stats
	// answered says that the server has answered a request (with any
	// status): a connection it refuses after that is a restart to wait
	// out, not a wrong URL or a server that is not running.
	answered atomic.Bool
}

var _ StatsReporter = (*Client)(nil)

// Option customises a Client.
type Option func(*Client)

// WithHTTPClient makes the Client send requests through hc (default: a
// client keeping concurrency idle connections per host, with no overall
// timeout; embedder.timeout bounds each attempt).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithLatencyObserver calls observe with the latency of each successful
// attempt, e.g. to feed a Prometheus histogram. observe must be fast and
// safe for concurrent use.
func WithLatencyObserver(observe func(time.Duration)) Option {
	return func(c *Client) { c.stats.observe = observe }
}

// latencyObserverKey is the context key of ContextWithLatencyObserver.
type latencyObserverKey struct{}

// ContextWithLatencyObserver returns a copy of ctx with which a Client's
// Embed calls also report to observe the latency of each of their
// successful attempts, as WithLatencyObserver does for every call: the
// latencies of the calls made with that context alone, e.g. to tell one
// call's from those of the calls in flight beside it. A call that splits
// its inputs into several requests sends them concurrently, so observe
// must be safe for concurrent use; it must be fast. Other embedders ignore
// it.
func ContextWithLatencyObserver(ctx context.Context, observe func(time.Duration)) context.Context {
	return context.WithValue(ctx, latencyObserverKey{}, observe)
}

// WithTokenCounter makes the Client count the tokens of inputs whose Tokens
// is 0 with count instead of the built-in cl100k_base tokenizer.
func WithTokenCounter(count func(string) (int, error)) Option {
	return func(c *Client) { c.count = count }
}

// WithLogger logs every request the Client sends at debug level (the
// endpoint without its query, inputs, tokens, status, latency; never a
// header or a key), and every retry with its delay and cause; and at
// warning level, once per storm of 429s, that the provider is rate
// limiting requests, with the budgets to check. By default nothing is
// logged; a nil l changes nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithBatchSizeSetting names, in the hint of a request that timed out on
// every attempt, the setting that decides how many inputs a request holds
// (default "embedder.batchSize"). sluice bench, whose --batch-sizes decides
// it, passes its own.
func WithBatchSizeSetting(name string) Option {
	return func(c *Client) {
		if name != "" {
			c.batchSetting = name
		}
	}
}

func newClient(cfg Config, provider string, opts []Option) *Client {
	c := &Client{
		cfg:          cfg,
		provider:     provider,
		batchSetting: "embedder.batchSize",
		limits:       cfg.Limits(),
		count:        countTokens,
		log:          slog.New(slog.DiscardHandler),
		gate:         newGate(cfg.Concurrency),
		pace:         pacer{rpm: float64(cfg.RequestsPerMinute), tpm: float64(cfg.TokensPerMinute)},
	}
	_, c.capSetting = cfg.inputCap()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(cfg.Concurrency, 2)
	c.hc = &http.Client{Transport: tr}
	if n := cfg.RequestsPerMinute; n > 0 {
		c.rpm = rate.NewLimiter(rate.Limit(float64(n)/60), max(1, n/60))
	}
	if n := cfg.TokensPerMinute; n > 0 {
		// Exactly the budget's rate; the burst, the largest request, is
		// 90% of a second's share (see Config.Limits): headroom against
		// the jitter of arrival at the provider.
		c.tpm = rate.NewLimiter(rate.Limit(float64(n)/60), c.limits.MaxTokens)
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Dimensions returns embedder.dimensions.
func (c *Client) Dimensions() int { return c.cfg.Dimensions }

// Limits returns the request caps the Client applies.
func (c *Client) Limits() Limits { return c.limits }

// Stats returns the counters since the Client was created.
func (c *Client) Stats() Stats {
	s := c.stats.snapshot()
	s.Concurrency = c.gate.current()
	return s
}

// Embed returns one vector per input, in input order. Inputs whose Tokens
// is 0 are counted with cl100k_base first. Empty texts are not sent (the
// APIs reject them); their vectors are all zeros. An input above
// maxTokensPerInput, or above a tokensPerMinute budget smaller than that,
// fails the call with *InputTooLargeError (naming the setting) before
// anything is sent. On failure no vectors are returned.
func (c *Client) Embed(ctx context.Context, inputs []Input) ([][]float32, error) {
	toks := make([]int, len(inputs))
	var send []int // indexes of non-empty inputs
	for i, in := range inputs {
		if in.Text == "" {
			continue
		}
		t := in.Tokens
		if t <= 0 {
			n, err := c.count(in.Text)
			if err != nil {
				return nil, fmt.Errorf("embedder: counting the tokens of input %d: %w", i, err)
			}
			t = max(n, 1)
		}
		if t > c.limits.MaxInputTokens {
			return nil, &InputTooLargeError{Index: i, Tokens: t, Max: c.limits.MaxInputTokens, Setting: c.capSetting}
		}
		toks[i] = t
		send = append(send, i)
	}
	out := make([][]float32, len(inputs))
	groups := plan(send, toks, c.limits)
	run := func(ctx context.Context, g []int) error {
		texts := make([]string, len(g))
		tokens := 0
		for k, i := range g {
			texts[k] = inputs[i].Text
			tokens += toks[i]
		}
		vecs, err := c.request(ctx, texts, tokens)
		if err != nil {
			return err
		}
		for k, i := range g {
			out[i] = vecs[k]
		}
		return nil
	}
	if len(groups) == 1 {
		if err := run(ctx, groups[0]); err != nil {
			return nil, err
		}
	} else if len(groups) > 1 {
		p := pool.New().WithMaxGoroutines(c.cfg.Concurrency).WithContext(ctx).WithCancelOnError().WithFirstError()
		for _, g := range groups {
			p.Go(func(ctx context.Context) error { return run(ctx, g) })
		}
		if err := p.Wait(); err != nil {
			if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return nil, err
		}
	}
	for i := range out {
		if out[i] == nil {
			out[i] = make([]float32, c.cfg.Dimensions)
		}
	}
	return out, nil
}

// plan packs the inputs at idx, in order, into requests within l.
func plan(idx, toks []int, l Limits) [][]int {
	var groups [][]int
	start, sum := 0, 0
	for k, i := range idx {
		full := k > start && ((l.MaxInputs > 0 && k-start >= l.MaxInputs) ||
			(l.MaxTokens > 0 && sum+toks[i] > l.MaxTokens))
		if full {
			groups = append(groups, idx[start:k])
			start, sum = k, 0
		}
		sum += toks[i]
	}
	if start < len(idx) {
		groups = append(groups, idx[start:])
	}
	return groups
}

type embedRequest struct {
	Model          string   `json:"model,omitempty"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"` // a string for OpenAI, sometimes a number elsewhere
	} `json:"error"`
}

// request embeds one request's worth of texts, with retries.
func (c *Client) request(ctx context.Context, texts []string, tokens int) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{
		Model:          c.requestModel(),
		Input:          texts,
		EncodingFormat: "float",
		Dimensions:     c.requestDimensions(),
	})
	if err != nil {
		return nil, fmt.Errorf("embedder: encoding request: %w", err)
	}
	return c.retryLoop(ctx, func() ([][]float32, error) {
		return c.attempt(ctx, body, len(texts), tokens)
	})
}

func (c *Client) requestModel() string {
	if c.provider == ProviderOpenAI {
		return c.cfg.Model
	}
	return ""
}

func (c *Client) requestDimensions() int {
	if c.cfg.SendDimensions {
		return c.cfg.Dimensions
	}
	return 0
}

// acquire waits for a concurrency slot and the request's share of the
// budget. The returned release gives the slot back; the booking is the
// request's in the pacer, which the caller dates (pacer.sent) when it sends
// the request or drops (pacer.drop) if it does not.
func (c *Client) acquire(ctx context.Context, tokens int) (release func(), b *booking, err error) {
	if err := c.gate.acquire(ctx); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			c.gate.release()
		}
	}()
	b, err = c.pace.wait(ctx, tokens)
	if err != nil {
		return nil, nil, err
	}
	if err := waitN(ctx, c.rpm, 1, "embedder.requestsPerMinute"); err != nil {
		c.pace.drop(b)
		return nil, nil, err
	}
	if err := waitN(ctx, c.tpm, tokens, "embedder.tokensPerMinute"); err != nil {
		c.pace.drop(b)
		return nil, nil, err
	}
	return c.gate.release, b, nil
}

func waitN(ctx context.Context, l *rate.Limiter, n int, setting string) error {
	if l == nil {
		return nil
	}
	if err := l.WaitN(ctx, n); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// rate reports a wait past the deadline without wrapping it.
		return fmt.Errorf("embedder: waiting for the %s budget would pass the context deadline: %w", setting, context.DeadlineExceeded)
	}
	return nil
}

// attempt sends one HTTP request and decodes its answer.
func (c *Client) attempt(ctx context.Context, body []byte, n, tokens int) ([][]float32, error) {
	release, booked, err := c.acquire(ctx, tokens)
	if err != nil {
		return nil, err
	}
	defer release()
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.pace.drop(booked)
		return nil, fmt.Errorf("embedder: building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if err := c.auth(actx, req); err != nil {
		c.pace.drop(booked)
		return nil, err
	}
	secrets := c.sentSecrets(req.Header)
	start := time.Now()
	c.pace.sent(booked, start)
	c.stats.requests.Add(1)
	status := 0
	defer func() {
		// Checked first: the attributes (the redacted URL is parsed) are
		// built only when debug logging is on, not on every request.
		if !c.log.Enabled(ctx, slog.LevelDebug) {
			return
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "embedding request",
			slog.String("provider", c.provider), slog.String("url", c.redactedURL()),
			slog.Int("inputs", n), slog.Int("tokens", tokens),
			slog.Int("status", status), slog.Duration("latency", time.Since(start)))
	}()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	status = resp.StatusCode
	c.answered.Store(true)
	defer resp.Body.Close()
	now := time.Now()
	// The server reported what remained when it admitted the request, not
	// now: date the report at the request's start.
	c.pace.observe(resp.Header, start)
	if resp.StatusCode != http.StatusOK {
		apiErr := c.apiError(resp, secrets)
		// A 429 for an exhausted quota, or for a request larger than the
		// quota ever admits, is no rate limit: it neither lowers the
		// concurrency cap nor pauses the other workers.
		if apiErr.rateLimited() {
			throttled := c.stats.throttled.Add(1)
			wait := min(apiErr.RetryAfter, c.cfg.MaxRetryAfter)
			c.pace.pause(now, wait)
			if cut, limit := c.gate.throttled(start, now); cut {
				c.warnThrottled(ctx, throttled, wait, limit)
			}
		}
		return nil, apiErr
	}
	vecs, err := c.decode(resp.Body, n, secrets)
	if err != nil {
		if errors.Is(err, ErrEmbed) {
			return nil, err
		}
		return nil, c.transportError(ctx, err)
	}
	took := time.Since(start)
	c.stats.success(took, n, tokens)
	if observe, _ := ctx.Value(latencyObserverKey{}).(func(time.Duration)); observe != nil {
		observe(took)
	}
	c.gate.succeeded()
	return vecs, nil
}

// warnThrottled logs, at warning level, that the provider began to rate
// limit requests: once per storm (the 429 that lowered the in-flight cap),
// so that a run whose budgets exceed the quota says so without --debug,
// however many requests each storm refuses. throttled is the number of
// 429s so far, wait the pause every request now observes, limit the
// in-flight cap after the cut.
func (c *Client) warnThrottled(ctx context.Context, throttled int64, wait time.Duration, limit float64) {
	c.log.LogAttrs(ctx, slog.LevelWarn,
		"the embedding provider is rate limiting requests (HTTP 429): they are retried after the wait it asks for, fewer at a time; "+
			"if this recurs, set embedder.requestsPerMinute and embedder.tokensPerMinute to at most the quota it grants (see the embedder README)",
		slog.String("provider", c.provider), slog.String("url", c.redactedURL()),
		slog.Int64("throttled", throttled), slog.Duration("wait", wait), slog.Int("concurrency", int(limit)),
		slog.String("requestsPerMinute", budget(c.cfg.RequestsPerMinute)), slog.String("tokensPerMinute", budget(c.cfg.TokensPerMinute)))
}

// badRequestHint is the hint of a 400, 413 or 422: the provider rejected
// the request.
const badRequestHint = "the provider rejected the request; check embedder.model, embedder.dimensions (sendDimensions) and the per-request caps (maxInputsPerRequest, maxTokensPerRequest, maxTokensPerInput)"

func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("no answer within embedder.timeout (%s): %w", c.cfg.Timeout, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		err = fmt.Errorf("%w; is the server at %s running? (check %s)", err, c.redactedURL(), c.urlSetting())
	case noSuchHost(err):
		err = fmt.Errorf("%w; the host name does not resolve (DNS), so the request was not retried: check the host in %s", err, c.urlSetting())
	case badCertificate(err):
		err = fmt.Errorf("%w; the server's TLS certificate does not verify, so the request was not retried: check the host name in %s; "+
			"behind a TLS-inspecting proxy, add its CA certificate to this machine's trust store (or SSL_CERT_FILE)", err, c.urlSetting())
	case errors.Is(err, http.ErrSchemeMismatch):
		err = fmt.Errorf("%w; the server at %s answers in plain HTTP, not HTTPS: write %s with http://", err, c.origin(), c.urlSetting())
	}
	return &TransportError{Provider: c.provider, URL: c.redactedURL(), Err: err}
}

// noSuchHost reports whether err is a host name that does not resolve.
func noSuchHost(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// badCertificate reports whether err is a TLS certificate that does not
// verify.
func badCertificate(err error) bool {
	var (
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &certErr) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

// plainHTTPAnswers are the texts with which HTTPS servers answer a request
// sent to them in plain HTTP: Go's net/http and nginx's.
var plainHTTPAnswers = []string{"client sent an http request to an https server", "the plain http request was sent to https port"}

// httpsPort reports whether raw, the body of a 400 answer, says that the
// server speaks HTTPS although the client's URL is http://.
func (c *Client) httpsPort(raw []byte) bool {
	if !strings.HasPrefix(strings.ToLower(c.url), "http://") {
		return false
	}
	text := strings.ToLower(string(raw[:min(len(raw), 4096)]))
	for _, a := range plainHTTPAnswers {
		if strings.Contains(text, a) {
			return true
		}
	}
	return false
}

func (c *Client) urlSetting() string {
	if c.provider == ProviderAzureOpenAI {
		return "embedder.endpoint"
	}
	return "embedder.baseURL"
}

func (c *Client) redactedURL() string {
	u, err := url.Parse(c.url)
	if err != nil {
		return "the configured endpoint"
	}
	u.RawQuery = ""
	return u.String()
}

// apiError turns a non-200 answer into an *APIError. The provider's
// message has secrets (the credentials the request sent, see sentSecrets)
// redacted before it is shortened, so that no cut can leave part of one.
func (c *Client) apiError(resp *http.Response, secrets []string) *APIError {
	e := &APIError{Provider: c.provider, Status: resp.StatusCode, RetryAfter: retryafter.Parse(resp.Header, time.Now())}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body errorBody
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		e.Message, e.Type = redact(body.Error.Message, secrets...), redact(body.Error.Type, secrets...)
		switch code := body.Error.Code.(type) {
		case string:
			e.Code = redact(code, secrets...)
		case float64:
			e.Code = strconv.FormatFloat(code, 'f', -1, 64)
		}
	} else {
		e.Message = truncate(redact(strings.TrimSpace(string(raw)), secrets...), maxRawMessage)
	}
	switch resp.StatusCode {
	case 400:
		if c.httpsPort(raw) {
			e.plainHTTP = true
			e.Hint = fmt.Sprintf("the server at %s speaks HTTPS, not plain HTTP: write %s with https://", c.origin(), c.urlSetting())
			break
		}
		e.Hint = badRequestHint
	case 401, 403:
		e.Hint = c.authHint
	case 404:
		e.Hint = c.notFound
	case 413, 422:
		e.Hint = badRequestHint
	case 429:
		switch {
		case e.quotaExhausted():
			e.Hint = c.quotaHint()
		case e.tooLargeForQuota():
			e.Hint = c.tooLargeHint()
		default:
			e.Hint = "rate limited; set embedder.requestsPerMinute and embedder.tokensPerMinute to your quota (see the embedder README)"
		}
	}
	return e
}

// tooLargeHint says what to do about a request larger than the provider's
// token quota ever admits: waiting does not help, smaller requests do.
func (c *Client) tooLargeHint() string {
	const fix = " lower embedder.maxTokensPerRequest below what the provider admits at once"
	if tpm := c.cfg.TokensPerMinute; tpm > 0 {
		return fmt.Sprintf("the provider's token quota can never admit a request that large, so it is not retried: embedder.tokensPerMinute (%d) "+
			"lets one request carry up to %d tokens, more than the provider admits; set embedder.tokensPerMinute to the provider's real quota, or%s",
			tpm, c.limits.MaxTokens, fix)
	}
	return "the provider's token quota can never admit a request that large, so it is not retried: set embedder.tokensPerMinute to the provider's " +
		"token quota (a request then carries at most 90% of a second's share of it), or" + fix
}

// quotaHint says what to do about an exhausted quota: waiting does not help.
func (c *Client) quotaHint() string {
	account := "the account"
	if c.cfg.Auth == AuthAPIKey {
		account = "the account whose key is in " + c.cfg.APIKeyEnv
	}
	return "the quota or credits of " + account + " are exhausted, and retrying will not help: " +
		"check its plan and billing details (OpenAI: https://platform.openai.com/settings/organization/billing), " +
		"add credits or raise its spend limit, then run again"
}

// sentSecrets returns the credentials a request carries, for redact: the
// Client's API key, and the values of the api-key header and of an
// Authorization header's bearer token (a Microsoft Entra token).
func (c *Client) sentSecrets(h http.Header) []string {
	return append(credential.FromHeader(h), c.secret.value())
}

// maxRawMessage is the most bytes of a non-JSON error body an *APIError
// keeps (after redaction).
const maxRawMessage = 300

// redact removes credentials from a provider message. It is the one place
// the package does so, and runs before a message is shortened or stored in
// an error. Each secret is replaced by "[redacted]" wherever it appears,
// and so is each run of at least credential.MinRun characters of one (a
// key the provider quoted in part); anything shaped like an OpenAI key (a
// word starting with sk-) is replaced too, whatever the key.
func redact(msg string, secrets ...string) string {
	msg = credential.Redact(msg, secrets...)
	fields := strings.Fields(msg)
	changed := false
	for i, f := range fields {
		if strings.HasPrefix(f, "sk-") {
			fields[i], changed = redacted, true
		}
	}
	if changed {
		msg = strings.Join(fields, " ")
	}
	return msg
}

// truncate shortens msg to at most limit bytes followed by "...". It cuts
// at a character boundary and never inside a "[redacted]" marker, which it
// drops whole rather than leave a piece that reads as something else.
func truncate(msg string, limit int) string {
	if len(msg) <= limit {
		return msg
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	for from := 0; ; {
		i := strings.Index(msg[from:], redacted)
		if i < 0 || from+i >= cut {
			break
		}
		if start, end := from+i, from+i+len(redacted); end > cut {
			cut = start
			break
		}
		from += i + len(redacted)
	}
	return msg[:cut] + "..."
}
