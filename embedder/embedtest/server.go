// Package embedtest is an OpenAI-compatible embeddings server for tests,
// benchmarks and `sluice devserver embeddings`.
//
// It serves POST /v1/embeddings (OpenAI style, Bearer key, model in the
// body) and POST /openai/deployments/{deployment}/embeddings?api-version=...
// (Azure OpenAI style, api-key header or Bearer). Like a real provider it
// enforces per-request caps (HTTP 400), a requests-per-minute and
// tokens-per-minute quota (HTTP 429 with retry-after-ms, Retry-After and
// x-ratelimit-* headers), and latency of a base plus a cost per token; it can
// inject faults (5xx answers, connection resets, stalls, out-of-order data)
// and quote a refused key in its 401 answers, masked or in full, as some
// providers do. Tokens are counted with cl100k_base, as OpenAI does. Like
// OpenAI it refuses (HTTP 400, param dimensions) the dimensions parameter for
// a known model that cannot shorten its vectors (text-embedding-ada-002) and
// values above a known model's size. Vectors come from the hash embedder, so
// answers are deterministic. Stats counts what was served, so callers can
// compute quota utilisation.
//
// Each quota is a bucket that refills continuously at its per-minute rate
// and holds Options.Window's worth of it (one second by default), at least
// one request and one input's cap of tokens. With both quotas the token
// bucket also holds at least TPM/RPM tokens: a quota that grants R requests
// and T tokens a minute admits a request of T/R tokens. A request is
// charged when it arrives; one the buckets would admit within
// Options.Slack is admitted at once. A request of more tokens than the
// token bucket holds can never be admitted: it is answered 429 with the
// message "Request too large: ...", as OpenAI words that answer, which a
// client should not retry.
package embedtest

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiktoken-go/tokenizer"
	"golang.org/x/time/rate"

	"github.com/sluice-dev/sluice/embedder"
)

// Fault is a kind of injected failure.
type Fault string

// Injected faults.
const (
	Fault500     Fault = "500"     // HTTP 500 with an error body
	Fault502     Fault = "502"     // HTTP 502
	Fault503     Fault = "503"     // HTTP 503
	Fault504     Fault = "504"     // HTTP 504
	FaultReset   Fault = "reset"   // the connection is reset without an answer
	FaultStall   Fault = "stall"   // no answer until Options.Stall passes or the client gives up
	FaultReorder Fault = "reorder" // a correct answer with data in shuffled order
	// FaultQuota answers HTTP 429 with OpenAI's insufficient_quota error
	// (type and code): the account's quota or credits are exhausted. Unlike
	// a rate limit it does not pass, so it is not in AllFaults.
	FaultQuota Fault = "insufficient_quota"
)

// KeyEcho is how a Server's 401 answer quotes the key it refused.
type KeyEcho int

// Ways to quote a refused key.
const (
	// EchoNone quotes no key, as OpenAI and Azure OpenAI do today.
	EchoNone KeyEcho = iota
	// EchoMasked quotes the key masked as OpenAI did, its first 6 and last
	// 3 characters: "Incorrect API key provided: sk-abc***...xyz." Keys of
	// fewer than 12 characters are quoted as "***".
	EchoMasked
	// EchoFull quotes the whole key, as some OpenAI-compatible servers do.
	EchoFull
)

// AllFaults is the default fault mix: the transient faults a client should
// retry until it succeeds.
var AllFaults = []Fault{Fault500, Fault502, Fault503, Fault504, FaultReset, FaultStall, FaultReorder}

