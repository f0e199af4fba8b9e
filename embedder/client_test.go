package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

const testKey = "test-secret-key-0123456789"

// fastRetries makes retries quick enough for unit tests.
func fastRetries(c *embedder.Config) {
	c.RetryInitialDelay = time.Millisecond
	c.RetryMaxDelay = 5 * time.Millisecond
}

// testHTTPClient returns an HTTP client of its own, whose idle connections
// close when the test ends (goleak checks that none outlive it).
func testHTTPClient(t *testing.T) *http.Client {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// startOpenAI starts a test server and an openai Client for it.
func startOpenAI(t *testing.T, opts embedtest.Options, edit func(*embedder.Config)) (*embedder.Client, *embedtest.Server) {
	t.Helper()
	t.Setenv("SLUICE_TEST_KEY", testKey)
	if opts.Key == "" {
		opts.Key = testKey
	}
	if opts.Dimensions == 0 {
		opts.Dimensions = 32
	}
	srv, url := embedtest.Start(t, opts)
	cfg := embedder.Config{
		Provider:   "openai",
		BaseURL:    url + "/v1",
		Model:      "test-model",
		Dimensions: 32,
		APIKeyEnv:  "SLUICE_TEST_KEY",
	}
	fastRetries(&cfg)
	if edit != nil {
		edit(&cfg)
	}
	hc := testHTTPClient(t)
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func texts(n int) []embedder.Input {
	in := make([]embedder.Input, n)
	for i := range in {
		in[i] = embedder.Input{Text: fmt.Sprintf("chunk %d talks about topic %d and topic %d", i, i%7, i%13)}
	}
	return in
}

// checkVectors asserts that vecs are the hash vectors of in, in order.
func checkVectors(t *testing.T, in []embedder.Input, vecs [][]float32, dims int) {
	t.Helper()
	if len(vecs) != len(in) {
		t.Fatalf("%d vectors for %d inputs", len(vecs), len(in))
	}
	h := embedder.NewHash(dims)
	for i := range in {
		want := h.Vector(in[i].Text)
		if len(vecs[i]) != dims {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(vecs[i]), dims)
		}
		for j := range want {
			if vecs[i][j] != want[j] {
				t.Fatalf("vector %d is not the vector of input %d: results not mapped by index", i, i)
			}
		}
	}
}

func TestEmbedMapsByIndex(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{Shuffle: true}, nil)
	in := texts(50)
	vecs, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, vecs, 32)
	if st := srv.Stats(); st.OK != 1 || st.InputsServed != 50 {
		t.Fatalf("server stats %+v, want one request of 50 inputs", st)
	}
	if st := c.Stats(); st.Requests != 1 || st.InputsSent != 50 || st.TokensSent != srv.Stats().TokensServed || st.P50 <= 0 {
		t.Fatalf("client stats %+v disagree with the server's %+v", st, srv.Stats())
	}
}

func TestEmbedSplitsWithinCaps(t *testing.T) {
	tests := []struct {
		name         string
		server       embedtest.Options
		edit         func(*embedder.Config)
		inputs       int
		wantRequests int64
	}{
		{"batchSize", embedtest.Options{MaxInputs: 100}, func(c *embedder.Config) { c.BatchSize = 40 }, 100, 3},
		{"maxInputsPerRequest", embedtest.Options{MaxInputs: 16}, func(c *embedder.Config) { c.MaxInputsPerRequest = 16; c.BatchSize = 16 }, 50, 4},
		{"maxTokensPerRequest", embedtest.Options{MaxTokens: 100}, func(c *embedder.Config) { c.MaxTokensPerRequest = 100; c.MaxTokensPerInput = 50 }, 30, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, tt.server, tt.edit)
			in := texts(tt.inputs)
			vecs, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, in, vecs, 32)
			st := srv.Stats()
			if st.TooLarge != 0 || st.OK < tt.wantRequests {
				t.Fatalf("server stats %+v: want 0 rejected for caps and at least %d requests", st, tt.wantRequests)
			}
		})
	}
}

