package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// startOpenAIAt starts a test server and an openai Client whose
// embedder.baseURL is baseURL, a host the client reaches by dialling the
// test server whatever the URL's host: to see what the messages say of
// api.openai.com without leaving the machine.
func startOpenAIAt(t *testing.T, baseURL string, opts embedtest.Options, edit func(*embedder.Config)) (*embedder.Client, *embedtest.Server) {
	t.Helper()
	t.Setenv("SLUICE_TEST_KEY", testKey)
	opts.Key, opts.Dimensions = testKey, 32
	srv, url := embedtest.Start(t, opts)
	addr := strings.TrimPrefix(url, "http://")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	hc := &http.Client{Transport: tr}
	t.Cleanup(hc.CloseIdleConnections)
	cfg := embedder.Config{Provider: "openai", BaseURL: baseURL, Model: "test-model", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_KEY"}
	fastRetries(&cfg)
	if edit != nil {
		edit(&cfg)
	}
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// startAzure starts a test server and an azure-openai Client for it.
func startAzure(t *testing.T, opts embedtest.Options, edit func(*embedder.Config)) (*embedder.Client, *embedtest.Server) {
	t.Helper()
	t.Setenv("SLUICE_TEST_AZ_KEY", testKey)
	opts.Key, opts.Deployment, opts.Dimensions = testKey, "emb", 32
	srv, url := embedtest.Start(t, opts)
	cfg := embedder.Config{Provider: "azure-openai", Endpoint: url, Deployment: "emb", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_AZ_KEY"}
	fastRetries(&cfg)
	if edit != nil {
		edit(&cfg)
	}
	c, err := embedder.NewAzureOpenAI(context.Background(), cfg, embedder.WithHTTPClient(testHTTPClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// TestRetriesUsedUpHint checks the final error of a request whose every
// attempt failed in a way worth retrying: it says what happened on how many
// attempts, over how long, and names the settings to change by their keys
// (embedder.requestsPerMinute and tokensPerMinute for a rate limit, the
// provider's health for a server error, embedder.timeout for a timeout,
// and embedder.maxRetries with its value for each). The error keeps its
// type and sentinels, and shows no key. A permanent failure (400) gets no
// such hint: it was not retried, and more retries would not help.
func TestRetriesUsedUpHint(t *testing.T) {
	// The elapsed time in "(retried N times with exponential backoff over
	// 12ms)".
	over := `over [0-9.]+(µs|ms|s)\)`
	tests := []struct {
		name     string
		start    func(t *testing.T) (*embedder.Client, *embedtest.Server)
		inputs   int
		warmUp   bool  // one Embed first, which uses up the server's request quota
		sentinel error // of the final error, besides ErrEmbed
		status   int   // the *APIError's status; 0: a *TransportError
		attempts int64 // attempts the client made for the failing Embed
		stalls   bool  // every attempt ends by the client's timeout (see below)
		want     []string
		wantRE   []string // regular expressions
		not      []string
	}{
		{
			name: "429 after retries",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{RPM: 1, RetryAfter: 1, NoRateLimitHeaders: true}, func(c *embedder.Config) { c.MaxRetries = 2 })
			},
			inputs: 1, warmUp: true, sentinel: embedder.ErrThrottled, status: 429, attempts: 3,
			want: []string{
				"HTTP 429",
				"; rate limited on every one of 3 attempts (retried 2 times with exponential backoff over ",
				"set embedder.requestsPerMinute (now unlimited) and embedder.tokensPerMinute (now unlimited) to your quota (less if other clients share it; see the embedder README), or",
				"raise embedder.maxRetries (now 2)",
			},
			wantRE: []string{`retried 2 times with exponential backoff ` + over + `: set embedder\.requestsPerMinute`},
		},
		{
			name: "429 with retries off (maxRetries -1)",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{RPM: 5, NoRateLimitHeaders: true}, func(c *embedder.Config) {
					c.MaxRetries = -1
					c.TokensPerMinute = 1_000_000
				})
			},
			inputs: 1, warmUp: true, sentinel: embedder.ErrThrottled, status: 429, attempts: 1,
			want: []string{
				"; rate limited on the only attempt (embedder.maxRetries is -1: no retries)",
				"embedder.requestsPerMinute (now unlimited) and embedder.tokensPerMinute (now 1000000)",
				"set embedder.maxRetries to retry with exponential backoff (now -1, no retries; 0 means the default, 3)",
			},
			not: []string{"every one of", "raise embedder.maxRetries"},
		},
		{
			name: "500 after retries",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault500}}, func(c *embedder.Config) { c.MaxRetries = 3 })
			},
			inputs: 3, sentinel: embedder.ErrServer, status: 500, attempts: 4,
			want: []string{
				"HTTP 500: The server had an error",
				"; the provider failed on every one of 4 attempts (retried 3 times with exponential backoff over ",
				"a fault on its side: check the health and logs of the server at http://127.0.0.1:",
				"try again later, or raise embedder.maxRetries (now 3) to keep retrying for longer",
			},
			wantRE: []string{`retried 3 times with exponential backoff ` + over + `, a fault on its side`},
			not:    []string{"requestsPerMinute", "embedder.timeout"},
		},
		{
			name: "500 at api.openai.com names OpenAI's status page",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAIAt(t, "http://api.openai.com/v1", embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault500}},
					func(c *embedder.Config) { c.MaxRetries = 1 })
			},
			inputs: 1, sentinel: embedder.ErrServer, status: 500, attempts: 2,
			want: []string{
				"; the provider failed on every one of 2 attempts (retried once with exponential backoff over ",
				"check OpenAI's status page (https://status.openai.com), try again later, or raise embedder.maxRetries (now 1)",
			},
		},
		{
			name: "503 from azure-openai names the resource's health",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startAzure(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault503}}, nil)
			},
			inputs: 2, sentinel: embedder.ErrServer, status: 503, attempts: 4,
			want: []string{
				"; the provider failed on every one of 4 attempts (retried 3 times with exponential backoff over ",
				"check the resource's Resource health in the Azure portal (and https://azure.status.microsoft), try again later",
				"raise embedder.maxRetries (now 3)",
			},
			not: []string{"api-version"},
		},
		{
			name: "500 with retries off (maxRetries -1)",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault500}}, func(c *embedder.Config) { c.MaxRetries = -1 })
			},
			inputs: 1, sentinel: embedder.ErrServer, status: 500, attempts: 1,
			want: []string{
				"; the provider failed on the only attempt (embedder.maxRetries is -1: no retries)",
				"set embedder.maxRetries to retry with exponential backoff (now -1, no retries; 0 means the default, 3)",
			},
		},
		{
			name: "timeout after retries",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultStall}}, func(c *embedder.Config) {
					c.MaxRetries = 1
					c.Timeout = 50 * time.Millisecond
				})
			},
			inputs: 2, sentinel: embedder.ErrTransport, attempts: 2, stalls: true,
			want: []string{
				"no answer within embedder.timeout (50ms)",
				"; timed out on every one of 2 attempts (retried once with exponential backoff over ",
				"raise embedder.timeout (now 50ms) if the provider needs longer to answer requests this large (or lower embedder.batchSize)",
				"raise embedder.maxRetries (now 1)",
			},
			wantRE: []string{`retried once with exponential backoff ` + over + `: raise embedder\.timeout`},
		},
		{
			name: "connection reset after retries",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultReset}}, func(c *embedder.Config) { c.MaxRetries = 2 })
			},
			inputs: 1, sentinel: embedder.ErrTransport, attempts: 3,
			want: []string{
				"; failed on every one of 3 attempts (retried 2 times with exponential backoff over ",
				"check the network path to the provider and the health and logs of the server at http://127.0.0.1:",
				"raise embedder.maxRetries (now 2)",
			},
			not: []string{"embedder.timeout"},
		},
		{
			name: "permanent 400 gets no retry hint",
			start: func(t *testing.T) (*embedder.Client, *embedtest.Server) {
				return startOpenAI(t, embedtest.Options{MaxInputs: 2}, func(c *embedder.Config) { c.MaxRetries = 3 })
			},
			inputs: 5, sentinel: embedder.ErrBadRequest, status: 400, attempts: 1,
			want: []string{"HTTP 400", "the maximum is 2", "check embedder.model"},
			not: []string{"attempt", "retried", "exponential backoff", "embedder.maxRetries", "embedder.timeout",
				"a fault on its side", "rate limited", "requestsPerMinute"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := tt.start(t)
			if tt.warmUp {
				if _, err := c.Embed(context.Background(), texts(1)); err != nil {
					t.Fatalf("first Embed, within the quota: %v", err)
				}
			}
			before, sentBefore := srv.Stats().Requests, c.Stats().Requests
			_, err := c.Embed(context.Background(), texts(tt.inputs))
			if err == nil {
				t.Fatal("Embed() succeeded, want an error")
			}
			if !errors.Is(err, tt.sentinel) || !errors.Is(err, embedder.ErrEmbed) {
				t.Fatalf("Embed() = %v, want %v and ErrEmbed", err, tt.sentinel)
			}
			if tt.status != 0 {
				var apiErr *embedder.APIError
				if !errors.As(err, &apiErr) || apiErr.Status != tt.status {
					t.Fatalf("Embed() = %#v, want an *APIError of HTTP %d", err, tt.status)
				}
			} else {
				var te *embedder.TransportError
				if !errors.As(err, &te) {
					t.Fatalf("Embed() = %#v, want a *TransportError", err)
				}
			}
			if got := c.Stats().Requests - sentBefore; got != tt.attempts {
				t.Fatalf("the client made %d attempts, want %d", got, tt.attempts)
			}
			// The server saw every attempt it answered before the client
			// went on. An attempt the client gave up on after its timeout
			// does not wait for the server, which may handle it after
			// Embed returned, or never see it if the timeout fired
			// before the request was written (a loaded machine can hold
			// either goroutine up for longer than the timeout).
			if got := srv.Stats().Requests - before; got != tt.attempts && (!tt.stalls || got > tt.attempts) {
				t.Fatalf("the server saw %d attempts, want %d", got, tt.attempts)
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not say %q:\n%s", w, msg)
				}
			}
			for _, re := range tt.wantRE {
				if !regexp.MustCompile(re).MatchString(msg) {
					t.Errorf("error does not match %q:\n%s", re, msg)
				}
			}
			for _, n := range append(tt.not, testKey) {
				if strings.Contains(msg, n) {
					t.Errorf("error says %q:\n%s", n, msg)
				}
			}
		})
	}
}