// Options configure a Server. Zero fields take the defaults stated.
// The names map to the flags of `sluice devserver embeddings`.
type Options struct {
	// RPM and TPM are the requests and tokens per minute quota; 0 is
	// unlimited (--rpm, --tpm).
	RPM, TPM int
	// Window is how much quota may be used at once: the quota buckets hold
	// Window's worth (at least one request, and MaxInputTokens tokens) and
	// refill continuously; default 1s, like providers that enforce per-minute
	// quotas over short windows. With both quotas the token bucket also
	// holds at least TPM/RPM tokens, one request's share: a quota that
	// grants RPM requests and TPM tokens a minute admits a request of
	// TPM/RPM tokens.
	Window time.Duration
	// Latency is the base time to answer a request (--latency); TokenLatency
	// is added per token (--token-latency). Default 0.
	Latency, TokenLatency time.Duration
	// FaultRate is the fraction of admitted requests that get a fault from
	// Faults (--fault-rate); default 0.
	FaultRate float64
	// Faults is the mix of faults to inject; default AllFaults.
	Faults []Fault
	// Stall is how long a stalled request waits before answering 504;
	// default 0, until the client gives up or the server closes.
	Stall time.Duration
	// OnStall, when set, is called each time a request starts to stall
	// (FaultStall), in the request's goroutine, before the stall waits. It
	// must be safe for concurrent use and must not block. Tests use it to
	// learn that a stall is under way without polling Stats. It is left
	// out of JSON (which cannot encode a func), so logging Options with
	// slog's JSON handler keeps working.
	OnStall func() `json:"-"`
	// Shuffle returns the data of every answer in shuffled order.
	Shuffle bool
	// Slack tolerates network jitter: a request the quota would admit
	// within Slack is admitted now (and charged in advance), so that a
	// client pacing itself exactly at the quota is not refused because its
	// requests arrived a little bunched; default 50ms.
	Slack time.Duration
	// NoRateLimitHeaders leaves out the x-ratelimit-* headers, like servers
	// that do not send them; clients then learn of the quota only from 429s.
	NoRateLimitHeaders bool
	// RetryAfter, when set, is the delay every 429 asks for instead of the
	// time the quota needs to admit the request.
	RetryAfter time.Duration
	// Dimensions is the vector length unless a request asks for
	// dimensions (--dimensions); default 1536.
	Dimensions int
	// Key, when set, is the API key every request must carry (Bearer, or
	// api-key on the Azure route).
	Key string
	// EchoKey makes the 401 answer to a wrong key quote the key the request
	// carried, masked or in full, to check that clients keep provider
	// messages free of keys; default EchoNone.
	EchoKey KeyEcho
	// Model, when set, is the only model /v1/embeddings serves (others get
	// 404), and the model behind the Azure route's deployment. Deployment,
	// when set, is the only deployment the Azure route serves. When the
	// model is one of OpenAI's (the request's model on /v1/embeddings, Model
	// on the Azure route), dimensions is checked as OpenAI does: 400 for
	// text-embedding-ada-002, which cannot shorten its vectors, and for
	// values above the model's size (1536, or 3072 for
	// text-embedding-3-large).
	Model, Deployment string
	// MaxInputs, MaxTokens and MaxInputTokens are the request caps; default
	// 2048 inputs, 300000 tokens, 8192 tokens per input, OpenAI's caps.
	MaxInputs, MaxTokens, MaxInputTokens int
	// Seed seeds fault injection and shuffling; default 1.
	Seed int64
}

func (o *Options) applyDefaults() {
	if o.Window <= 0 {
		o.Window = time.Second
	}
	if o.Slack <= 0 {
		o.Slack = 50 * time.Millisecond
	}
	if o.Faults == nil {
		o.Faults = AllFaults
	}
	if o.Dimensions <= 0 {
		o.Dimensions = embedder.DefaultDimensions
	}
	if o.MaxInputs <= 0 {
		o.MaxInputs = embedder.DefaultMaxInputsPerRequest
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = embedder.DefaultMaxTokensPerRequest
	}
	if o.MaxInputTokens <= 0 {
		o.MaxInputTokens = embedder.DefaultMaxTokensPerInput
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// plainOptions has the fields of Options and none of its methods.
type plainOptions Options

// redacted returns o with Key replaced by "[redacted]" (if set), as a type
// that fmt and slog print field by field and that reflect names
// embedtest.Options.
func (o Options) redacted() any {
	type Options plainOptions
	if o.Key != "" {
		o.Key = "[redacted]"
	}
	return Options(o)
}

// Format prints the options as fmt would, for every verb, but with Key
// redacted: logging the options of a test or dev server never shows its key.
func (o Options) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), o.redacted())
}

// LogValue logs the options with Key redacted.
func (o Options) LogValue() slog.Value { return slog.AnyValue(o.redacted()) }