// TestContextLatencyObserver checks that a call made with a context from
// ContextWithLatencyObserver reports the latency of each of its successful
// attempts to that context's observer, also when it splits its inputs into
// requests sent concurrently, and that a call made with another context
// reports none to it.
func TestContextLatencyObserver(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{MaxInputs: 16}, func(c *embedder.Config) {
		c.MaxInputsPerRequest, c.BatchSize, c.Concurrency = 16, 16, 4
	})
	var mu sync.Mutex
	var lat []time.Duration
	ctx := embedder.ContextWithLatencyObserver(t.Context(), func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, d)
	})
	if _, err := c.Embed(ctx, texts(50)); err != nil { // 4 requests
		t.Fatal(err)
	}
	if _, err := c.Embed(t.Context(), texts(5)); err != nil { // another call's
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) != 4 || srv.Stats().OK != 5 {
		t.Fatalf("%d latencies observed of the %d requests served, want the 4 of the call made with the observer", len(lat), srv.Stats().OK)
	}
	for _, d := range lat {
		if d <= 0 {
			t.Errorf("latency %s, want above 0", d)
		}
	}
}

// TestLatencyObserverOption: WithLatencyObserver gets the latency of every
// successful request of every call, whatever its context.
func TestLatencyObserverOption(t *testing.T) {
	t.Setenv("SLUICE_TEST_KEY", testKey)
	srv, url := embedtest.Start(t, embedtest.Options{Key: testKey, Dimensions: 32, MaxInputs: 16})
	var mu sync.Mutex
	var lat []time.Duration
	cfg := embedder.Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-model", Dimensions: 32,
		APIKeyEnv: "SLUICE_TEST_KEY", MaxInputsPerRequest: 16, BatchSize: 16}
	fastRetries(&cfg)
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)), embedder.WithLatencyObserver(func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, d)
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{20, 5} { // 2 requests, then 1
		if _, err := c.Embed(t.Context(), texts(n)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) != 3 || srv.Stats().OK != 3 {
		t.Errorf("%d latencies observed of the %d requests served, want 3 of 3", len(lat), srv.Stats().OK)
	}
}

func TestEmbedEmptyAndTooLarge(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{}, func(c *embedder.Config) { c.MaxTokensPerInput = 10 })
	vecs, err := c.Embed(context.Background(), embedder.Texts("", "hello there", ""))
	if err != nil {
		t.Fatal(err)
	}
	if norm(vecs[0]) != 0 || norm(vecs[2]) != 0 || norm(vecs[1]) == 0 || srv.Stats().InputsServed != 1 {
		t.Fatalf("empty texts must be zero vectors and not sent; served %d", srv.Stats().InputsServed)
	}
	before := srv.Stats().Requests
	_, err = c.Embed(context.Background(), []embedder.Input{{Text: "a"}, {Text: "long", Tokens: 11}})
	var tl *embedder.InputTooLargeError
	if !errors.As(err, &tl) || tl.Index != 1 || tl.Tokens != 11 || !strings.Contains(err.Error(), "embedder.maxTokensPerInput") {
		t.Fatalf("Embed(too large) = %v, want *InputTooLargeError for input 1", err)
	}
	if srv.Stats().Requests != before {
		t.Fatal("a request was sent although an input was too large")
	}
}

// The default per-input cap is OpenAI's, 8192 tokens for all embedding
// models: an input of 8192 cl100k_base tokens is sent (and the test server,
// with its default caps, embeds it); one of 8193 fails before anything is
// sent.
func TestDefaultMaxTokensPerInput(t *testing.T) {
	tests := []struct {
		tokens  int
		tooLong bool
	}{
		{8192, false},
		{8193, true},
	}
	for _, tt := range tests {
		t.Run(itoa(tt.tokens), func(t *testing.T) {
			c, srv := startOpenAI(t, embedtest.Options{}, nil)
			text := "hello" + strings.Repeat(" hello", tt.tokens-1) // one token per word
			_, err := c.Embed(context.Background(), embedder.Texts(text))
			if !tt.tooLong {
				if err != nil {
					t.Fatal(err)
				}
				if got := c.Stats().TokensSent; got != int64(tt.tokens) {
					t.Fatalf("%d tokens sent, want %d", got, tt.tokens)
				}
				return
			}
			var tl *embedder.InputTooLargeError
			if !errors.As(err, &tl) || tl.Tokens != tt.tokens || tl.Max != 8192 {
				t.Fatalf("Embed() = %v, want *InputTooLargeError of %d tokens above 8192", err, tt.tokens)
			}
			if got := srv.Stats().Requests; got != 0 {
				t.Fatalf("%d requests sent for an input above the cap", got)
			}
		})
	}
}

