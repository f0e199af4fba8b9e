package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// SimModel is the model name the simulated provider is asked for.
const SimModel = "sluice-sim"

// SimOptions configure the simulated provider. The names map to the
// --sim-* flags of `sluice bench`.
type SimOptions struct {
	// Latency is the base time to answer a request; default 0.
	Latency time.Duration `yaml:"latency"`
	// TokenLatency is added to Latency per token of the request; default 0.
	TokenLatency time.Duration `yaml:"tokenLatency"`
	// RPM is the requests-per-minute quota; default 0, unlimited.
	RPM int `yaml:"rpm"`
	// TPM is the tokens-per-minute quota; default 0, unlimited.
	TPM int `yaml:"tpm"`
}

// MaxSimLatency is the longest simulated base latency of a request.
const MaxSimLatency = time.Minute

// Validate returns an *OptionsError naming the first wrong setting.
func (o SimOptions) Validate() error {
	switch {
	case o.Latency < 0:
		return optErr("--sim-latency", "must be 0s or more, got %s", o.Latency)
	case o.Latency > MaxSimLatency:
		return optErr("--sim-latency", "must be at most %s (a real provider answers within seconds), got %s", MaxSimLatency, o.Latency)
	case o.TokenLatency < 0:
		return optErr("--sim-token-latency", "must be 0s or more, got %s", o.TokenLatency)
	case o.RPM < 0:
		return optErr("--sim-rpm", "must be 0 (unlimited) or more, got %d", o.RPM)
	case o.TPM < 0:
		return optErr("--sim-tpm", "must be 0 (unlimited) or more, got %d", o.TPM)
	}
	return nil
}

// CheckTimeout returns an *OptionsError naming --sim-latency,
// --sim-token-latency and embedder.timeout when the simulated provider
// would answer a request of one chunk of chunkTokens tokens
// (splitter.chunkSize) no sooner than timeout, embedder.timeout: Latency
// plus chunkTokens times TokenLatency must be below it. Otherwise no
// configuration could embed a full chunk: every request would time out and
// be retried until its trial failed, minutes later, or (waiting for a
// first embedded token) never end at all.
//
// Larger requests, of a configuration's larger batches, may still take
// longer than embedder.timeout: those configurations fail, and are
// reported as failed, while the others are measured.
func (o SimOptions) CheckTimeout(timeout time.Duration, chunkTokens int) error {
	took := o.Latency
	switch {
	case o.TokenLatency <= 0 || chunkTokens <= 0:
	case int64(chunkTokens) > int64(math.MaxInt64-o.Latency)/int64(o.TokenLatency):
		took = math.MaxInt64 // longer than a Duration holds
	default:
		took += time.Duration(chunkTokens) * o.TokenLatency
	}
	if took < timeout {
		return nil
	}
	return optErr("--sim-latency and --sim-token-latency",
		"%s plus %s per token makes the simulated provider answer a request of one chunk (splitter.chunkSize, %d tokens) in %s, "+
			"not below embedder.timeout (%s): no configuration could embed a chunk without timing out; "+
			"lower --sim-latency or --sim-token-latency, or raise embedder.timeout",
		o.Latency, o.TokenLatency, chunkTokens, took, timeout)
}

// SimulatedEmbedder returns base pointed at the simulated provider serving
// at baseURL (Simulator.URL): provider openai, no key, model SimModel.
// base's requestsPerMinute and tokensPerMinute budgets are kept when set,
// else the client paces itself at the simulated quota.
func SimulatedEmbedder(base embedder.Config, baseURL string, sim SimOptions) embedder.Config {
	c := base
	c.Provider = embedder.ProviderOpenAI
	c.BaseURL = baseURL
	c.Model = SimModel
	c.Auth = embedder.AuthNone
	c.APIKeyEnv = ""
	c.Endpoint, c.Deployment, c.APIVersion, c.ManagedIdentityClientID = "", "", "", ""
	if c.RequestsPerMinute == 0 {
		c.RequestsPerMinute = sim.RPM
	}
	if c.TokensPerMinute == 0 {
		c.TokensPerMinute = sim.TPM
	}
	return c
}

// Simulator serves the simulated provider, embedtest's server, on
// 127.0.0.1 on a free port.
type Simulator struct {
	srv   *embedtest.Server
	hs    *http.Server
	url   string
	done  chan error
	close sync.Once
	err   error
}

// StartSimulator starts a Simulator with vectors of dims floats.
func StartSimulator(opts SimOptions, dims int) (*Simulator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: starting the simulated provider: %w", err)
	}
	srv := embedtest.NewHandler(embedtest.Options{
		RPM: opts.RPM, TPM: opts.TPM,
		Latency: opts.Latency, TokenLatency: opts.TokenLatency,
		Dimensions: dims,
	})
	s := &Simulator{
		srv:  srv,
		hs:   &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second},
		url:  "http://" + ln.Addr().String() + "/v1",
		done: make(chan error, 1),
	}
	go func() { s.done <- s.hs.Serve(ln) }()
	return s, nil
}

// URL is the OpenAI base URL of the simulator, ending in /v1.
func (s *Simulator) URL() string { return s.url }

// Stats returns what the simulator served.
func (s *Simulator) Stats() embedtest.Stats { return s.srv.Stats() }

// Close stops the simulator and waits for it; it may be called twice.
func (s *Simulator) Close() error {
	s.close.Do(func() {
		s.srv.Close() // ends latency waits in progress
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.hs.Shutdown(ctx); err != nil {
			s.err = fmt.Errorf("bench: stopping the simulated provider: %w", err)
			_ = s.hs.Close()
		}
		if err := <-s.done; !errors.Is(err, http.ErrServerClosed) && s.err == nil {
			s.err = fmt.Errorf("bench: simulated provider: %w", err)
		}
	})
	return s.err
}

// RequestLatency is how long the simulated provider takes to answer a
// request of the given tokens: Latency plus TokenLatency per token.
func (o SimOptions) RequestLatency(tokens float64) time.Duration {
	return o.Latency + time.Duration(tokens*float64(o.TokenLatency))
}
