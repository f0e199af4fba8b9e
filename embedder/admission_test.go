package embedder_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// tokenTexts returns inputs of exactly total cl100k tokens, none above
// perInput: "a a a ..." is one token per word.
func tokenTexts(total, perInput int) []embedder.Input {
	var in []embedder.Input
	for total > 0 {
		n := min(total, perInput)
		in = append(in, embedder.Input{Text: strings.TrimSpace(strings.Repeat(" a", n)), Tokens: n})
		total -= n
	}
	return in
}

// TestLargestRequestAdmitted checks that the client's largest request,
// Limits().MaxTokens, is one the simulated provider admits when the
// client's budgets equal its quota: the client's share of a second (or of
// a request) is rounded down and takes 90% of it, and the provider's token
// bucket holds at least a second's worth and, with an RPM quota, a
// request's share, TPM/RPM. The buckets start full, so the one request is
// admitted at once or never: no retries, and any 429 fails the test.
func TestLargestRequestAdmitted(t *testing.T) {
	tests := []struct {
		name     string
		rpm, tpm int
		want     int // Limits().MaxTokens
	}{
		{"TPM not a multiple of 60", 0, 1_000_000, 15_000}, // was 16667, one above the bucket
		{"TPM a multiple of 60", 0, 600_000, 9_000},
		{"small TPM: one input's cap", 0, 60_000, 8192},
		{"RPM below 60: a request's share", 30, 600_000, 18_000}, // was 20000, against a bucket of 10000
		{"RPM below 60, odd TPM", 7, 1_000_003, 128_571},
		{"RPM above 60: a second's share", 600, 3_000_000, 45_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, embedtest.Options{RPM: tt.rpm, TPM: tt.tpm}, func(c *embedder.Config) {
				c.RequestsPerMinute, c.TokensPerMinute = tt.rpm, tt.tpm
				c.MaxRetries = -1
			})
			l := c.Limits()
			if l.MaxTokens != tt.want {
				t.Fatalf("Limits().MaxTokens = %d, want %d", l.MaxTokens, tt.want)
			}
			in := tokenTexts(l.MaxTokens, l.MaxInputTokens)
			if _, err := c.Embed(context.Background(), in); err != nil {
				t.Fatalf("a request of Limits().MaxTokens (%d) tokens: %v", l.MaxTokens, err)
			}
			if st := c.Stats(); st.Succeeded != 1 || st.InputsSent != int64(len(in)) || st.TokensSent != int64(l.MaxTokens) {
				t.Errorf("client stats %+v: want 1 request of %d inputs, %d tokens", st, len(in), l.MaxTokens)
			}
			if st := srv.Stats(); st.OK != 1 || st.Throttled != 0 || st.TooLarge != 0 || st.TokensServed != int64(l.MaxTokens) {
				t.Fatalf("server stats %+v: want one request of %d tokens served, no 429", st, l.MaxTokens)
			}
		})
	}
}

// TestRequestTooLargeNotRetried checks that a 429 saying the request is
// larger than the quota can ever admit ("Request too large") is not
// throttling: it is not retried, does not cut the concurrency cap, and
// fails at once with ErrRequestTooLarge (and ErrConfig, a setting to
// change) naming embedder.tokensPerMinute and
// embedder.maxTokensPerRequest. The provider's token bucket holds 8192
// tokens (TPM 100,000: a second's worth is less than one input's cap); the
// request carries 16,000.
func TestRequestTooLargeNotRetried(t *testing.T) {
	tests := []struct {
		name   string
		budget int    // the client's embedder.tokensPerMinute; 0: none
		want   string // besides the two settings
	}{
		{"no budget", 0, "set embedder.tokensPerMinute to the provider's token quota"},
		{"budget above the quota", 6_000_000, "embedder.tokensPerMinute (6000000) lets one request carry up to 90000 tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startOpenAI(t, embedtest.Options{TPM: 100_000}, func(c *embedder.Config) {
				c.TokensPerMinute = tt.budget
				c.MaxRetries = 5
			})
			_, err := c.Embed(context.Background(), tokenTexts(16_000, 8000))
			if !errors.Is(err, embedder.ErrRequestTooLarge) || !errors.Is(err, embedder.ErrConfig) || !errors.Is(err, embedder.ErrEmbed) {
				t.Fatalf("Embed() = %v, want ErrRequestTooLarge, ErrConfig and ErrEmbed", err)
			}
			if errors.Is(err, embedder.ErrThrottled) || errors.Is(err, embedder.ErrQuotaExhausted) {
				t.Fatalf("Embed() = %v matches ErrThrottled or ErrQuotaExhausted", err)
			}
			msg := err.Error()
			for _, w := range []string{"Request too large", "embedder.tokensPerMinute", "embedder.maxTokensPerRequest", "not retried", tt.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "rate limited") {
				t.Errorf("error %q calls it a rate limit", msg)
			}
			if st := srv.Stats(); st.Requests != 1 {
				t.Fatalf("server stats %+v: want the one request, not retried", st)
			}
			if st := c.Stats(); st.Retries != 0 || st.Throttled != 0 || st.Failures != 1 || st.Concurrency != embedder.DefaultConcurrency {
				t.Fatalf("client stats %+v: want no retry, no throttling, one failure, the concurrency cap untouched", st)
			}
		})
	}
}