func TestEmbedPermanentErrors(t *testing.T) {
	tests := []struct {
		name     string
		server   embedtest.Options
		edit     func(*embedder.Config)
		sentinel error
		mention  []string
	}{
		{"401 names the variable", embedtest.Options{Key: "another-key"}, nil, embedder.ErrUnauthorized, []string{"401", "SLUICE_TEST_KEY", "embedder.apiKeyEnv"}},
		{"404 names the model", embedtest.Options{Model: "other-model"}, nil, embedder.ErrNotFound, []string{"404", `"test-model"`, "embedder.model"}},
		{"400 shows the provider message", embedtest.Options{MaxInputs: 2}, nil, embedder.ErrBadRequest, []string{"400", "the maximum is 2"}},
		{"dimension mismatch", embedtest.Options{Dimensions: 48}, nil, embedder.ErrDimensions, []string{"embeddingDimensionality", "embedder.dimensions", "48", "32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, tt.server, tt.edit)
			_, err := c.Embed(context.Background(), texts(5))
			if !errors.Is(err, tt.sentinel) || !errors.Is(err, embedder.ErrEmbed) {
				t.Fatalf("Embed() = %v, want %v", err, tt.sentinel)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("error %q leaks the key", err)
			}
			if got := srv.Stats().Requests; got != 1 {
				t.Fatalf("%d requests sent; a permanent error must not be retried", got)
			}
			if st := c.Stats(); st.Retries != 0 || st.Failures != 1 {
				t.Fatalf("client stats %+v, want 0 retries and 1 failure", st)
			}
		})
	}
}

func TestEmbedRetriesEachFault(t *testing.T) {
	tests := []struct {
		fault    embedtest.Fault
		sentinel error
	}{
		{embedtest.Fault500, embedder.ErrServer},
		{embedtest.Fault502, embedder.ErrServer},
		{embedtest.Fault503, embedder.ErrServer},
		{embedtest.Fault504, embedder.ErrServer},
		{embedtest.FaultReset, embedder.ErrTransport},
		{embedtest.FaultStall, embedder.ErrTransport},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			stall := tt.fault == embedtest.FaultStall
			c, srv := startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{tt.fault}},
				func(c *embedder.Config) {
					c.MaxRetries = 2
					// Only a stall is cut by the attempt timeout. The
					// other faults are answered at once and keep the
					// default timeout: a short one would turn an answer
					// that a loaded machine delays into a timeout, an
					// ErrTransport rather than the fault's sentinel.
					if stall {
						c.Timeout = 100 * time.Millisecond
					}
				})
			_, err := c.Embed(context.Background(), texts(3))
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("Embed() = %v, want %v", err, tt.sentinel)
			}
			if st := c.Stats(); st.Requests != 3 || st.Retries != 2 || st.Failures != 1 {
				t.Fatalf("client stats %+v, want 3 attempts (1 + maxRetries 2), 2 retries and 1 failure", st)
			}
			// The server answered every other fault before the client
			// went on, so it saw every attempt. A stalled attempt is one
			// the client gave up on after its timeout, which does not
			// wait for the server: the server may handle the last
			// request after Embed returned, or never see a request
			// whose timeout fired before it was written (a loaded
			// machine can hold either goroutine up for 100ms). The
			// client's count above is the one that says how many
			// attempts were made.
			if got := srv.Stats().Requests; got != 3 && (!stall || got > 3) {
				t.Fatalf("the server saw %d attempts, want 3 (1 + maxRetries 2)", got)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	c, err := embedder.NewOpenAI(embedder.Config{BaseURL: url + "/v1", Model: "m", Auth: "none"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), texts(1))
	if !errors.Is(err, embedder.ErrTransport) || !strings.Contains(err.Error(), "embedder.baseURL") {
		t.Fatalf("Embed() = %v, want ErrTransport naming embedder.baseURL", err)
	}
	if st := c.Stats(); st.Requests != 1 || st.Retries != 0 {
		t.Fatalf("stats %+v: a refused connection must not be retried", st)
	}
}

