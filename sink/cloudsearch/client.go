package cloudsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// searchScope is the token scope of Cloud AI Search.
const searchScope = "https://search.azure.com/.default"

// Option configures New for Go callers and tests.
type Option func(*options)

type options struct {
	tokenCred  azcore.TokenCredential
	keyCred    *azcore.KeyCredential
	transport  policy.Transporter
	getenv     func(string) string
	retryDelay time.Duration
	log        *slog.Logger
}

// WithCredential authenticates with bearer tokens of cred for scope
// https://search.azure.com/.default, whatever Config.Credential says.
func WithCredential(cred azcore.TokenCredential) Option {
	return func(o *options) { o.tokenCred = cred }
}

// WithKeyCredential authenticates with the admin key held by cred, whatever
// Config.Key and Config.Credential say. The key can be rotated with
// cred.Update while the store is in use.
func WithKeyCredential(cred *azcore.KeyCredential) Option {
	return func(o *options) { o.keyCred = cred }
}

// WithHTTPClient sends requests with client (an *http.Client satisfies
// policy.Transporter).
func WithHTTPClient(client *http.Client) Option {
	return func(o *options) { o.transport = client }
}

// WithTransport sends requests with t.
func WithTransport(t policy.Transporter) Option {
	return func(o *options) { o.transport = t }
}

// WithGetenv replaces os.Getenv for resolving the endpoint, key, API
// version and managed identity client id.
func WithGetenv(getenv func(string) string) Option {
	return func(o *options) { o.getenv = getenv }
}

// WithRetryDelay sets the first delay between retries of a request without
// a Retry-After hint and of documents with a retryable status (default
// 800ms); later delays grow exponentially. Tests use it to run fast.
func WithRetryDelay(d time.Duration) Option {
	return func(o *options) { o.retryDelay = d }
}

// WithLogger logs every attempt of every request at debug level: the
// operation, method, path, status, latency and body sizes (never a header,
// key or token). By default nothing is logged; a nil l changes nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// Store is a sink.VectorStore on a Cloud AI Search index. It is safe for
// concurrent use.
type Store struct {
	cfg         Config
	pl          runtime.Pipeline
	apiVersion  string
	retryDelay  time.Duration
	credentials string // where the credentials come from, for errors that refuse them
}

