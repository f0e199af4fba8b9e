package searchtest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
)

// APIVersion is the REST api-version the server implements. Requests must
// send a version the service publishes (azspec.APIVersions) in the
// api-version query parameter; every one is answered with this version's
// rules.
const APIVersion = "2024-07-01"

// DefaultMaxBatchBytes is the largest docs/index request body accepted
// before answering 413, as the service's 16 MB limit.
const DefaultMaxBatchBytes = 16 << 20

// MaxBatchActions is the largest number of actions in one docs/index request.
const MaxBatchActions = 1000

// Options configures a Server. The zero value is an open server (no
// credentials configured, so none are checked) without schema validation,
// latency or faults.
type Options struct {
	// Key is the admin api-key that must be sent in the api-key header.
	// Empty means no api-key is accepted. When both Key and BearerTokens
	// are empty, requests are not authenticated at all.
	Key string
	// BearerTokens are the accepted Authorization: Bearer tokens (tests use
	// a fake azcore TokenCredential that hands out one of them).
	BearerTokens []string
	// SpecDir, if set, is the directory of the official 2024-07-01 swagger
	// (searchindex.json, searchservice.json), or the directory above it
	// with one subfolder per api-version (see FindSpecDir). Every request
	// body is then validated against its schema (IndexBatch, SearchRequest,
	// SearchIndex), and invalid bodies are answered 400 with the details.
	SpecDir string
	// Latency is added to every request; a cancelled request stops waiting.
	Latency time.Duration
	// FaultRate is the probability in [0, 1] that a data-plane (docs)
	// request is answered 503 with Retry-After.
	FaultRate float64
	// Seed seeds the fault generator, so faults are reproducible.
	Seed int64
	// Replicas, above 1, makes the server answer as a service with that
	// many replicas does, each ordering documents of equal score (every
	// result of search=*, and ties of $orderby) its own way, as the
	// service documents their order as arbitrary: replica 0 orders them by
	// key, the others each in an order of their own. A search with a
	// sessionId is answered by the replica the sessionId picks, every time
	// (the service's sticky sessions); one without, by the next replica in
	// turn. With 0 or 1 replica, ties are ordered by key.
	Replicas int
	// RecordLimit bounds the requests kept for Requests: 0 keeps all (tests),
	// a positive n keeps the n most recent, a negative value keeps none (a
	// long-running devserver).
	RecordLimit int
}

// RecordedRequest is one request the server answered, for inspection by
// tests. Credentials are never recorded, only which scheme was used.
type RecordedRequest struct {
	Method string
	Path   string // URL path, decoded
	Query  string // raw query string
	Body   []byte
	Status int    // status code answered
	Auth   string // "api-key", "bearer" or "" (none sent)
}

// Server is an in-memory Cloud AI Search service. It is an http.Handler and
// is safe for concurrent use.
type Server struct {
	opts    Options
	schemas *schemaSet
	specDir string // the folder the schemas were loaded from
	specErr error

	mu            sync.Mutex
	indexes       map[string]*index
	requests      []RecordedRequest
	rng           *rand.Rand
	failNext      int
	failStatus    int
	failRetry     time.Duration
	failAfter     int // FailAfterApply: writes left to apply and then fail
	failAfterCode int
	keyFaults     map[string]keyFault
	maxBatchBytes int
	nextReplica   int // the replica that answered the last search without a sessionId
}

type keyFault struct {
	status int
	times  int
}

// NewServer returns a Server configured by opts. If opts.SpecDir is set but
// the schemas cannot be loaded, every request is answered 500 naming the
// problem (Start fails the test instead); see SpecError.
func NewServer(opts Options) *Server {
	s := &Server{
		opts:          opts,
		indexes:       map[string]*index{},
		rng:           rand.New(rand.NewPCG(uint64(opts.Seed), 0x5eed)),
		keyFaults:     map[string]keyFault{},
		maxBatchBytes: DefaultMaxBatchBytes,
	}
	if opts.SpecDir != "" {
		s.specDir, s.specErr = FindSpecDir(opts.SpecDir)
		if s.specErr == nil {
			s.schemas, s.specErr = loadSchemas(s.specDir)
		}
	}
	return s
}

// SpecError reports why the schemas of Options.SpecDir could not be loaded
// (a *SpecDirError when no definitions were found there), or nil.
func (s *Server) SpecError() error { return s.specErr }

// SpecDir returns the folder whose definitions validate request bodies:
// Options.SpecDir or the version folder found below it (see FindSpecDir);
// "" without Options.SpecDir.
func (s *Server) SpecDir() string { return s.specDir }