func TestMaxRetriesDisabled(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault503}},
		func(c *embedder.Config) { c.MaxRetries = -1 })
	if _, err := c.Embed(context.Background(), texts(1)); !errors.Is(err, embedder.ErrServer) {
		t.Fatalf("Embed() = %v, want ErrServer", err)
	}
	if got := srv.Stats().Requests; got != 1 {
		t.Fatalf("%d attempts with maxRetries -1, want 1", got)
	}
}

// A 30% fault rate (every kind, stalls included) still embeds every input
// exactly once, each with its own vector. Stalls end in a 504 after 50ms
// here and the attempt timeout is generous: an answer the client gave up on
// after the server sent it would be (correctly) asked for again and counted
// twice by the server. Stalls cut by the attempt timeout are covered by
// TestEmbedRetriesEachFault.
func TestEmbedThirtyPercentFaults(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{FaultRate: 0.3, Seed: 7, Stall: 50 * time.Millisecond}, func(c *embedder.Config) {
		c.MaxRetries = 10
		c.Timeout = 10 * time.Second
		c.BatchSize = 10
		c.Concurrency = 8
	})
	in := texts(400)
	vecs, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, vecs, 32)
	st := srv.Stats()
	if st.InputsServed != 400 {
		t.Fatalf("server served %d inputs, want each of 400 exactly once", st.InputsServed)
	}
	if st.Faults == 0 || c.Stats().Retries == 0 {
		t.Fatalf("no faults injected (%+v); the test proves nothing", st)
	}
}

// A 60 s Retry-After with a 1 s deadline returns at once with the context
// error, without waiting for the deadline.
func TestRetryAfterBeyondDeadline(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{RPM: 1, RetryAfter: time.Minute, NoRateLimitHeaders: true}, nil)
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err) // uses the one request of the quota
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Embed(ctx, texts(1))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, embedder.ErrThrottled) {
		t.Fatalf("Embed() = %v, want DeadlineExceeded wrapping the 429", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Embed waited for the deadline instead of returning at once")
	}
	if srv.Stats().Throttled != 1 || c.Stats().Throttled != 1 {
		t.Fatalf("server %+v / client %+v: want exactly one 429", srv.Stats(), c.Stats())
	}
}

// Retry-After wins over the computed delay: the retry comes after the
// server's delay even though the computed one is a millisecond.
func TestRetryAfterHonoured(t *testing.T) {
	const after = 300 * time.Millisecond
	c, srv := startOpenAI(t, embedtest.Options{RPM: 1, RetryAfter: after, NoRateLimitHeaders: true}, func(c *embedder.Config) { c.MaxRetries = 5 })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Embed(ctx, texts(1))
	// RPM 1 admits the next request only after a minute: every retry is
	// throttled, each after waiting the server's delay.
	if !errors.Is(err, embedder.ErrThrottled) {
		t.Fatalf("Embed() = %v, want ErrThrottled after retries", err)
	}
	if got, min := time.Since(start), 5*after; got < min {
		t.Fatalf("5 retries took %v, want at least 5 × Retry-After = %v", got, min)
	}
	if got := srv.Stats().Throttled; got != 6 {
		t.Fatalf("%d 429s, want 6", got)
	}
}

