package embedder_test

import (
	"bytes"
	"context"
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
