package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// fakeCredential is an azcore.TokenCredential handing out a fixed token
// for the search scope.
type fakeCredential struct {
	token string
	mu    sync.Mutex
	asked []string
}

func (f *fakeCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, opts.Scopes...)
	return azcore.AccessToken{Token: f.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestAuthBearerToken(t *testing.T) {
	cred := &fakeCredential{token: "token-abc"}
	s, srv := startStore(t, searchtest.Options{BearerTokens: []string{"token-abc"}}, nil, WithCredential(cred))
	if _, err := s.Add(context.Background(), makeNodes("a.md", 2)); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Auth != "bearer" {
			t.Errorf("%s %s sent auth %q, want bearer", r.Method, r.Path, r.Auth)
		}
	}
	if len(cred.asked) == 0 || cred.asked[0] != "https://search.azure.com/.default" {
		t.Errorf("token scopes %v, want https://search.azure.com/.default", cred.asked)
	}
}

func TestAuthKeyCredentialOption(t *testing.T) {
	kc := azcore.NewKeyCredential(testKey)
	s, srv := startStore(t, searchtest.Options{}, nil, WithGetenv(envOf(nil)), WithKeyCredential(kc))
	if _, err := s.Count(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests(); r[len(r)-1].Auth != "api-key" {
		t.Errorf("auth %q, want api-key", r[len(r)-1].Auth)
	}
}

func newErr(t *testing.T, opts searchtest.Options, mutate func(*Config), extra ...Option) error {
	t.Helper()
	if opts.Key == "" && opts.BearerTokens == nil {
		opts.Key = testKey
	}
	_, url := searchtest.Start(t, opts)
	_, err := openStore(t, url, mutate, extra...)
	return err
}

// TestErrorMessages checks each error of seed §7: its class and that the
// message says what to do.
func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name    string
		opts    searchtest.Options
		mutate  func(*Config)
		extra   []Option
		is      []error
		words   []string
		secrets []string
	}{
		{name: "endpoint unset", mutate: func(c *Config) { c.Endpoint = "" },
			is: []error{ErrConfig}, words: []string{"sink.cloudsearch.endpoint", "CLOUD_AI_SEARCH_ENDPOINT"}},
		{name: "endpoint variable renamed", mutate: func(c *Config) { c.Endpoint = ""; c.EndpointEnv = "MY_SEARCH" },
			is: []error{ErrConfig}, words: []string{"MY_SEARCH"}},
		{name: "endpoint variable not a URL", mutate: func(c *Config) { c.Endpoint = "" },
			extra: []Option{WithGetenv(envOf(map[string]string{EnvEndpoint: "search.windows.net", EnvKey: testKey}))},
			is:    []error{ErrConfig}, words: []string{"CLOUD_AI_SEARCH_ENDPOINT", "https://"}},
		{name: "key unset", extra: []Option{WithGetenv(envOf(nil))},
			is: []error{ErrConfig}, words: []string{"sink.cloudsearch.key", "CLOUD_AI_SEARCH_KEY", "managedIdentity"}},
		{name: "wrong key", extra: []Option{WithGetenv(envOf(map[string]string{EnvKey: "wrong-key-987"}))},
			is: []error{ErrAuth}, words: []string{"403", "CLOUD_AI_SEARCH_KEY", "verify by listing indexes", "sluice doctor"}, secrets: []string{"wrong-key-987", testKey}},
		{name: "wrong token", opts: searchtest.Options{BearerTokens: []string{"good"}}, extra: []Option{WithCredential(&fakeCredential{token: "bad-token-123"})},
			is: []error{ErrAuth}, words: []string{"role assignments"}, secrets: []string{"bad-token-123"}},
		{name: "index not found", mutate: func(c *Config) { c.IndexManagement = "VALIDATE_INDEX" },
			is: []error{ErrIndexNotFound}, words: []string{`"docs"`, "CreateIfNotExists", "sluice index create"}},
		{name: "compression with exhaustive KNN", mutate: func(c *Config) { c.CompressionType = BinaryQuantization },
			is: []error{ErrConfig}, words: []string{"sink.cloudsearch.compressionType", "hnsw"}},
		{name: "bad api version variable", extra: []Option{WithGetenv(envOf(map[string]string{EnvKey: testKey, EnvAPIVersion: "v2"}))},
			is: []error{ErrConfig}, words: []string{"CLOUD_SEARCH_API_VERSION", "2024-07-01"}},
		{name: "timeout", opts: searchtest.Options{Latency: 2 * time.Second}, mutate: func(c *Config) { c.Timeout = 30 * time.Millisecond; c.MaxRetries = 1 },
			is: []error{ErrConnection, context.DeadlineExceeded}, words: []string{"reachable", "sink.cloudsearch.timeout", "30ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newErr(t, tt.opts, tt.mutate, tt.extra...)
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("message %q leaks a secret", err)
				}
			}
		})
	}
}