// TestMalformedAnswerRetriesUsedUp checks the final error of a request
// whose every answer was malformed (a 200 without a "data" list): a
// *ResponseError still, saying how many attempts got one and where to look.
func TestMalformedAnswerRetriesUsedUp(t *testing.T) {
	var requests atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list"}`))
	}))
	t.Cleanup(hs.Close)
	cfg := embedder.Config{BaseURL: hs.URL + "/v1", Model: "m", Auth: "none", Dimensions: 8, MaxRetries: 2}
	fastRetries(&cfg)
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), texts(1))
	var re *embedder.ResponseError
	if !errors.As(err, &re) || !errors.Is(err, embedder.ErrBadResponse) || !errors.Is(err, embedder.ErrEmbed) {
		t.Fatalf("Embed() = %#v, want a *ResponseError (ErrBadResponse, ErrEmbed)", err)
	}
	if got := requests.Load(); got != 3 {
		t.Fatalf("%d attempts, want 3 (1 + maxRetries 2)", got)
	}
	msg := err.Error()
	for _, w := range []string{
		`embedder: malformed openai response: no "data" list of embeddings in the body; `,
		"every one of 3 attempts (retried 2 times with exponential backoff over ",
		"got a malformed answer: check that " + hs.URL + " serves an OpenAI-compatible embeddings API",
		"raise embedder.maxRetries (now 2)",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not say %q:\n%s", w, msg)
		}
	}
}