// New resolves the endpoint, key and API version from the environment where
// cfg leaves them empty, builds the credential, and applies
// cfg.IndexManagement: with ValidateIndex it checks the index, with
// CreateIfNotExists it creates it when absent. Errors name the setting or
// variable to fix.
func New(ctx context.Context, cfg Config, opts ...Option) (*Store, error) {
	o := options{getenv: os.Getenv, retryDelay: 800 * time.Millisecond, log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.normalize()
	if cfg.Endpoint == "" {
		cfg.Endpoint = strings.TrimRight(o.getenv(cfg.EndpointEnv), "/")
		if cfg.Endpoint == "" {
			return nil, configErr("endpoint", "is not set and "+cfg.EndpointEnv+" is empty",
				"set "+cfg.EndpointEnv+"=https://NAME.search.windows.net or sink.cloudsearch.endpoint")
		}
		if !validEndpoint(cfg.Endpoint) {
			return nil, configErr("endpoint", fmt.Sprintf("%s holds %q, which is not an http(s) URL", cfg.EndpointEnv, cfg.Endpoint), "use https://NAME.search.windows.net")
		}
	}
	apiVersion := cfg.APIVersion
	if apiVersion == "" {
		apiVersion = o.getenv(EnvAPIVersion)
		if apiVersion != "" && !apiVersionRE.MatchString(apiVersion) {
			return nil, configErr("apiVersion", fmt.Sprintf("%s holds %q, which is not an API version", EnvAPIVersion, apiVersion), "use "+DefaultAPIVersion+" or a preview such as 2024-09-01-preview")
		}
	}
	if apiVersion == "" {
		apiVersion = DefaultAPIVersion
	}
	auth, credentials, err := authPolicy(&cfg, &o)
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, apiVersion: apiVersion, retryDelay: o.retryDelay, credentials: credentials}
	s.pl = runtime.NewPipeline("cloudsearch", "v1", runtime.PipelineOptions{PerRetry: []policy.Policy{auth, logPolicy{o.log}}}, &policy.ClientOptions{
		Transport: o.transport,
		Retry: policy.RetryOptions{
			MaxRetries:    int32(cfg.MaxRetries),
			TryTimeout:    cfg.Timeout,
			RetryDelay:    o.retryDelay,
			MaxRetryDelay: 2 * time.Minute,
			StatusCodes:   []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
		},
		Telemetry: policy.TelemetryOptions{ApplicationID: "sluice"},
	})
	if err := s.manageIndex(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// logPolicy logs each attempt of a request at debug level. It runs after
// the authentication policy, per retry, and logs nothing that policy added.
type logPolicy struct{ log *slog.Logger }

// Do sends the request on and logs the attempt.
func (p logPolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return req.Next()
	}
	start := time.Now()
	resp, err := req.Next()
	attrs := []slog.Attr{
		slog.String("method", req.Raw().Method), slog.String("path", req.Raw().URL.Path),
		slog.Int64("requestBytes", max(req.Raw().ContentLength, 0)), slog.Duration("latency", time.Since(start)),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	} else {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	p.log.LogAttrs(ctx, slog.LevelDebug, "search service request", attrs...)
	return resp, err
}

// Where the credentials of requests come from, for the hint of a 401 or
// 403: the setting or variable holding the key, or the identity whose role
// assignments to check. Never the key itself.
const (
	identitySource = "the role assignments of the Microsoft Entra identity (Search Index Data Contributor on this service)"
	adminKey       = " (an admin key of this service)"
)

// authPolicy builds the authentication policy, a key in the api-key header
// or bearer tokens, and says where its credentials come from (see
// identitySource).
func authPolicy(cfg *Config, o *options) (policy.Policy, string, error) {
	insecure := isLoopback(cfg.Endpoint)
	bearer := func(cred azcore.TokenCredential) (policy.Policy, string, error) {
		return runtime.NewBearerTokenPolicy(cred, []string{searchScope}, &policy.BearerTokenOptions{InsecureAllowCredentialWithHTTP: insecure}), identitySource, nil
	}
	if o.tokenCred != nil {
		return bearer(o.tokenCred)
	}
	keyOpts := &runtime.KeyCredentialPolicyOptions{InsecureAllowCredentialWithHTTP: insecure}
	if o.keyCred != nil {
		return runtime.NewKeyCredentialPolicy(o.keyCred, "api-key", keyOpts), "the key credential given to cloudsearch.New" + adminKey, nil
	}
	switch cfg.Credential {
	case DefaultCredential:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, "", configErr("credential", "DefaultAzureCredential is unavailable: "+err.Error(), "sign in with `az login`, or set AZURE_CLIENT_ID/AZURE_TENANT_ID with a workload identity, or use credential: key")
		}
		return bearer(cred)
	case ManagedIdentity:
		cred, err := azidentity.NewManagedIdentityCredential(managedIdentityOptions(cfg, o.getenv))
		if err != nil {
			return nil, "", configErr("credential", "ManagedIdentityCredential is unavailable: "+err.Error(), "run where a managed identity is assigned, and set "+cfg.ManagedIdentityClientIDEnv+" to a user-assigned identity's client id")
		}
		return bearer(cred)
	}
	key, source := cfg.Key, settingPrefix+"key"+adminKey
	if key == "" {
		key, source = o.getenv(cfg.KeyEnv), cfg.KeyEnv+adminKey
	}
	if key == "" {
		return nil, "", configErr("key", "no admin key: "+cfg.KeyEnv+" is empty",
			"set "+cfg.KeyEnv+" to an admin key of the service, or set sink.cloudsearch.credential to default or managedIdentity")
	}
	return runtime.NewKeyCredentialPolicy(azcore.NewKeyCredential(key), "api-key", keyOpts), source, nil
}

// managedIdentityOptions selects the user-assigned identity whose client id
// the ManagedIdentityClientIDEnv variable holds, or the system-assigned
// identity when it is empty.
func managedIdentityOptions(cfg *Config, getenv func(string) string) *azidentity.ManagedIdentityCredentialOptions {
	mo := &azidentity.ManagedIdentityCredentialOptions{}
	if id := getenv(cfg.ManagedIdentityClientIDEnv); id != "" {
		mo.ID = azidentity.ClientID(id)
	}
	return mo
}

// isLoopback reports whether endpoint is on this machine (a test or dev
// server), where plain HTTP may carry credentials.
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Config returns the store's resolved configuration, with the key removed.
func (s *Store) Config() Config {
	c := s.cfg
	c.Key = ""
	return c
}

// APIVersion returns the REST API version the store sends.
func (s *Store) APIVersion() string { return s.apiVersion }

// Close releases the store. The store holds no connections of its own (the
// transport belongs to the caller or to azcore), so Close only exists to
// satisfy sink.VectorStore; calling it twice is harmless.
func (s *Store) Close() error { return nil }

// call is one REST request.
type call struct {
	op     string     // for errors, e.g. "upload documents"
	method string     // HTTP method
	path   string     // after the endpoint, e.g. "/indexes"
	query  url.Values // besides api-version
	body   []byte     // JSON, or nil
	index  bool       // whether a 404 means the index is missing
	accept string     // the Accept header; "" means application/json
}

// do sends c and returns the status and body of a 2xx answer; other
// answers become a *ServiceError, failures to get one a *ConnectionError.
func (s *Store) do(ctx context.Context, c call) (int, []byte, error) {
	q := url.Values{}
	for k, v := range c.query {
		q[k] = v
	}
	q.Set("api-version", s.apiVersion)
	req, err := runtime.NewRequest(ctx, c.method, s.cfg.Endpoint+c.path+"?"+q.Encode())
	if err != nil {
		return 0, nil, fmt.Errorf("cloudsearch: %s: %w", c.op, err)
	}
	accept := c.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Raw().Header.Set("Accept", accept)
	if c.body != nil {
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(c.body)), "application/json"); err != nil {
			return 0, nil, fmt.Errorf("cloudsearch: %s: %w", c.op, err)
		}
	}
	resp, err := s.pl.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("cloudsearch: %s: %w", c.op, ctx.Err())
		}
		return 0, nil, &ConnectionError{Op: c.op, Endpoint: s.cfg.Endpoint, Timeout: s.cfg.Timeout.String(), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("cloudsearch: %s: %w", c.op, ctx.Err())
		}
		return 0, nil, &ConnectionError{Op: c.op, Endpoint: s.cfg.Endpoint, Timeout: s.cfg.Timeout.String(), Err: err}
	}
	if resp.StatusCode/100 != 2 {
		se := &ServiceError{Op: c.op, StatusCode: resp.StatusCode, Endpoint: s.cfg.Endpoint, credentials: s.credentials}
		if c.index {
			se.Index = s.cfg.IndexName
		}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &eb) == nil {
			se.Code, se.Message = eb.Error.Code, eb.Error.Message
		}
		return resp.StatusCode, body, se
	}
	return resp.StatusCode, body, nil
}

// doJSON sends c and decodes a 2xx answer into out.
func (s *Store) doJSON(ctx context.Context, c call, out any) error {
	_, body, err := s.do(ctx, c)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("cloudsearch: %s: decode answer: %w", c.op, err)
	}
	return nil
}

func marshal(op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cloudsearch: %s: encode request: %w", op, err)
	}
	return b, nil
}

// indexPath is the path of the store's index, plus suffix.
func (s *Store) indexPath(suffix string) string {
	return "/indexes/" + url.PathEscape(s.cfg.IndexName) + suffix
}

// statusOf returns the HTTP status of a *ServiceError in err's chain, or 0.
func statusOf(err error) int {
	var se *ServiceError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}