func TestErrorConnectionRefused(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1")
	cfg.MaxRetries = 1
	_, err := New(context.Background(), cfg, testHTTP(t), WithGetenv(envOf(map[string]string{EnvKey: testKey})), WithRetryDelay(time.Millisecond))
	var ce *ConnectionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConnection) {
		t.Fatalf("err = %v, want *ConnectionError", err)
	}
	for _, w := range []string{"127.0.0.1:1", "reachable", "timeout"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
}

func TestErrorDimensionMismatch(t *testing.T) {
	srv, url := searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrNone(t)})
	env := WithGetenv(envOf(map[string]string{EnvKey: testKey}))
	cfg := testConfig(url)
	s, err := New(context.Background(), cfg, testHTTP(t), env)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, ok := srv.Index("docs"); !ok {
		t.Fatal("CreateIfNotExists did not create the index")
	}
	cfg.EmbeddingDimensionality = 1536
	cfg.IndexManagement = ValidateIndex
	_, err = New(context.Background(), cfg, testHTTP(t), env)
	var me *MismatchError
	if !errors.As(err, &me) || !errors.Is(err, ErrIndexMismatch) || !errors.Is(err, sink.ErrDimensionMismatch) {
		t.Fatalf("err = %v, want a *MismatchError wrapping sink.ErrDimensionMismatch", err)
	}
	for _, w := range []string{"sink.cloudsearch.embeddingDimensionality", "1536", "8 dimensions"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
}

func TestAPIVersion(t *testing.T) {
	tests := []struct {
		name, cfg, env, want string
	}{
		{"default", "", "", "2024-07-01"},
		{"from environment", "", "2024-09-01-preview", "2024-09-01-preview"},
		{"config wins", "2024-07-01", "2024-09-01-preview", "2024-07-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := WithGetenv(envOf(map[string]string{EnvKey: testKey, EnvAPIVersion: tt.env}))
			s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.APIVersion = tt.cfg }, env)
			if s.APIVersion() != tt.want {
				t.Errorf("APIVersion() = %s, want %s", s.APIVersion(), tt.want)
			}
			for _, r := range srv.Requests() {
				if !strings.Contains(r.Query, "api-version="+tt.want) {
					t.Errorf("request query %q, want api-version=%s", r.Query, tt.want)
				}
			}
		})
	}
}

func TestCredentialKindsConstruct(t *testing.T) {
	for _, kind := range []CredentialKind{DefaultCredential, ManagedIdentity, "ManagedIdentityCredential"} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := testConfig("https://example.search.windows.net")
			cfg.IndexManagement = NoValidation
			cfg.Credential = kind
			s, err := New(context.Background(), cfg, WithGetenv(envOf(map[string]string{EnvManagedIdentityClientID: "00000000-0000-0000-0000-000000000001"})))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			_ = s.Close()
			_ = s.Close() // twice is harmless
		})
	}
}