// After a 429 the Client pauses every worker for the server's Retry-After,
// not only the one refused: while the pause is in force no request reaches
// the server. The server (RPM 1, no x-ratelimit-* headers) admits one
// request and refuses the next with Retry-After; then four workers sharing
// the Client (Concurrency 4) embed one input each. Retries are off, so each
// request the server sees is one a worker decided it could send.
func TestThrottlePausesEveryWorker(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		deadline   time.Duration // of the workers' context; 0: none
		wantErr    error
		wantSent   int64 // requests of the workers that reach the server
	}{
		// The pause outlasts the workers' deadline: they fail at once, and
		// the server never hears of them.
		{"pause beyond the deadline", time.Minute, 30 * time.Second, context.DeadlineExceeded, 0},
		// The workers wait out the pause, then each is sent (and refused
		// again: RPM 1), none before the pause ends.
		{"workers wait out the pause", 200 * time.Millisecond, 0, embedder.ErrThrottled, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, embedtest.Options{RPM: 1, RetryAfter: tt.retryAfter, NoRateLimitHeaders: true}, func(c *embedder.Config) {
				c.Concurrency = 4
				c.MaxRetries = -1
			})
			if _, err := c.Embed(context.Background(), texts(1)); err != nil {
				t.Fatal(err) // the one request of the quota
			}
			start := time.Now() // the pause will end no earlier than start+retryAfter
			if _, err := c.Embed(context.Background(), texts(1)); !errors.Is(err, embedder.ErrThrottled) {
				t.Fatalf("Embed() = %v, want ErrThrottled", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.deadline > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tt.deadline)
			}
			defer cancel()
			errc := make(chan error, 4)
			for range 4 {
				go func() {
					_, err := c.Embed(ctx, texts(1))
					errc <- err
				}()
			}
			limit := time.After(10 * time.Second)
			for n := 0; n < 4; n++ {
				select {
				case err := <-errc:
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("worker: Embed() = %v, want %v", err, tt.wantErr)
					}
				case <-limit:
					t.Fatalf("%d of 4 workers returned within 10s", n)
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("the workers returned only when their context ended (%v)", ctx.Err())
			}
			if got := time.Since(start); tt.wantSent > 0 && got < tt.retryAfter {
				t.Fatalf("the workers were answered %v after the 429, before its Retry-After %v ended", got, tt.retryAfter)
			}
			if st := srv.Stats(); st.Requests != 2+tt.wantSent || st.Throttled != 1+tt.wantSent {
				t.Fatalf("server stats %+v: want %d requests, %d of them 429", st, 2+tt.wantSent, 1+tt.wantSent)
			}
		})
	}
}

// The x-ratelimit-* headers let the client hold back a request the server
// would refuse: no 429 is ever provoked.
func TestRateLimitHeadersPreventThrottling(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{RPM: 1}, nil)
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Embed(ctx, texts(1))
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("Embed() = %v, want an immediate DeadlineExceeded (the headers say the quota is spent for a minute)", err)
	}
	if st := srv.Stats(); st.Requests != 1 || st.Throttled != 0 {
		t.Fatalf("server stats %+v, want the second request never sent", st)
	}
}

// Cancelling Embed while its four requests stall at the server returns
// context.Canceled at once. OnStall tells when all four are stalled.
func TestCancelWhileStalled(t *testing.T) {
	stalled := make(chan struct{}, 16)
	c, _ := startOpenAI(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultStall},
		OnStall: func() {
			select {
			case stalled <- struct{}{}:
			default: // never block the server; four signals are all the test reads
			}
		}}, func(c *embedder.Config) {
		c.BatchSize = 2
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, texts(8)) // 4 concurrent stalled requests
		errc <- err
	}()
	limit := time.After(10 * time.Second)
	for n := 0; n < 4; n++ {
		select {
		case <-stalled:
		case err := <-errc:
			t.Fatalf("Embed returned before its requests stalled: %v", err)
		case <-limit:
			t.Fatalf("%d of 4 requests stalled within 10s", n)
		}
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Embed() = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Embed did not return after cancel")
	}
}