// Stats counts what a Server saw and served. Fields are totals since the
// Server was created.
type Stats struct {
	Requests     int64 // requests received
	OK           int64 // answered 200
	Throttled    int64 // answered 429 for the rate quota (not FaultQuota)
	TooLarge     int64 // answered 400 for breaking a request cap
	BadRequests  int64 // answered 400 for another reason
	Unauthorized int64 // answered 401
	NotFound     int64 // answered 404
	Faults       int64 // injected faults (reorders and FaultQuota included)
	TokensServed int64 // tokens of requests answered 200
	InputsServed int64 // inputs of requests answered 200
}

// Server is the test server, an http.Handler. It is safe for concurrent use.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	codec tokenizer.Codec

	mu  sync.Mutex // guards rng, rpm, tpm
	rng *rand.Rand
	rpm *rate.Limiter
	tpm *rate.Limiter

	closeOnce sync.Once
	closed    chan struct{}

	requests, ok, throttled, tooLarge, badRequests, unauthorized, notFound, faults, tokens, inputs atomic.Int64
}

// NewHandler returns a Server with the given options. It panics if the
// cl100k_base tokenizer cannot be loaded (it is compiled in).
func NewHandler(opts Options) *Server {
	opts.applyDefaults()
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		panic("embedtest: loading cl100k_base: " + err.Error())
	}
	s := &Server{
		opts:   opts,
		mux:    http.NewServeMux(),
		codec:  codec,
		rng:    rand.New(rand.NewPCG(uint64(opts.Seed), 0x5eed)),
		closed: make(chan struct{}),
	}
	if q := opts.RPM; q > 0 {
		s.rpm = rate.NewLimiter(rate.Limit(float64(q)/60), max(1, int(float64(q)*opts.Window.Minutes())))
	}
	if q := opts.TPM; q > 0 {
		s.tpm = rate.NewLimiter(rate.Limit(float64(q)/60), tokenBurst(opts))
	}
	s.mux.HandleFunc("POST /v1/embeddings", s.serveOpenAI)
	s.mux.HandleFunc("POST /openai/deployments/{deployment}/embeddings", s.serveAzure)
	return s
}

// tokenBurst is the most tokens the token bucket of opts holds (TPM set):
// Window's worth of the quota, at least one input's cap, and, with an RPM
// quota, at least TPM/RPM, one request's share. A quota that grants R
// requests and T tokens a minute admits a request of T/R tokens, however
// short the window it enforces them over.
func tokenBurst(opts Options) int {
	burst := max(opts.MaxInputTokens, int(float64(opts.TPM)*opts.Window.Minutes()))
	if opts.RPM > 0 {
		burst = max(burst, opts.TPM/opts.RPM)
	}
	return burst
}

// String describes the Server by its options, with the key redacted.
func (s *Server) String() string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("embedtest.Server%+v", s.opts)
}

// Format writes String for every verb: fmt never walks the Server's fields,
// which hold the key.
func (s *Server) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue logs the Server's options, with the key redacted.
func (s *Server) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil>")
	}
	return s.opts.LogValue()
}

// ServeHTTP serves the embeddings routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mux.ServeHTTP(w, r)
}

// Close ends stalls and latency waits in progress, so that an http.Server
// serving s can shut down promptly. It may be called more than once.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests:     s.requests.Load(),
		OK:           s.ok.Load(),
		Throttled:    s.throttled.Load(),
		TooLarge:     s.tooLarge.Load(),
		BadRequests:  s.badRequests.Load(),
		Unauthorized: s.unauthorized.Load(),
		NotFound:     s.notFound.Load(),
		Faults:       s.faults.Load(),
		TokensServed: s.tokens.Load(),
		InputsServed: s.inputs.Load(),
	}
}

// TB is the part of testing.TB that Start needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// Start serves a new Server on 127.0.0.1 on a free port until the test
// ends, and returns it with its base URL (no trailing slash); the OpenAI
// base URL is url+"/v1", the Azure endpoint is url.
func Start(t TB, opts Options) (*Server, string) {
	t.Helper()
	s := NewHandler(opts)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	return s, hs.URL
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	if s.opts.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.Key {
		s.unauthorized.Add(1)
		msg := "Incorrect API key provided. You can find your API key in your account settings."
		if q := s.quoteKey(bearerKey(r)); q != "" {
			msg = "Incorrect API key provided: " + q + ". You can find your API key at https://platform.openai.com/account/api-keys."
		}
		writeError(w, http.StatusUnauthorized, "invalid_api_key", msg)
		return
	}
	req, ok := s.decode(w, r)
	if !ok {
		return
	}
	if req.Model == "" {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "missing_model", "you must provide a model parameter")
		return
	}
	if s.opts.Model != "" && req.Model != s.opts.Model {
		s.notFound.Add(1)
		writeError(w, http.StatusNotFound, "model_not_found", "The model `"+req.Model+"` does not exist or you do not have access to it.")
		return
	}
	if !s.checkDimensions(w, req.Model, req.Dimensions) {
		return
	}
	s.embed(w, r, req)
}

