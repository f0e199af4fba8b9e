package embedder_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// TestLoggerLogsRequestsAndRetries checks WithLogger: one debug line per
// attempt with its status, one per retry, and never the key.
func TestLoggerLogsRequestsAndRetries(t *testing.T) {
	tests := []struct {
		name       string
		opts       embedtest.Options
		wantStatus []string
		wantRetry  int
	}{
		{"success", embedtest.Options{}, []string{"status=200"}, 0},
		{"server errors", embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.Fault500}}, []string{"status=500", "status=500"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SLUICE_TEST_KEY", testKey)
			tt.opts.Key, tt.opts.Dimensions = testKey, 32
			_, url := embedtest.Start(t, tt.opts)
			cfg := embedder.Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-model", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_KEY", MaxRetries: 1}
			fastRetries(&cfg)
			hc := testHTTPClient(t)
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(hc), embedder.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Embed(context.Background(), texts(3))
			out := buf.String()
			var statuses []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.Contains(line, `msg="embedding request"`) {
					continue
				}
				for _, f := range strings.Fields(line) {
					if strings.HasPrefix(f, "status=") {
						statuses = append(statuses, f)
					}
				}
				if !strings.Contains(line, "inputs=3") || !strings.Contains(line, "url="+url+"/v1/embeddings") {
					t.Errorf("request line lacks inputs or url: %s", line)
				}
			}
			if strings.Join(statuses, " ") != strings.Join(tt.wantStatus, " ") {
				t.Errorf("logged statuses %v, want %v; log:\n%s", statuses, tt.wantStatus, out)
			}
			if n := strings.Count(out, "will be retried"); n != tt.wantRetry {
				t.Errorf("%d retry lines, want %d; log:\n%s", n, tt.wantRetry, out)
			}
			if strings.Contains(out, testKey) {
				t.Errorf("the API key appears in the log:\n%s", out)
			}
		})
	}
}

// TestLoggerWarnsWhenRateLimited checks that a 429 is visible without debug
// logging: the 429 that begins a storm is logged once at warning level,
// with the count, the wait and the budget settings to check, and never the
// key. Before, 429s were logged at debug level only, so a nightly run whose
// budgets exceeded the quota was slowed by them without a word.
func TestLoggerWarnsWhenRateLimited(t *testing.T) {
	t.Setenv("SLUICE_TEST_KEY", testKey)
	_, url := embedtest.Start(t, embedtest.Options{Key: testKey, Dimensions: 32, RPM: 1, NoRateLimitHeaders: true})
	cfg := embedder.Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-model", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_KEY",
		MaxRetries: -1, TokensPerMinute: 100000}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, err := embedder.NewOpenAI(cfg, embedder.WithHTTPClient(testHTTPClient(t)), embedder.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Embed(ctx, texts(1)); err != nil {
		t.Fatalf("first request, within the quota: %v", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("a successful request logged at info level or above:\n%s", buf.String())
	}
	if _, err := c.Embed(ctx, texts(1)); !errors.Is(err, embedder.ErrThrottled) {
		t.Fatalf("second request: err = %v, want ErrThrottled (the quota admits one request a minute)", err)
	}
	out := strings.TrimSpace(buf.String())
	lines := strings.Split(out, "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "rate limiting") {
		t.Fatalf("want one warning that the provider is rate limiting; log:\n%s", out)
	}
	for _, w := range []string{"throttled=1", "requestsPerMinute=unlimited", "tokensPerMinute=100000", "url=" + url + "/v1/embeddings"} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("warning lacks %s: %s", w, lines[0])
		}
	}
	if strings.Contains(out, testKey) {
		t.Errorf("the API key appears in the log:\n%s", out)
	}
}