// A budget equal to the server's quota is never throttled, even with many
// concurrent callers sharing the Client.
func TestBudgetAvoids429(t *testing.T) {
	const tpm = 120_000 // 2,000 tokens/s
	// Slack 200ms: tolerate scheduling jitter of a loaded machine under -race.
	c, srv := startOpenAI(t, embedtest.Options{TPM: tpm, RPM: 600, Slack: 200 * time.Millisecond}, func(c *embedder.Config) {
		c.TokensPerMinute = tpm
		c.RequestsPerMinute = 600
		c.BatchSize = 8
		c.Concurrency = 4
	})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[w] = c.Embed(context.Background(), texts(40))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if st := srv.Stats(); st.Throttled != 0 || st.InputsServed != 160 {
		t.Fatalf("server stats %+v, want 160 inputs served and no 429", st)
	}
}

// A budget above the quota meets 429s, cuts concurrency, and still finishes.
func TestOverBudgetRecovers(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{RPM: 1200, NoRateLimitHeaders: true}, func(c *embedder.Config) {
		c.BatchSize = 1
		c.Concurrency = 8
		c.MaxRetries = 20
	})
	in := texts(60)
	vecs, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, vecs, 32)
	st := c.Stats()
	if st.Throttled == 0 || srv.Stats().Throttled != st.Throttled {
		t.Fatalf("client stats %+v, server %+v: want some 429s counted on both sides", st, srv.Stats())
	}
	if st.Concurrency >= 8 {
		t.Fatalf("concurrency %v after 429s, want it cut below 8", st.Concurrency)
	}
}

type fakeCredential struct{ token string }

func (f fakeCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	if len(o.Scopes) != 1 || o.Scopes[0] != embedder.CognitiveServicesScope {
		return azcore.AccessToken{}, fmt.Errorf("unexpected scopes %v", o.Scopes)
	}
	return azcore.AccessToken{Token: f.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestAzureOpenAI(t *testing.T) {
	t.Setenv("SLUICE_TEST_AZ_KEY", testKey)
	tests := []struct {
		name     string
		cfg      embedder.Config
		opts     []embedder.Option
		sentinel error // nil: success
		mention  string
	}{
		{"api-key", embedder.Config{Deployment: "emb", APIKeyEnv: "SLUICE_TEST_AZ_KEY"}, nil, nil, ""},
		{"entra", embedder.Config{Deployment: "emb", Auth: "defaultAzureCredential"},
			[]embedder.Option{embedder.WithTokenCredential(fakeCredential{testKey})}, nil, ""},
		{"wrong token", embedder.Config{Deployment: "emb", Auth: "managedIdentity"},
			[]embedder.Option{embedder.WithTokenCredential(fakeCredential{"nope"})}, embedder.ErrUnauthorized, "Cognitive Services OpenAI User"},
		{"unknown deployment", embedder.Config{Deployment: "missing", APIKeyEnv: "SLUICE_TEST_AZ_KEY"}, nil, embedder.ErrNotFound, `deployment "missing"`},
		// Other spellings of embedder.auth select the same authentication.
		{"api-key as AzureKeyCredential", embedder.Config{Deployment: "emb", APIKeyEnv: "SLUICE_TEST_AZ_KEY", Auth: "AzureKeyCredential"}, nil, nil, ""},
		{"entra as DEFAULT", embedder.Config{Deployment: "emb", Auth: "DEFAULT"},
			[]embedder.Option{embedder.WithTokenCredential(fakeCredential{testKey})}, nil, ""},
		{"entra as ManagedIdentityCredential", embedder.Config{Deployment: "emb", Auth: "ManagedIdentityCredential"},
			[]embedder.Option{embedder.WithTokenCredential(fakeCredential{testKey})}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{Key: testKey, Deployment: "emb", Dimensions: 16})
			cfg := tt.cfg
			cfg.Provider, cfg.Endpoint, cfg.Dimensions = "azure-openai", url, 16
			hc := testHTTPClient(t)
			c, err := embedder.NewAzureOpenAI(context.Background(), cfg, append(tt.opts, embedder.WithHTTPClient(hc))...)
			if err != nil {
				t.Fatal(err)
			}
			in := texts(3)
			vecs, err := c.Embed(context.Background(), in)
			if tt.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				checkVectors(t, in, vecs, 16)
				return
			}
			if !errors.Is(err, tt.sentinel) || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("Embed() = %v, want %v mentioning %q", err, tt.sentinel, tt.mention)
			}
			if strings.Contains(err.Error(), testKey) || srv.Stats().Requests != 1 {
				t.Fatalf("error %q leaks the key or was retried", err)
			}
		})
	}
}