func (s *Server) serveAzure(w http.ResponseWriter, r *http.Request) {
	if s.opts.Key != "" && r.Header.Get("api-key") != s.opts.Key && r.Header.Get("Authorization") != "Bearer "+s.opts.Key {
		s.unauthorized.Add(1)
		msg := "Access denied due to invalid subscription key or wrong API endpoint."
		if q := s.quoteKey(cmp.Or(r.Header.Get("api-key"), bearerKey(r))); q != "" {
			msg = "Access denied due to invalid subscription key " + q + " or wrong API endpoint."
		}
		writeError(w, http.StatusUnauthorized, "401", msg)
		return
	}
	if r.URL.Query().Get("api-version") == "" {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
		return
	}
	if d := r.PathValue("deployment"); s.opts.Deployment != "" && d != s.opts.Deployment {
		s.notFound.Add(1)
		writeError(w, http.StatusNotFound, "DeploymentNotFound", "The API deployment for this resource does not exist.")
		return
	}
	req, ok := s.decode(w, r)
	if !ok {
		return
	}
	// The body's model is ignored: the deployment selects the model.
	if !s.checkDimensions(w, s.opts.Model, req.Dimensions) {
		return
	}
	s.embed(w, r, req)
}

// bearerKey returns the key of the request's Bearer authorization, if any.
func bearerKey(r *http.Request) string {
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return key
	}
	return ""
}

// quoteKey quotes a refused key as Options.EchoKey says; "" when the answer
// quotes none (EchoNone, or the request carried no key).
func (s *Server) quoteKey(key string) string {
	switch {
	case s.opts.EchoKey == EchoNone || key == "":
		return ""
	case s.opts.EchoKey == EchoFull:
		return key
	case len(key) < 12:
		return "***"
	default:
		return key[:6] + "***..." + key[len(key)-3:]
	}
}

// openAIModels are OpenAI's embedding models: the length of the vectors
// each returns by default, its largest, and whether it accepts dimensions
// ("Only supported in text-embedding-3 and later models", OpenAI's API
// reference). The double keeps its own table, independent of the client's.
var openAIModels = map[string]struct {
	dims    int
	shorten bool
}{
	"text-embedding-3-small": {1536, true},
	"text-embedding-3-large": {3072, true},
	"text-embedding-ada-002": {1536, false},
}

// checkDimensions answers 400, as OpenAI does, when a request asks for
// dimensions that model cannot give. Unknown models are not checked.
func (s *Server) checkDimensions(w http.ResponseWriter, model string, dims int) bool {
	m, known := openAIModels[model]
	if dims == 0 || !known {
		return true
	}
	var msg, code string
	switch {
	case !m.shorten:
		msg = "This model does not support specifying dimensions."
	case dims > m.dims:
		msg = "Invalid 'dimensions': integer above maximum value. Expected a value <= " + strconv.Itoa(m.dims) +
			", but got " + strconv.Itoa(dims) + " instead."
		code = "integer_above_max_value"
	default:
		return true
	}
	s.badDimensions(w, msg, code)
	return false
}

// badDimensions answers 400 for the dimensions parameter, as OpenAI does
// (param dimensions; an empty code is sent as null).
func (s *Server) badDimensions(w http.ResponseWriter, msg, code string) {
	s.badRequests.Add(1)
	writeErrorBody(w, http.StatusBadRequest, apiError{Message: msg, Type: "invalid_request_error", Param: "dimensions", Code: code})
}

type request struct {
	Model          string
	Input          []string
	EncodingFormat string
	Dimensions     int
}

