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
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/cenkalti/backoff/v4"

	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/internal/retryafter"
	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
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
	unmanaged  bool // WithoutIndexManagement

	// The constructors of the Microsoft Entra credentials that
	// Config.Credential names: azidentity's, replaced by tests.
	newDefaultCredential func() (azcore.TokenCredential, error)
	newManagedCredential func(*azidentity.ManagedIdentityCredentialOptions) (azcore.TokenCredential, error)
}

// newDefaultAzureCredential is azidentity.NewDefaultAzureCredential with
// default options.
func newDefaultAzureCredential() (azcore.TokenCredential, error) {
	return azidentity.NewDefaultAzureCredential(nil)
}

// newManagedIdentityCredential is azidentity.NewManagedIdentityCredential.
func newManagedIdentityCredential(mo *azidentity.ManagedIdentityCredentialOptions) (azcore.TokenCredential, error) {
	return azidentity.NewManagedIdentityCredential(mo)
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
// method, path, request body size, latency, and status or error (never a
// header, key or token); and, as warnings, each retry of a request that
// got no answer (with the endpoint, the cause, the attempt and the wait;
// see noAnswerPolicy) and an api-version newer than those the store knows.
// By default nothing is logged; a nil l changes nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithoutIndexManagement makes New leave the index alone: it does not
// apply Config.IndexManagement (no request is sent), so that the caller
// decides what happens to the index, as `sluice index` and `sluice doctor`
// do. The store still knows the setting: with CreateIfNotExists, Doctor
// reports an index that does not exist yet as one the first run creates,
// not as a failure, and the error of a request to it (still a
// *ServiceError wrapping ErrIndexNotFound) says what creates it instead of
// advising the setting it already has.
func WithoutIndexManagement() Option {
	return func(o *options) { o.unmanaged = true }
}

// Store is a sink.VectorStore on a Cloud AI Search index. It is safe for
// concurrent use.
//
// A Store never holds the admin key where printing or reflection reaches
// it: its configuration is kept without the key, and the authentication
// policy (which holds the key or the token cache) only inside a closure.
// Printing a Store (fmt's %v, %+v, %#v, or slog) shows what String shows.
type Store struct {
	cfg         Config // without Key
	pl          runtime.Pipeline
	apiVersion  string
	retryDelay  time.Duration
	credentials string       // where the credentials come from, for errors that refuse them
	credName    string       // the credential, e.g. DefaultAzureCredential, for String and a *CredentialError
	tokenHint   string       // how to fix a credential that cannot get a token
	keys        *keyOrder    // whether the key field is sortable, which decides how documents are read (see scan)
	vectors     *vectorReads // whether the index returns the vectors NodeVectors reads
	maxSkip     int          // the largest skip sent: the service's maximum, lowered by tests
	// managed is set when New applied cfg.IndexManagement (not with
	// WithoutIndexManagement): with CreateIfNotExists the index was there,
	// or was created, when the store was opened.
	managed bool

	retry          policy.RetryOptions // azcore's retries of answers (429, 503...), see retryLeft
	log            *slog.Logger        // warnings (retries of requests that got no answer) and, at debug level, attempts
	endpointFrom   string              // where the endpoint came from: the setting or its variable
	apiVersionFrom string              // where the API version came from: the setting, its variable, or "" for the default
}

// New resolves the endpoint, key and API version from the environment where
// cfg leaves them empty, builds the credential, and applies
// cfg.IndexManagement (unless WithoutIndexManagement is given): with
// ValidateIndex it checks the index, with CreateIfNotExists it creates it
// when absent. Errors name the setting or variable to fix. A key
// (sink.cloudsearch.key or the KeyEnv variable) is used without the white
// space around it; one that still holds a control character (a line
// break, a carriage return, a tab, DEL), which no key holds, is refused
// with a *ConfigError that names where it came from and never shows it.
func New(ctx context.Context, cfg Config, opts ...Option) (*Store, error) {
	o := options{getenv: os.Getenv, retryDelay: 800 * time.Millisecond, log: slog.New(slog.DiscardHandler),
		newDefaultCredential: newDefaultAzureCredential, newManagedCredential: newManagedIdentityCredential}
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.normalize()
	endpointFrom := settingPrefix + "endpoint"
	if cfg.Endpoint == "" {
		endpointFrom = cfg.EndpointEnv
		cfg.Endpoint = strings.TrimRight(o.getenv(cfg.EndpointEnv), "/")
		if cfg.Endpoint == "" {
			return nil, configErr("endpoint", "is not set and "+cfg.EndpointEnv+" is empty",
				"set "+cfg.EndpointEnv+"=https://NAME.search.windows.net or sink.cloudsearch.endpoint")
		}
		if reason, hint := endpointProblem(cfg.Endpoint, cfg.KeyEnv); reason != "" {
			return nil, configErr("endpoint", cfg.EndpointEnv+" "+reason, hint)
		}
	}
	apiVersion, apiVersionFrom := cfg.APIVersion, settingPrefix+"apiVersion"
	if apiVersion == "" {
		apiVersion, apiVersionFrom = o.getenv(EnvAPIVersion), EnvAPIVersion
		if apiVersion != "" {
			if problem := apiVersionProblem(apiVersion); problem != "" {
				return nil, configErr("apiVersion", fmt.Sprintf("%s holds %q, which %s", EnvAPIVersion, apiVersion, problem), apiVersionHint(true))
			}
		}
	}
	if apiVersion == "" {
		apiVersion, apiVersionFrom = DefaultAPIVersion, ""
	}
	if !azspec.KnownAPIVersion(apiVersion) {
		o.log.Warn(fmt.Sprintf("cloudsearch: api-version %s (from %s) is newer than the versions this Sluice knows (the newest is %s): it is sent as is, and a refusal by the service is reported as a configuration error",
			apiVersion, apiVersionFrom, azspec.NewestAPIVersion()))
	}
	for _, s := range cfg.strayHidden() {
		hint := "check the name"
		if s.near != "" {
			hint = fmt.Sprintf("did you mean %q?", s.near)
		}
		o.log.Warn(fmt.Sprintf("cloudsearch: sink.cloudsearch.hiddenFieldKeys: %q names no field Sluice writes (%s): the index gets it as an empty hidden field; %s",
			s.key, strings.Join(cfg.writtenFields(), ", "), hint))
	}
	auth, err := authPolicy(&cfg, &o)
	if err != nil {
		return nil, err
	}
	if cfg.Key != "" && cfg.Credential != KeyCredential && o.tokenCred == nil && o.keyCred == nil {
		o.log.Warn(fmt.Sprintf("cloudsearch: sink.cloudsearch.key is set, but sink.cloudsearch.credential is %s, which does not use it: requests authenticate with %s; "+
			"remove the key from the configuration (keys do not belong in files), or set credential: key to use it", cfg.Credential, auth.name))
	}
	cfg.Key = "" // the policy holds it now; the Store must not (see Store)
	s := &Store{cfg: cfg, apiVersion: apiVersion, retryDelay: o.retryDelay, credentials: auth.source, credName: auth.name, tokenHint: auth.tokenHint,
		keys: newKeyOrder(), vectors: new(vectorReads), maxSkip: maxSkip, log: o.log, endpointFrom: endpointFrom, apiVersionFrom: apiVersionFrom,
		retry: policy.RetryOptions{
			MaxRetries:    azcoreRetries(cfg.retries()),
			TryTimeout:    cfg.Timeout,
			RetryDelay:    o.retryDelay,
			MaxRetryDelay: MaxRetryWait,
			StatusCodes:   retriedStatuses,
		}}
	perRetry := []policy.Policy{auth.policy, credentialPolicy{auth.name, auth.setting}, attemptPolicy{}, logPolicy{o.log}, noAnswerPolicy{}}
	s.pl = runtime.NewPipeline("cloudsearch", "v1", runtime.PipelineOptions{PerRetry: perRetry}, &policy.ClientOptions{
		Transport: o.transport,
		Retry:     s.retry,
		Telemetry: policy.TelemetryOptions{ApplicationID: "sluice"},
	})
	if o.unmanaged {
		return s, nil
	}
	if err := s.manageIndex(ctx); err != nil {
		return nil, err
	}
	s.managed = true
	return s, nil
}

// MaxRetryWait is the longest a retry of a request waits: the server's
// Retry-After hint, when it gives one, is honoured up to it (a longer hint
// ends the retries at once, with a *ServiceError saying so), and the
// exponential delay between retries, which doubles from 0.8 s, is capped
// by it (it is reached only after the ninth retry).
const MaxRetryWait = 10 * time.Minute

// azcoreRetries converts a retry count to azcore's policy.RetryOptions
// MaxRetries, where 0 means azcore's default (3) and a negative value means
// no retries.
func azcoreRetries(n int) int32 {
	if n <= 0 {
		return -1
	}
	return int32(n)
}

// retriedStatuses are the answers the pipeline retries (as azcore does by
// default), honouring Retry-After and retry-after-ms: 408 Request Timeout,
// 429 Too Many Requests, 500 Internal Server Error, 502 Bad Gateway, 503
// Service Unavailable and 504 Gateway Timeout. doc.go lists them too.
var retriedStatuses = []int{
	http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// attemptsKey is the context key of a request's attempt counter (see
// call.attempts).
type attemptsKey struct{}

// attemptPolicy counts the attempts of a request whose context carries a
// counter; it runs once per try, after the retry policy.
type attemptPolicy struct{}

// Do counts the attempt and sends the request on.
func (attemptPolicy) Do(req *policy.Request) (*http.Response, error) {
	if n, ok := req.Raw().Context().Value(attemptsKey{}).(*atomic.Int32); ok {
		n.Add(1)
	}
	return req.Next()
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
		attrs = append(attrs, slog.String("error", sentFrom(ctx).redact(err.Error())))
	} else {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	p.log.LogAttrs(ctx, slog.LevelDebug, "search service request", attrs...)
	return resp, err
}

// sentCredentialsKey is the context key of a call's *sentCredentials.
type sentCredentialsKey struct{}

// sentCredentials collects the credentials the attempts of one call sent
// (the api-key header, a bearer token), so that the call redacts them from
// whatever text the service answers with (see redact): a key configured,
// given with WithKeyCredential or rotated with its Update, and a token of
// a Microsoft Entra credential alike. It lives as long as one call, is
// never kept in the Store, an error or a log, and is safe for concurrent
// use. A nil *sentCredentials redacts nothing.
type sentCredentials struct {
	mu      sync.Mutex
	secrets []string
}

// add records a credential sent.
func (sc *sentCredentials) add(secret string) {
	if sc == nil || secret == "" {
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.secrets {
		if s == secret {
			return
		}
	}
	sc.secrets = append(sc.secrets, secret)
}

// redact returns text with the credentials sent redacted.
func (sc *sentCredentials) redact(text string) string {
	if sc == nil {
		return text
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return credential.Redact(text, sc.secrets...)
}

// sentFrom returns the *sentCredentials of ctx's call, or nil.
func sentFrom(ctx context.Context) *sentCredentials {
	sc, _ := ctx.Value(sentCredentialsKey{}).(*sentCredentials)
	return sc
}

// credentialPolicy runs after the authentication policy, on every attempt.
// It records the credential the attempt carries (credential.FromHeader) in
// the call's sentCredentials, and refuses one holding a control character
// with a *ConfigError that azcore does not retry: New checks a configured key, but not one given
// with WithKeyCredential or rotated with its Update, nor a token, and the
// transport would otherwise fail every retry as if the endpoint were
// unreachable.
type credentialPolicy struct {
	name    string // the credential, as authentication.name
	setting string // the setting it comes from, as authentication.setting
}

// Do records and checks the credential, then sends the request on.
func (p credentialPolicy) Do(req *policy.Request) (*http.Response, error) {
	sc := sentFrom(req.Raw().Context())
	for _, v := range credential.FromHeader(req.Raw().Header) {
		sc.add(v)
		if problem := credential.HeaderProblem(v); problem != "" {
			return nil, permanentError{configErr(p.setting, "the "+p.name+" holds "+problem+"; no key or token holds control characters (the value is not shown)",
				"copy the key or credential again, without line breaks or other control characters")}
		}
	}
	return req.Next()
}

// permanentError is an error that azcore's retry policy does not retry.
type permanentError struct{ error }

// NonRetriable marks the error as permanent for azcore.
func (permanentError) NonRetriable() {}

// Unwrap returns the error.
func (e permanentError) Unwrap() error { return e.error }

// redactedError is an error whose message had credentials redacted; Unwrap
// still reaches the original, for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Where the credentials of requests come from, for the hint of a 401 or
// 403: the setting or variable holding the key, or the identity whose role
// assignments to check. Never the key itself.
const (
	identitySource = "the role assignments of the Microsoft Entra identity on this service (" + rolesNeeded + ")"
	adminKey       = " (an admin key of this service)"
)

// rolesNeeded are the Azure roles a Microsoft Entra identity needs on the
// search service.
const rolesNeeded = "Search Index Data Contributor to write and query documents, Search Service Contributor to create, validate or list indexes"

// authentication is the authentication policy of a store and how its
// errors describe it.
type authentication struct {
	policy    policy.Policy
	source    string // where the credentials come from (see identitySource)
	name      string // the credential, e.g. "DefaultAzureCredential" or "admin key from CLOUD_AI_SEARCH_KEY"
	setting   string // the setting that selects it, after settingPrefix: "key" or "credential"
	tokenHint string // how to fix a credential that cannot get a token; "" for keys
}

// authPolicy builds the authentication policy, a key in the api-key header
// or bearer tokens, and says where its credentials come from. The policy
// is wrapped in a closure (opaquePolicy), so that neither the key nor a
// token is reachable from the Store by printing or reflection; a token
// credential is wrapped so that its failures are told apart from requests
// that got no answer (tokenError).
func authPolicy(cfg *Config, o *options) (authentication, error) {
	insecure := isLoopback(cfg.Endpoint)
	bearer := func(cred azcore.TokenCredential, name, hint string) (authentication, error) {
		p := runtime.NewBearerTokenPolicy(markedCredential{cred}, []string{searchScope}, &policy.BearerTokenOptions{InsecureAllowCredentialWithHTTP: insecure})
		return authentication{policy: opaque(p), source: identitySource, name: name, setting: "credential", tokenHint: hint}, nil
	}
	if o.tokenCred != nil {
		return bearer(o.tokenCred, fmt.Sprintf("the credential given to cloudsearch.New (%T)", o.tokenCred),
			"check the credential passed with cloudsearch.WithCredential")
	}
	keyOpts := &runtime.KeyCredentialPolicyOptions{InsecureAllowCredentialWithHTTP: insecure}
	if o.keyCred != nil {
		return authentication{policy: opaque(runtime.NewKeyCredentialPolicy(o.keyCred, "api-key", keyOpts)),
			source: "the key credential given to cloudsearch.New" + adminKey, name: "key credential given to cloudsearch.New", setting: "key"}, nil
	}
	switch cfg.Credential {
	case DefaultCredential:
		cred, err := o.newDefaultCredential()
		if err != nil {
			return authentication{}, configErrCause("credential", "DefaultAzureCredential is unavailable", err, "sign in with `az login`, or set AZURE_CLIENT_ID/AZURE_TENANT_ID with a workload identity, or use credential: key")
		}
		return bearer(cred, "DefaultAzureCredential",
			"sign in with `az login` (or `azd auth login`), or set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or a workload identity's AZURE_FEDERATED_TOKEN_FILE), or run where a managed identity is assigned; or use sink.cloudsearch.credential: key with "+cfg.KeyEnv)
	case ManagedIdentity:
		cred, err := o.newManagedCredential(managedIdentityOptions(cfg, o.getenv))
		if err != nil {
			return authentication{}, configErrCause("credential", "ManagedIdentityCredential is unavailable", err, "run where a managed identity is assigned, and set "+cfg.ManagedIdentityClientIDEnv+" to a user-assigned identity's client id")
		}
		id := "the system-assigned identity, as " + cfg.ManagedIdentityClientIDEnv + " is empty"
		if v := o.getenv(cfg.ManagedIdentityClientIDEnv); v != "" {
			id = "the user-assigned identity " + v + " from " + cfg.ManagedIdentityClientIDEnv
		}
		return bearer(cred, "ManagedIdentityCredential ("+id+")",
			"run where a managed identity is assigned (an Azure VM, App Service, Container Apps, AKS with workload identity), and set "+cfg.ManagedIdentityClientIDEnv+" to the client id of a user-assigned identity that is assigned there; or use sink.cloudsearch.credential: key with "+cfg.KeyEnv)
	}
	// White space around a key (a trailing newline or carriage return of a
	// copied key or of a .env file edited on Windows) is no part of it.
	key, from := strings.TrimSpace(cfg.Key), settingPrefix+"key"
	source, name := settingPrefix+"key"+adminKey, "admin key from "+settingPrefix+"key"
	if key == "" {
		key, from = strings.TrimSpace(o.getenv(cfg.KeyEnv)), cfg.KeyEnv
		source, name = cfg.KeyEnv+adminKey, "admin key from "+cfg.KeyEnv
	}
	if key == "" {
		return authentication{}, configErr("key", "no admin key: "+cfg.KeyEnv+" is empty",
			"set "+cfg.KeyEnv+" to an admin key of the service, or set sink.cloudsearch.credential to default or managedIdentity")
	}
	if problem := credential.HeaderProblem(key); problem != "" {
		return authentication{}, configErr("key", from+" holds "+problem+"; no key holds control characters (the value is not shown here)",
			"set "+from+" to the admin key alone, copied again from the service's Keys page without line breaks or other control characters")
	}
	return authentication{policy: opaque(runtime.NewKeyCredentialPolicy(azcore.NewKeyCredential(key), "api-key", keyOpts)), source: source, name: name, setting: "key"}, nil
}

// opaquePolicy runs a policy that it holds only in a closure, out of reach
// of fmt and of reflection-based printers (a func prints as an address).
type opaquePolicy struct {
	do func(*policy.Request) (*http.Response, error)
}

func opaque(p policy.Policy) opaquePolicy { return opaquePolicy{do: p.Do} }

// Do runs the wrapped policy.
func (p opaquePolicy) Do(req *policy.Request) (*http.Response, error) { return p.do(req) }

// markedCredential is a token credential whose failures are *tokenError,
// whatever the credential: azcore's bearer-token policy returns them
// unchanged, and the store must not report them as unreachable endpoints.
type markedCredential struct{ cred azcore.TokenCredential }

// GetToken asks the wrapped credential for a token.
func (m markedCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tk, err := m.cred.GetToken(ctx, opts)
	if err != nil {
		return tk, &tokenError{err: err}
	}
	return tk, nil
}

// tokenError marks an error of a token credential's GetToken.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// credentialUnavailableType is the type of azidentity's "credential
// unavailable" errors, which azidentity does not export: it is the type
// of what its exported constructor returns.
var credentialUnavailableType = reflect.TypeOf(azidentity.NewCredentialUnavailableError(""))

// credentialFailure tells whether err is the failure of a token credential
// and whether that credential could not even try (not signed in, no managed
// identity here) rather than being refused by Microsoft Entra ID. It
// recognizes errors of the store's own credentials (tokenError) and
// azidentity's AuthenticationFailedError, AuthenticationRequiredError and
// unavailability errors.
func credentialFailure(err error) (failed, unavailable bool) {
	var afe *azidentity.AuthenticationFailedError
	if errors.As(err, &afe) {
		return true, false
	}
	var are *azidentity.AuthenticationRequiredError
	if errors.As(err, &are) || errors.As(err, reflect.New(credentialUnavailableType).Interface()) {
		return true, true
	}
	var te *tokenError
	return errors.As(err, &te), false
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

// Config returns the store's resolved configuration, with the key removed
// (the Store keeps none, see New).
func (s *Store) Config() Config { return s.cfg }

// String describes the store: its endpoint, index, API version and
// credential, never a key or token.
func (s *Store) String() string {
	return fmt.Sprintf("cloudsearch.Store{Endpoint: %s, Index: %s, APIVersion: %s, Credential: %s}", s.cfg.Endpoint, s.cfg.IndexName, s.apiVersion, s.credName)
}

// GoString is String, for the %#v verb.
func (s *Store) GoString() string { return s.String() }

// LogValue logs the store as String describes it, as a group.
func (s *Store) LogValue() slog.Value {
	return slog.GroupValue(slog.String("endpoint", s.cfg.Endpoint), slog.String("index", s.cfg.IndexName),
		slog.String("apiVersion", s.apiVersion), slog.String("credential", s.credName))
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
	upload bool       // a docs/index upload, whose throttling the upload settings ease
	accept string     // the Accept header; "" means application/json

	attempts *atomic.Int32 // if set, counts the attempts sent (retries included)
	// sent, if set, collects the credentials the call sends, for a caller
	// that redacts them from the answer's body itself (per-document
	// messages); do creates one of its own otherwise.
	sent *sentCredentials
}

// do sends c and returns the status and body of a 2xx answer; other
// answers become a *ServiceError (an api-version the service refuses a
// *ConfigError), a credential that cannot get a token a *CredentialError,
// a credential holding a control character a *ConfigError, and failures
// to get an answer a *ConnectionError. Answers are retried by azcore's
// retry policy, a request that got no answer here, in proportion to the
// cause and with a warning per retry (see noAnswerPolicy); both share the
// budget of maxRetries retries. The credentials sent are redacted from the
// service's error message and code, and from a transport error's text; a
// 2xx body is returned as it came.
func (s *Store) do(ctx context.Context, c call) (int, []byte, error) {
	if c.attempts == nil {
		c.attempts = new(atomic.Int32)
	}
	ctx = context.WithValue(ctx, attemptsKey{}, c.attempts)
	sent := c.sent
	if sent == nil {
		sent = &sentCredentials{}
	}
	ctx = context.WithValue(ctx, sentCredentialsKey{}, sent)
	first := c.attempts.Load()
	used := func() int { return int(c.attempts.Load() - first) }
	send := func() (*http.Response, error) {
		resp, err := s.send(s.retryLeft(ctx, used()), c)
		var na *noAnswerError
		if err != nil && ctx.Err() == nil && errors.As(err, &na) && used() < s.noAnswerAttempts(na.err) {
			return nil, err // retried by RetryNotify below
		}
		if err != nil {
			return resp, backoff.Permanent(err)
		}
		return resp, nil
	}
	warn := func(err error, wait time.Duration) {
		var na *noAnswerError
		if errors.As(err, &na) {
			s.warnNoAnswer(ctx, c, sent, na.err, wait, used()+1, s.noAnswerAttempts(na.err))
		}
	}
	resp, err := backoff.RetryNotifyWithData(send, backoff.WithContext(s.newBackOff(), ctx), warn)
	if err != nil {
		return 0, nil, s.failure(ctx, c, sent, err, used())
	}
	return s.answer(ctx, c, sent, resp)
}

// send sends one request of c through the pipeline, which retries answers
// such as 429 and 503, and returns the answer or the pipeline's error.
func (s *Store) send(ctx context.Context, c call) (*http.Response, error) {
	q := url.Values{}
	for k, v := range c.query {
		q[k] = v
	}
	q.Set("api-version", s.apiVersion)
	req, err := runtime.NewRequest(ctx, c.method, s.cfg.Endpoint+c.path+"?"+q.Encode())
	if err != nil {
		return nil, &requestError{fmt.Errorf("cloudsearch: %s: %w", c.op, err)}
	}
	accept := c.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Raw().Header.Set("Accept", accept)
	if c.body != nil {
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(c.body)), "application/json"); err != nil {
			return nil, &requestError{fmt.Errorf("cloudsearch: %s: %w", c.op, err)}
		}
	}
	return s.pl.Do(req)
}

// requestError is a request that could not be built, so was not sent.
type requestError struct{ err error }

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// failure turns the error of a request of c that got no answer it could
// use, after attempts attempts, into the store's error (see do).
func (s *Store) failure(ctx context.Context, c call, sent *sentCredentials, err error, attempts int) error {
	if ctx.Err() != nil {
		return fmt.Errorf("cloudsearch: %s: %w", c.op, ctx.Err())
	}
	var ce *ConfigError
	if errors.As(err, &ce) { // from credentialPolicy
		return ce
	}
	if failed, unavailable := credentialFailure(err); failed {
		return &CredentialError{Op: c.op, Credential: s.credName, Endpoint: s.cfg.Endpoint, Unavailable: unavailable, Hint: s.tokenHint, Err: err}
	}
	var re *requestError
	if errors.As(err, &re) {
		return re.err
	}
	var na *noAnswerError
	if errors.As(err, &na) {
		err = na.err
	}
	if msg := sent.redact(err.Error()); msg != err.Error() {
		err = &redactedError{msg: msg, err: err}
	}
	return s.connectionError(c, attempts, err)
}

// connectionError is the *ConnectionError of a request of c that got no
// answer after attempts attempts (0 when unknown).
func (s *Store) connectionError(c call, attempts int, err error) *ConnectionError {
	return &ConnectionError{Op: c.op, Endpoint: s.cfg.Endpoint, Timeout: s.cfg.Timeout.String(), Attempts: attempts, EndpointFrom: s.endpointFrom, Err: err}
}

// answer reads resp, the answer to a request of c, and returns its status
// and body when it is a 2xx, else the error it means (see do).
func (s *Store) answer(ctx context.Context, c call, sent *sentCredentials, resp *http.Response) (int, []byte, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("cloudsearch: %s: %w", c.op, ctx.Err())
		}
		return 0, nil, s.connectionError(c, 0, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, body, nil
	}
	se := &ServiceError{Op: c.op, StatusCode: resp.StatusCode, Endpoint: s.cfg.Endpoint, RetryAfter: retryafter.Parse(resp.Header, time.Now()), credentials: s.credentials,
		upload: c.upload}
	if c.index {
		se.Index = s.cfg.IndexName
		se.createsIndex = s.cfg.IndexManagement == CreateIfNotExists
		se.indexOpened = s.managed
		se.unvalidated = s.cfg.IndexManagement == NoValidation
	}
	if resp.StatusCode == http.StatusBadRequest && httpsPort(s.cfg.Endpoint, body) {
		return resp.StatusCode, body, s.plainHTTPRefused(se)
	}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &eb) == nil {
		se.Code, se.Message = sent.redact(eb.Error.Code), oneLine(sent.redact(eb.Error.Message))
	}
	if refusedAPIVersion(se) {
		return resp.StatusCode, body, s.apiVersionRefused(se)
	}
	return resp.StatusCode, body, se
}

// plainHTTPAnswers are the texts with which HTTPS servers answer a request
// sent to them in plain HTTP: Go's net/http and nginx's.
var plainHTTPAnswers = []string{"client sent an http request to an https server", "the plain http request was sent to https port"}

// httpsPort reports whether body, of a 400 answer to a request sent to the
// endpoint, says that the endpoint is http:// but the server speaks HTTPS.
func httpsPort(endpoint string, body []byte) bool {
	if !strings.HasPrefix(strings.ToLower(endpoint), "http://") {
		return false
	}
	text := strings.ToLower(string(body[:min(len(body), 4096)]))
	for _, a := range plainHTTPAnswers {
		if strings.Contains(text, a) {
			return true
		}
	}
	return false
}

// plainHTTPRefused is the *ConfigError of an http:// endpoint whose server
// answered se, a 400 saying that it speaks HTTPS: no request can succeed
// until the endpoint says https://.
func (s *Store) plainHTTPRefused(se *ServiceError) *ConfigError {
	from := ""
	if s.endpointFrom != settingPrefix+"endpoint" {
		from = " (from " + s.endpointFrom + ")"
	}
	return configErrCause("endpoint", s.cfg.Endpoint+from+" is http://, but the server at that address speaks HTTPS", &refusedSettingError{se},
		"write the endpoint with https://, as https://"+s.cfg.Endpoint[len("http://"):])
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
