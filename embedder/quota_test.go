package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/splitter"
)

var quotaFault = embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultQuota}}

// checkQuotaError asserts that err is the permanent insufficient_quota error:
// ErrQuotaExhausted (not ErrThrottled, not a bad request), saying what to do
// about it rather than how to pace requests.
func checkQuotaError(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, embedder.ErrQuotaExhausted) || !errors.Is(err, embedder.ErrEmbed) {
		t.Fatalf("err = %v, want ErrQuotaExhausted and ErrEmbed", err)
	}
	if errors.Is(err, embedder.ErrThrottled) || errors.Is(err, embedder.ErrBadRequest) {
		t.Fatalf("err = %v matches ErrThrottled or ErrBadRequest: it is neither a rate limit nor a bad input", err)
	}
	var apiErr *embedder.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.Type != "insufficient_quota" || apiErr.Code != "insufficient_quota" {
		t.Fatalf("err = %#v, want an *APIError 429 of type and code insufficient_quota", apiErr)
	}
	msg := err.Error()
	for _, m := range []string{"quota or credits", "exhausted", "plan and billing", "SLUICE_TEST_KEY", "retrying will not help"} {
		if !strings.Contains(msg, m) {
			t.Errorf("error %q does not say %q", msg, m)
		}
	}
	for _, m := range []string{"requestsPerMinute", "tokensPerMinute", testKey} {
		if strings.Contains(msg, m) {
			t.Errorf("error %q says %q", msg, m)
		}
	}
}

// OpenAI's 429 insufficient_quota is not a rate limit: the error-code guide
// says retrying will not fix it. It is not retried, does not halve the
// concurrency cap and does not count as throttling.
func TestQuotaExhaustedNotRetried(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*embedder.Config)
		inputs      int
		maxRequests int64
	}{
		{"one request", nil, 3, 1},
		{"concurrent requests", func(c *embedder.Config) { c.BatchSize = 1; c.Concurrency = 4 }, 8, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, quotaFault, func(c *embedder.Config) {
				c.MaxRetries = 5
				if tt.edit != nil {
					tt.edit(c)
				}
			})
			_, err := c.Embed(context.Background(), texts(tt.inputs))
			checkQuotaError(t, err)
			if st := srv.Stats(); st.Requests < 1 || st.Requests > tt.maxRequests || st.OK != 0 {
				t.Fatalf("server stats %+v: want between 1 and %d requests, none retried", st, tt.maxRequests)
			}
			if st := c.Stats(); st.Retries != 0 || st.Throttled != 0 || st.Concurrency != 4 || st.Failures < 1 {
				t.Fatalf("client stats %+v: want no retry, no 429 counted as throttling, the cap still 4, a failure", st)
			}
		})
	}
}

// A rate-limit 429 is still retried and still hints at pacing: only the
// body's error type or code makes a 429 permanent.
func TestRateLimitStillRetried(t *testing.T) {
	c, srv := startOpenAI(t, embedtest.Options{RPM: 1, RetryAfter: 1, NoRateLimitHeaders: true}, func(c *embedder.Config) { c.MaxRetries = 2 })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err) // uses the one request of the quota
	}
	_, err := c.Embed(context.Background(), texts(1))
	if !errors.Is(err, embedder.ErrThrottled) || errors.Is(err, embedder.ErrQuotaExhausted) {
		t.Fatalf("Embed() = %v, want ErrThrottled", err)
	}
	if !strings.Contains(err.Error(), "embedder.requestsPerMinute") {
		t.Errorf("rate-limit error %q lacks the pacing hint", err)
	}
	if got := srv.Stats().Throttled; got != 3 {
		t.Fatalf("%d 429s, want 3 (1 + maxRetries 2)", got)
	}
}

// discardStore is a pipeline.Writer that keeps nothing.
type discardStore struct {
	mu   sync.Mutex
	adds int
}

func (s *discardStore) Add(_ context.Context, nodes []sink.Node) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adds++
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids, nil
}

func (s *discardStore) DeleteNodes(context.Context, []string) error { return nil }
func (s *discardStore) Delete(context.Context, string) error        { return nil }

// The pipeline sees the same error: ErrQuotaExhausted stops the run at once,
// instead of failing the documents one by one as it does for a bad input,
// and nothing is retried.
func TestQuotaExhaustedStopsPipeline(t *testing.T) {
	c, srv := startOpenAI(t, quotaFault, func(c *embedder.Config) { c.MaxRetries = 5; c.BatchSize = 4 })
	root := t.TempDir()
	for i := range 20 {
		body := strings.Repeat(fmt.Sprintf("Document %d talks about topic %d at some length. ", i, i%5), 20)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("d%02d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rcfg := reader.DefaultConfig()
	rcfg.Dir = root
	sp, err := splitter.New(splitter.Config{ChunkSize: 64, ChunkOverlap: 8})
	if err != nil {
		t.Fatal(err)
	}
	store := &discardStore{}
	rep, err := pipeline.Run(context.Background(), pipeline.Options{
		Reader: rcfg, Splitter: sp, Embedder: c, Store: store, BatchSize: 4, EmbedConcurrency: 2,
	})
	checkQuotaError(t, err)
	if rep != nil && (rep.FilesFailed != 0 || rep.FilesIngested != 0) {
		t.Errorf("report: %d ingested, %d failed; an exhausted quota must stop the run, not fail documents one by one",
			rep.FilesIngested, rep.FilesFailed)
	}
	if store.adds != 0 {
		t.Errorf("%d writes after an exhausted quota", store.adds)
	}
	// Two embedding workers may each have sent a request before the run
	// stopped; with retries (maxRetries 5) there would be 6 or more.
	if st := c.Stats(); st.Retries != 0 || st.Requests > 4 {
		t.Fatalf("client stats %+v: want a few requests and no retry", st)
	}
	if got := srv.Stats().Requests; got > 4 {
		t.Fatalf("the server got %d requests; the run should stop at the first refusals", got)
	}
}