func (s *Server) decode(w http.ResponseWriter, r *http.Request) (request, bool) {
	var body struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
	}
	bad := func(msg string) (request, bool) {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return request{}, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&body); err != nil {
		return bad("We could not parse the JSON body of your request: " + err.Error())
	}
	req := request{Model: body.Model, EncodingFormat: body.EncodingFormat}
	if body.Dimensions != nil {
		if d := *body.Dimensions; d < 1 || d > 65536 {
			s.badDimensions(w, "Invalid 'dimensions': must be between 1 and 65536, but got "+strconv.Itoa(d)+" instead.", "invalid_value")
			return request{}, false
		}
		req.Dimensions = *body.Dimensions
	}
	var one string
	if err := json.Unmarshal(body.Input, &one); err == nil {
		req.Input = []string{one}
	} else if err := json.Unmarshal(body.Input, &req.Input); err != nil {
		return bad("'input' must be a string or an array of strings")
	}
	if len(req.Input) == 0 {
		return bad("'input' must not be empty")
	}
	for _, in := range req.Input {
		if in == "" {
			return bad("'$.input' is invalid: empty strings are not allowed")
		}
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return bad("encoding_format must be float or base64")
	}
	return req, true
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request, req request) {
	tokens, ok := s.checkCaps(w, req.Input)
	if !ok {
		return
	}
	if !s.admit(w, tokens) {
		return
	}
	fault := s.pickFault()
	if fault != "" {
		s.faults.Add(1)
	}
	switch fault {
	case Fault500, Fault502, Fault503, Fault504:
		code, _ := strconv.Atoi(string(fault))
		writeError(w, code, "server_error", "The server had an error while processing your request (injected fault).")
		return
	case FaultQuota:
		writeErrorBody(w, http.StatusTooManyRequests, apiError{
			Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, " +
				"read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors. (injected fault)",
			Type: "insufficient_quota", Code: "insufficient_quota"})
		return
	case FaultReset:
		reset(w)
		return
	case FaultStall:
		if s.opts.OnStall != nil {
			s.opts.OnStall()
		}
		if s.wait(r.Context(), s.opts.Stall, s.opts.Stall == 0) {
			writeError(w, http.StatusGatewayTimeout, "timeout", "The request stalled (injected fault).")
		}
		return
	}
	latency := s.opts.Latency + time.Duration(tokens)*s.opts.TokenLatency
	if !s.wait(r.Context(), latency, false) {
		return
	}
	dims := s.opts.Dimensions
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	order := make([]int, len(req.Input))
	for i := range order {
		order[i] = i
	}
	if fault == FaultReorder || s.opts.Shuffle {
		s.mu.Lock()
		s.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		s.mu.Unlock()
	}
	body := encode(embedder.NewHash(dims), req, order, tokens)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	// Count before writing: once the client has the answer, Stats must
	// show it.
	s.ok.Add(1)
	s.tokens.Add(int64(tokens))
	s.inputs.Add(int64(len(req.Input)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// checkCaps counts tokens and answers 400 when a cap is broken.
func (s *Server) checkCaps(w http.ResponseWriter, inputs []string) (int, bool) {
	tooLarge := func(msg string) (int, bool) {
		s.tooLarge.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return 0, false
	}
	if len(inputs) > s.opts.MaxInputs {
		return tooLarge("'input' has " + strconv.Itoa(len(inputs)) + " items; the maximum is " + strconv.Itoa(s.opts.MaxInputs))
	}
	total := 0
	for i, in := range inputs {
		n, _ := s.codec.Count(in)
		if n > s.opts.MaxInputTokens {
			return tooLarge("This model's maximum context length is " + strconv.Itoa(s.opts.MaxInputTokens) +
				" tokens, however input " + strconv.Itoa(i) + " has " + strconv.Itoa(n) + " tokens.")
		}
		total += n
	}
	if total > s.opts.MaxTokens {
		return tooLarge("Requested " + strconv.Itoa(total) + " tokens, max " + strconv.Itoa(s.opts.MaxTokens) + " tokens per request")
	}
	return total, true
}

// admit takes the request from the quota, or answers 429.
func (s *Server) admit(w http.ResponseWriter, tokens int) bool {
	s.mu.Lock()
	now := time.Now()
	var wait time.Duration
	var rr, tr *rate.Reservation
	tooBig := false
	if s.rpm != nil {
		rr = s.rpm.ReserveN(now, 1)
		wait = max(wait, rr.DelayFrom(now))
	}
	if s.tpm != nil {
		tr = s.tpm.ReserveN(now, tokens)
		if !tr.OK() {
			tooBig = true
		} else {
			wait = max(wait, tr.DelayFrom(now))
		}
	}
	admitted := wait <= s.opts.Slack && !tooBig
	if !admitted {
		for _, res := range []*rate.Reservation{rr, tr} {
			if res != nil && res.OK() {
				res.CancelAt(now)
			}
		}
	}
	if !s.opts.NoRateLimitHeaders {
		s.rateHeaders(w.Header(), now)
	}
	s.mu.Unlock()
	if admitted {
		return true
	}
	s.throttled.Add(1)
	if s.opts.RetryAfter > 0 {
		wait = s.opts.RetryAfter
	}
	msg := "Rate limit reached: requests per minute " + strconv.Itoa(s.opts.RPM) + ", tokens per minute " + strconv.Itoa(s.opts.TPM) + ". Please try again later."
	if tooBig {
		wait = max(wait, s.opts.Window)
		msg = "Request too large: " + strconv.Itoa(tokens) + " tokens is more than the token quota admits at once (" + strconv.Itoa(s.tpm.Burst()) + "). Send smaller requests."
	}
	w.Header().Set("retry-after-ms", strconv.FormatInt(int64(math.Ceil(float64(wait)/float64(time.Millisecond))), 10))
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", msg)
	return false
}

// rateHeaders sets the x-ratelimit-* headers; s.mu must be held.
func (s *Server) rateHeaders(h http.Header, now time.Time) {
	set := func(kind string, quota int, l *rate.Limiter) {
		if l == nil {
			return
		}
		left := max(0, l.TokensAt(now))
		h.Set("x-ratelimit-limit-"+kind, strconv.Itoa(quota))
		h.Set("x-ratelimit-remaining-"+kind, strconv.Itoa(int(left)))
		full := time.Duration((float64(l.Burst()) - left) / float64(l.Limit()) * float64(time.Second))
		h.Set("x-ratelimit-reset-"+kind, full.Round(time.Millisecond).String())
	}
	set("requests", s.opts.RPM, s.rpm)
	set("tokens", s.opts.TPM, s.tpm)
}

func (s *Server) pickFault() Fault {
	if s.opts.FaultRate <= 0 || len(s.opts.Faults) == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng.Float64() >= s.opts.FaultRate {
		return ""
	}
	return s.opts.Faults[s.rng.IntN(len(s.opts.Faults))]
}

// wait waits d (forever when d is 0 and forever is set) and reports whether
// it ran out; it returns false early when the request or server ends.
func (s *Server) wait(ctx context.Context, d time.Duration, forever bool) bool {
	if d <= 0 && !forever {
		return true
	}
	var timeout <-chan time.Time
	if !forever {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-ctx.Done():
		return false
	case <-s.closed:
		return false
	}
}

// reset closes the connection at once with a TCP RST, without an answer.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// apiError is the error object of an OpenAI error answer. Empty Param and
// Code are sent as null, as OpenAI does.
type apiError struct {
	Message, Type, Param, Code string
}

// writeError answers status with an error of type server_error (5xx) or
// invalid_request_error and the given code.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeErrorBody(w, status, apiError{Message: msg, Type: typ, Code: code})
}

// writeErrorBody answers status with {"error":{"message","type","param","code"}}.
func writeErrorBody(w http.ResponseWriter, status int, e apiError) {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	body.Error.Message, body.Error.Type, body.Error.Param, body.Error.Code = e.Message, e.Type, null(e.Param), null(e.Code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// encode writes the answer by hand: encoding/json is slow on large float
// arrays.
func encode(h *embedder.Hash, req request, order []int, tokens int) []byte {
	b := make([]byte, 0, 64+len(order)*(h.Dimensions()*12+64))
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for k, i := range order {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		v := h.Vector(req.Input[i])
		if req.EncodingFormat == "base64" {
			raw = raw[:0]
			for _, f := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, f := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = strconv.AppendQuote(b, req.Model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	return append(b, "}}"...)
}
