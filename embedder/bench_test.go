package embedder_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

// benchText is about 4 KB of English prose with some punctuation and
// non-ASCII words, the size of a 1024-token chunk.
var benchText = strings.Repeat("Sluice streams a folder of documents through a sentence splitter and "+
	"rate-limited, batched embedding into a vector index; naïve café, 東京 2026. ", 30)

// BenchmarkHash measures the hash embedder's throughput in MB/s of text
// (one core). Run: go test -run '^$' -bench Hash -cpu 1 ./embedder/
func BenchmarkHash(b *testing.B) {
	for _, dims := range []int{384, 1536} {
		b.Run("dims="+itoa(dims), func(b *testing.B) {
			h := embedder.NewHash(dims)
			in := embedder.Texts(benchText, benchText, benchText, benchText)
			b.SetBytes(int64(4 * len(benchText)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuota embeds a corpus against the test server with an RPM/TPM
// quota and reports the tokens per minute achieved as a fraction of the
// quota (tpm_util, excluding the quota's initial one-second burst), the 429s
// (http429) and the requests rejected for size caps (http400).
// With the budget equal to the quota, expect tpm_util >= 0.95 and no 429;
// with twice the quota, 429s appear and everything is still embedded.
// Run: go test -run '^$' -bench Quota -benchtime 1x ./embedder/
func BenchmarkQuota(b *testing.B) {
	const (
		quotaTPM = 600_000 // 10,000 tokens/s
		quotaRPM = 1_200
		corpus   = 40_000 // tokens per run
	)
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		b.Fatal(err)
	}
	var in []embedder.Input
	for total := 0; total < corpus; {
		text := fmt.Sprintf("Chunk %d of the benchmark corpus discusses quotas, pacing and retries; "+
			"it is long enough to carry a few dozen tokens like a small chunk would, %d.", len(in), total)
		n, _ := codec.Count(text)
		in = append(in, embedder.Input{Text: text, Tokens: n})
		total += n
	}
	for _, tt := range []struct {
		name   string
		budget int // client tokensPerMinute
		rpm    int
	}{
		{"budget=quota", quotaTPM, quotaRPM},
		{"budget=2x_quota", 2 * quotaTPM, 2 * quotaRPM},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				srv, url := embedtest.Start(b, embedtest.Options{
					TPM: quotaTPM, RPM: quotaRPM, Dimensions: 64,
					Latency: 20 * time.Millisecond, TokenLatency: time.Microsecond,
				})
				c, err := embedder.NewOpenAI(embedder.Config{
					BaseURL: url + "/v1", Model: "m", Auth: embedder.AuthNone, Dimensions: 64,
					BatchSize: 20, Concurrency: 8, MaxRetries: 20,
					TokensPerMinute: tt.budget, RequestsPerMinute: tt.rpm,
				})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := c.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				st, cs := srv.Stats(), c.Stats()
				// The server admits at most its bucket (one second of quota)
				// beyond the steady rate; leave that start-up burst out.
				burst := float64(max(quotaTPM/60, embedder.DefaultMaxTokensPerInput))
				achieved := (float64(st.TokensServed) - burst) / elapsed.Minutes()
				b.ReportMetric(achieved/quotaTPM, "tpm_util")
				b.ReportMetric(float64(st.TokensServed)/elapsed.Minutes(), "tpm")
				b.ReportMetric(float64(st.Throttled), "http429")
				b.ReportMetric(float64(st.TooLarge), "http400")
				b.ReportMetric(float64(cs.P50.Milliseconds()), "p50_ms")
				if st.TooLarge != 0 {
					b.Errorf("%d requests rejected for size caps", st.TooLarge)
				}
				if tt.budget <= quotaTPM && st.Throttled != 0 {
					b.Errorf("%d 429s with a budget within the quota", st.Throttled)
				}
			}
		})
	}
}