// Start runs a new Server on 127.0.0.1 with httptest, registers its Close
// with t.Cleanup, and returns it with its endpoint URL. It fails the test if
// opts.SpecDir is set and cannot be loaded.
func Start(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	s := NewServer(opts)
	if s.specErr != nil {
		t.Fatalf("searchtest: %v", s.specErr)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// FailNext makes the next n data-plane (docs) requests fail with status
// (429 or 503 for throttling, 500 for a server error) and, when retryAfter
// is positive, the Retry-After and retry-after-ms headers set from it.
func (s *Server) FailNext(n int, status int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext, s.failStatus, s.failRetry = n, status, retryAfter
}

// FailAfterApply makes the next n write requests that succeed (POST
// /indexes, PUT or DELETE /indexes/NAME, POST docs/index) take effect and
// then be answered with status (500, 502, 503 or 504, say) instead of their
// answer, as when the service did the work but its answer was lost. A
// client that retries such a request meets what its first attempt did: a
// retried index creation is answered 409, the index exists.
func (s *Server) FailAfterApply(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter, s.failAfterCode = n, status
}

// FailKeys makes the given document keys fail with the per-document status
// (for example 409, 422, 503 or 400) the next times they appear in a
// docs/index request, which is then answered 207. The failed actions are
// not applied.
func (s *Server) FailKeys(status int, times int, keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.keyFaults[k] = keyFault{status: status, times: times}
	}
}

// SetMaxBatchBytes sets the largest docs/index request body accepted; larger
// bodies are answered 413. The default is DefaultMaxBatchBytes.
func (s *Server) SetMaxBatchBytes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBatchBytes = n
}

// Documents returns copies of the documents stored in the named index,
// every field included (retrievable or not), sorted by key. Vector fields
// are []float32.
func (s *Server) Documents(indexName string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[indexName]
	if !ok {
		return nil
	}
	keys := ix.sortedKeys()
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, cloneDoc(ix.docs[k]))
	}
	return out
}

// Requests returns the requests answered so far, oldest first (see
// Options.RecordLimit).
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RecordedRequest, len(s.requests))
	for i, r := range s.requests {
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// Index returns the stored definition of the named index, as GET answers it.
func (s *Server) Index(name string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(ix.raw)
	if err != nil {
		return nil, false
	}
	return b, true
}

// statusRecorder remembers the status written through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// ServeHTTP answers one REST request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	var body []byte
	if apiErr := s.serve(rec, r, &body); apiErr != nil {
		writeError(rec, apiErr)
	}
	s.record(r, body, rec.status)
}

func (s *Server) record(r *http.Request, body []byte, status int) {
	auth := ""
	switch {
	case r.Header.Get("api-key") != "":
		auth = "api-key"
	case strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "):
		auth = "bearer"
	}
	if s.opts.RecordLimit < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, RecordedRequest{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Body: body, Status: status, Auth: auth,
	})
	if n := s.opts.RecordLimit; n > 0 && len(s.requests) > n {
		s.requests = slices.Delete(s.requests, 0, len(s.requests)-n)
	}
}

// readBody reads the request body up to the batch byte limit.
func (s *Server) readBody(r *http.Request) ([]byte, *apiError) {
	if r.Body == nil {
		return nil, nil
	}
	s.mu.Lock()
	limit := s.maxBatchBytes
	s.mu.Unlock()
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, badRequest("The request body could not be read: %v", err)
	}
	if len(b) > limit {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "RequestEntityTooLarge",
			message: "The request is too large: the body exceeds " + strconv.Itoa(limit) + " bytes. Send fewer or smaller documents per docs/index request."}
	}
	return b, nil
}

// serve checks and answers one request in the service's order: api-version,
// credentials, route, body size, injected faults, then the operation. The
// body read is left in *body for the request record.
//
// The body is read before the injected latency: net/http notices a client
// that went away (and cancels r.Context()) only once the body is consumed.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, body *[]byte) *apiError {
	raw, readErr := s.readBody(r)
	if err := s.wait(r); err != nil {
		return err
	}
	if s.specErr != nil {
		return &apiError{status: http.StatusInternalServerError, code: "SpecUnavailable", message: s.specErr.Error()}
	}
	if err := checkAPIVersion(r); err != nil {
		return err
	}
	if err := s.authenticate(r); err != nil {
		return err
	}
	rt, err := parseRoute(r.URL.Path)
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	*body = raw
	if rt.dataPlane() {
		if err := s.injectFault(w); err != nil {
			return err
		}
	}
	s.mu.Lock()
	failAfter := s.failAfter > 0 && rt.writes(r.Method)
	s.mu.Unlock()
	if !failAfter {
		return s.dispatch(w, r, rt, *body)
	}
	rec := httptest.NewRecorder()
	if err := s.dispatch(rec, r, rt, *body); err != nil {
		return err
	}
	s.mu.Lock()
	status := 0
	if rec.Code/100 == 2 && s.failAfter > 0 {
		s.failAfter--
		status = s.failAfterCode
	}
	s.mu.Unlock()
	if status != 0 {
		return faultError(status) // done, but the answer is lost
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	return nil
}

// wait applies Options.Latency, giving up when the request is cancelled.
func (s *Server) wait(r *http.Request) *apiError {
	if s.opts.Latency <= 0 {
		return nil
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.Context().Done():
		return &apiError{status: 499, code: "RequestCancelled", message: "The client cancelled the request."}
	}
}

// InvalidAPIVersionMessage is the service's message, with status 400, for
// a request whose api-version query parameter is missing or is not a
// version it serves: one message for both.
const InvalidAPIVersionMessage = "Invalid or missing api-version query string parameter."