// TestSecretsNotLogged captures azcore's logging of a keyed request and
// checks the api-key header is redacted.
func TestSecretsNotLogged(t *testing.T) {
	var mu sync.Mutex
	var logs strings.Builder
	azlog.SetListener(func(ev azlog.Event, msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&logs, "%s: %s\n", ev, msg)
	})
	defer azlog.SetListener(nil)
	s, srv := startStore(t, searchtest.Options{}, nil)
	srv.FailNext(1, http.StatusServiceUnavailable, time.Millisecond)
	if _, err := s.Add(context.Background(), makeNodes("a.md", 1)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := logs.String()
	if !strings.Contains(out, "Api-Key: REDACTED") && !strings.Contains(out, "api-key: REDACTED") {
		t.Errorf("log does not show the api-key header redacted:\n%.2000s", out)
	}
	if strings.Contains(out, testKey) {
		t.Error("the admin key appears in the log")
	}
	if s.Config().Key != "" {
		t.Error("Config() exposes the key")
	}
	c := DefaultConfig()
	c.Key = "secret-key-42"
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(out, "secret-key-42") || !strings.Contains(out, "REDACTED") {
			t.Errorf("printing a Config shows %q", out)
		}
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	srv.FailNext(1, http.StatusTooManyRequests, 300*time.Millisecond)
	start := time.Now()
	if _, err := s.Add(context.Background(), makeNodes("a.md", 2)); err != nil {
		t.Fatal(err)
	}
	// The retry delay is 1ms in tests; only the server's hint explains a wait.
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("retried after %v, before the Retry-After of 300ms", waited)
	}
}

func TestIndexOperations(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) {
		c.VectorAlgorithmType = HNSW
		c.CompressionType = ScalarQuantization
		c.LanguageAnalyzer = "en.lucene"
		c.HiddenFieldKeys = []string{"secret"}
	})
	ctx := context.Background()
	names, err := s.ListIndexes(ctx)
	if err != nil || len(names) != 1 || names[0] != "docs" {
		t.Errorf("ListIndexes = %v, %v", names, err)
	}
	if d, err := s.Dimensions(ctx); err != nil || d != testDims {
		t.Errorf("Dimensions = %d, %v", d, err)
	}
	if err := s.ValidateIndex(ctx); err != nil {
		t.Errorf("ValidateIndex: %v", err)
	}
	if err := s.CreateIndex(ctx); statusOf(err) != http.StatusConflict {
		t.Errorf("second CreateIndex: %v, want 409", err)
	}
	if _, err := s.Add(ctx, makeNodes("a.md", 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetNodes(ctx, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), `"select":`) && strings.Contains(string(r.Body), "secret") {
			t.Errorf("a hidden field was selected: %s", r.Body)
		}
	}
	if err := s.DeleteIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateIndex(ctx); !errors.Is(err, ErrIndexNotFound) {
		t.Errorf("ValidateIndex after DeleteIndex = %v, want ErrIndexNotFound", err)
	}
	if err := s.DeleteIndex(ctx); err != nil {
		t.Errorf("DeleteIndex of an absent index = %v, want nil", err)
	}
	if _, err := s.Count(ctx); !errors.Is(err, ErrIndexNotFound) {
		t.Errorf("Count without index = %v, want ErrIndexNotFound", err)
	}
	assertNoClientErrors(t, srv)
}