// TestRetriesUsedUpHintMixedFailures: when the attempts failed in
// different ways (here a 500, then timeouts), the hint speaks of the last
// attempt and says that the earlier ones failed otherwise, instead of
// claiming that every attempt timed out, as it did.
func TestRetriesUsedUpHintMixedFailures(t *testing.T) {
	var requests atomic.Int64
	done := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"message":"boom","type":"server_error"}}`))
			return
		}
		select { // stall until the client gives up, or the test ends
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(done) }) // before hs.Close, which waits for the handlers
	for _, tt := range []struct {
		retries int
		want    string
	}{
		{1, "timed out on the last of 2 attempts (retried once with exponential backoff over "},
		{2, "timed out on the last of 3 attempts (retried 2 times with exponential backoff over "},
	} {
		requests.Store(0)
		cfg := embedder.Config{BaseURL: hs.URL + "/v1", Model: "m", Auth: "none", Dimensions: 8, MaxRetries: tt.retries, Timeout: 50 * time.Millisecond}
		fastRetries(&cfg)
		c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Embed(context.Background(), texts(1))
		msg := fmt.Sprint(err)
		for _, w := range []string{tt.want, "failed otherwise)", "raise embedder.timeout"} {
			if !strings.Contains(msg, w) {
				t.Errorf("maxRetries %d: error does not say %q:\n%s", tt.retries, w, msg)
			}
		}
		if strings.Contains(msg, "every one of") {
			t.Errorf("maxRetries %d: error claims every attempt failed alike:\n%s", tt.retries, msg)
		}
	}
}