// checkAPIVersion accepts the published versions (azspec.APIVersions) and
// answers any other api-version, or none, as the service does: 400 with
// InvalidAPIVersionMessage, naming neither the version sent nor one to use.
func checkAPIVersion(r *http.Request) *apiError {
	if azspec.KnownAPIVersion(r.URL.Query().Get("api-version")) {
		return nil // emulated with the rules of APIVersion
	}
	return badRequest("%s", InvalidAPIVersionMessage)
}

// authenticate checks the api-key header or bearer token. Credentials never
// appear in messages.
func (s *Server) authenticate(r *http.Request) *apiError {
	if s.opts.Key == "" && len(s.opts.BearerTokens) == 0 {
		return nil
	}
	if k := r.Header.Get("api-key"); k != "" {
		if s.opts.Key != "" && subtle.ConstantTimeCompare([]byte(k), []byte(s.opts.Key)) == 1 {
			return nil
		}
		return &apiError{status: http.StatusForbidden, code: "Forbidden",
			message: "The api-key sent in the api-key header is not valid for this service. Use an admin key of the service."}
	}
	if a := r.Header.Get("Authorization"); a != "" {
		tok, ok := strings.CutPrefix(a, "Bearer ")
		if ok {
			for _, want := range s.opts.BearerTokens {
				if subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1 {
					return nil
				}
			}
		}
		return &apiError{status: http.StatusUnauthorized, code: "Unauthorized",
			message: "The bearer token in the Authorization header is not valid. Request a token for the scope https://search.azure.com/.default."}
	}
	return &apiError{status: http.StatusUnauthorized, code: "Unauthorized",
		message: "Authentication is required: send an api-key header or an Authorization: Bearer token."}
}

// injectFault answers scripted and random whole-request faults.
func (s *Server) injectFault(w http.ResponseWriter) *apiError {
	s.mu.Lock()
	status, retry := 0, time.Duration(0)
	switch {
	case s.failNext > 0:
		s.failNext--
		status, retry = s.failStatus, s.failRetry
	case s.opts.FaultRate > 0 && s.rng.Float64() < s.opts.FaultRate:
		status, retry = http.StatusServiceUnavailable, 100*time.Millisecond
	}
	s.mu.Unlock()
	if status == 0 {
		return nil
	}
	if retry > 0 {
		secs := int((retry + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		w.Header().Set("retry-after-ms", strconv.FormatInt(retry.Milliseconds(), 10))
	}
	return faultError(status)
}

// faultError is the service's answer of an injected failure with status.
func faultError(status int) *apiError {
	var code, msg string
	switch status {
	case http.StatusTooManyRequests:
		code, msg = "TooManyRequests", "Too many requests (injected throttling). Retry after the Retry-After interval."
	case http.StatusServiceUnavailable:
		code, msg = "ServiceUnavailable", "The service is temporarily unavailable (injected fault). Retry after the Retry-After interval."
	case http.StatusInternalServerError:
		code, msg = "InternalServerError", "An internal error occurred while processing the request (injected fault)."
	default:
		code, msg = strings.ReplaceAll(http.StatusText(status), " ", ""), "Injected fault: "+http.StatusText(status)+"."
	}
	return &apiError{status: status, code: code, message: msg}
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, rt route, body []byte) *apiError {
	switch rt.kind {
	case routeIndexes:
		switch r.Method {
		case http.MethodGet:
			return s.listIndexes(w, r)
		case http.MethodPost:
			return s.putIndex(w, "", body, true)
		}
	case routeIndex:
		switch r.Method {
		case http.MethodGet:
			return s.getIndex(w, rt.index)
		case http.MethodPut:
			return s.putIndex(w, rt.index, body, false)
		case http.MethodDelete:
			return s.deleteIndex(w, rt.index)
		}
	case routeStats:
		if r.Method == http.MethodGet {
			return s.stats(w, rt.index)
		}
	case routeCount:
		if r.Method == http.MethodGet {
			return s.count(w, rt.index)
		}
	case routeDocsIndex:
		if r.Method == http.MethodPost {
			return s.indexDocuments(w, rt.index, body)
		}
	case routeDocsSearch:
		if r.Method == http.MethodPost {
			return s.search(w, r, rt.index, body)
		}
		return badRequest("GET docs/search is not emulated by this test server; use POST docs/search.")
	case routeLookup:
		if r.Method == http.MethodGet {
			return s.lookup(w, r, rt.index, rt.key)
		}
	}
	return &apiError{status: http.StatusMethodNotAllowed, code: "MethodNotAllowed",
		message: "The method " + r.Method + " is not allowed on " + r.URL.Path + "."}
}

func (ix *index) sortedKeys() []string {
	keys := make([]string, 0, len(ix.docs))
	for k := range ix.docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cloneDoc(d map[string]any) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		switch t := v.(type) {
		case []float32:
			out[k] = append([]float32(nil), t...)
		case []any:
			out[k] = append([]any(nil), t...)
		default:
			out[k] = v
		}
	}
	return out
}