// TestTokenCounter: WithTokenCounter replaces the built-in tokenizer for
// inputs without a count: its counts decide the input cap and are what the
// client reports sending, and its errors stop the call before any request.
func TestTokenCounter(t *testing.T) {
	t.Setenv("SLUICE_TEST_KEY", testKey)
	srv, url := embedtest.Start(t, embedtest.Options{Key: testKey, Dimensions: 32})
	cfg := embedder.Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-model", Dimensions: 32,
		APIKeyEnv: "SLUICE_TEST_KEY", MaxTokensPerInput: 10}
	fastRetries(&cfg)
	bytesCount := func(s string) (int, error) {
		if s == "bad" {
			return 0, errors.New("cannot count")
		}
		return len(s), nil // one token per byte
	}
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)), embedder.WithTokenCounter(bytesCount))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// "two words" is 2 cl100k_base tokens but 9 by the counter: within the cap.
	if _, err := c.Embed(ctx, embedder.Texts("two words")); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.TokensSent != 9 {
		t.Errorf("TokensSent = %d, want the counter's 9", st.TokensSent)
	}
	var tl *embedder.InputTooLargeError
	if _, err := c.Embed(ctx, embedder.Texts("eleven byte")); !errors.As(err, &tl) || tl.Tokens != 11 {
		t.Errorf("Embed of an 11-byte text with a cap of 10 = %v, want *InputTooLargeError of 11 tokens", err)
	}
	before := srv.Stats().Requests
	if _, err := c.Embed(ctx, embedder.Texts("bad")); err == nil || !strings.Contains(err.Error(), "cannot count") {
		t.Errorf("Embed with a failing counter = %v, want its error", err)
	}
	if srv.Stats().Requests != before {
		t.Error("a request was sent although counting failed")
	}
}

// TestConnectionRefusedAfterAnAnswer: once the server has answered, a
// connection it refuses is a restart, retried with backoff until it is
// back; before any answer a refused connection fails at once
// (TestConnectionRefused). The dialler refuses the connections of the
// second request's first two attempts, as a restarting server does.
func TestConnectionRefusedAfterAnAnswer(t *testing.T) {
	t.Setenv("SLUICE_TEST_KEY", testKey)
	srv, url := embedtest.Start(t, embedtest.Options{Key: testKey, Dimensions: 32})
	var refuse atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true // every attempt dials
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if refuse.Add(-1) >= 0 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cfg := embedder.Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-model", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_KEY"}
	fastRetries(&cfg)
	cfg.MaxRetries = 3
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatalf("first Embed: %v", err)
	}
	refuse.Store(2)
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatalf("Embed while the server restarts: %v; want it retried until the server is back", err)
	}
	if st := c.Stats(); st.Requests != 4 || st.Retries != 2 || st.Succeeded != 2 {
		t.Errorf("client stats %+v: want 4 requests, 2 of them retries, 2 succeeded", st)
	}
	if got := srv.Stats().OK; got != 2 {
		t.Errorf("the server answered %d requests, want 2", got)
	}
	// Refused for longer than the retries last: the error says the server
	// is not reachable, after 1 + maxRetries attempts.
	refuse.Store(100)
	_, err = c.Embed(context.Background(), texts(1))
	if !errors.Is(err, embedder.ErrTransport) || !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "embedder.baseURL") {
		t.Errorf("Embed while the server stays down = %v; want ErrTransport, refused, naming embedder.baseURL", err)
	}
	if st := c.Stats(); st.Retries != 2+int64(cfg.MaxRetries) {
		t.Errorf("client stats %+v: want %d more retries", st, cfg.MaxRetries)
	}
}