func TestDoctor(t *testing.T) {
	s, _ := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	checks := s.Doctor(ctx, testDims)
	if len(checks) != 4 || checks[3].Name != "index definition" {
		t.Fatalf("checks = %+v, want 4, the last of the index definition", checks)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Detail)
		}
	}
	checks = s.Doctor(ctx, 1536)
	last := checks[len(checks)-1]
	if last.OK || !errors.Is(last.Err, sink.ErrDimensionMismatch) || !strings.Contains(last.Detail, "1536") {
		t.Errorf("doctor with a 1536-dim embedder: %+v", last)
	}
	// An index that differs from the settings fails as a run would, with
	// ValidateIndex or CreateIfNotExists; NoValidation does not compare.
	for mode, fails := range map[IndexManagement]bool{ValidateIndex: true, CreateIfNotExists: true, NoValidation: false} {
		other, err := openStore(t, s.Config().Endpoint, func(c *Config) { c.IndexManagement = mode; c.VectorAlgorithmType = "hnsw" }, WithoutIndexManagement())
		if err != nil {
			t.Fatal(err)
		}
		checks := other.Doctor(ctx, testDims)
		last := checks[len(checks)-1]
		if last.Name != "index definition" || last.OK == fails || (fails && !strings.Contains(last.Detail, "vectorAlgorithmType")) {
			t.Errorf("%s, index of another vector algorithm: %+v", mode, last)
		}
	}
	if err := s.DeleteIndex(ctx); err != nil {
		t.Fatal(err)
	}
	// Without the index, the store's CreateIfNotExists passes the check
	// (the next run creates it; see TestDoctorIndexToBeCreated), and
	// ValidateIndex fails it.
	checks = s.Doctor(ctx, testDims)
	if len(checks) != 3 || !checks[1].OK || !strings.Contains(checks[1].Detail, "does not exist yet") {
		t.Errorf("doctor without index, CreateIfNotExists: %+v", checks)
	}
	v, err := openStore(t, s.Config().Endpoint, func(c *Config) { c.IndexManagement = ValidateIndex }, WithoutIndexManagement())
	if err != nil {
		t.Fatal(err)
	}
	checks = v.Doctor(ctx, testDims)
	if last := checks[len(checks)-1]; last.OK || !errors.Is(last.Err, ErrIndexNotFound) {
		t.Errorf("doctor without index, ValidateIndex: %+v", last)
	}
}

func TestDoctorAuthFailure(t *testing.T) {
	_, url := searchtest.Start(t, searchtest.Options{Key: testKey})
	cfg := testConfig(url)
	cfg.IndexManagement = NoValidation
	s, err := New(context.Background(), cfg, testHTTP(t), WithGetenv(envOf(map[string]string{EnvKey: "nope"})))
	if err != nil {
		t.Fatal(err)
	}
	checks := s.Doctor(context.Background(), 0)
	if len(checks) != 1 || checks[0].OK || !errors.Is(checks[0].Err, ErrAuth) {
		t.Errorf("checks = %+v, want one failed authentication check", checks)
	}
}

// TestErrorUnvalidatedIndexMismatch: with indexManagement NoValidation, a
// query filtering on, and an upload writing, a field the existing index
// lacks are refused by the service with a 400 that used to carry no
// remedy; the error now says that nothing compared the index with the
// settings and names `sluice index validate`. With ValidateIndex, New
// finds the difference itself, so a 400 gets no such advice.
func TestErrorUnvalidatedIndexMismatch(t *testing.T) {
	srv, url := searchtest.Start(t, searchtest.Options{Key: testKey, SpecDir: specOrNone(t)})
	env := WithGetenv(envOf(map[string]string{EnvKey: testKey}))
	cfg := testConfig(url)
	s, err := New(t.Context(), cfg, testHTTP(t), env)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, ok := srv.Index("docs"); !ok {
		t.Fatal("CreateIfNotExists did not create the index")
	}
	cfg.IndexManagement = NoValidation
	cfg.FilterableMetadataFieldKeys = append(cfg.FilterableMetadataFieldKeys, FilterableField{Key: "lang"})
	s, err = New(t.Context(), cfg, testHTTP(t), env)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, qerr := s.Query(t.Context(), sink.Query{Mode: sink.Sparse, QueryStr: "herons",
		Filters: &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "lang", Value: "en", Operator: sink.EQ}}}})
	_, aerr := s.Add(t.Context(), []sink.Node{{ID: "n1", RefDocID: "a.md", Text: "herons", Embedding: make([]float32, testDims), Metadata: map[string]any{"lang": "en"}}})
	for name, err := range map[string]error{"query": qerr, "upload": aerr} {
		var se *ServiceError
		if !errors.As(err, &se) && !errors.Is(err, sink.ErrWrite) {
			t.Errorf("%s: err = %v, want a 400 from the service", name, err)
			continue
		}
		for _, w := range []string{"400", "NoValidation", "sluice index validate", `"docs"`} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", name, err, w)
			}
		}
	}
	se := &ServiceError{Op: "query (sparse)", Index: "docs", StatusCode: http.StatusBadRequest, Message: "Invalid expression"}
	if strings.Contains(se.Error(), "index validate") {
		t.Errorf("a validated store's 400 %q advises index validate", se)
	}
}
