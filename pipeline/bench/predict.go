package bench

import (
	"math"
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// Workload is what Options.Predict needs to know, besides the options, to
// predict how long trials take: what they run against, the corpus's chunks
// and the provider's speed.
type Workload struct {
	// Embedder and TokensPerMinute are those of the Harness that measures
	// the trials (Harness.Embedder and Harness.TokensPerMinute).
	Embedder        embedder.Config
	TokensPerMinute int
	// TokensPerChunk is the mean tokens of a chunk of the corpus (see
	// Harness.ChunkTokens); 0 if unknown, when the size of a request, and
	// so its pace under a token quota, is unknown too.
	TokensPerChunk float64
	// Latency returns how long the provider takes to answer a request of
	// the given tokens (SimOptions.RequestLatency for the simulated
	// provider); nil if unknown (a real provider, a local embedder), when
	// each prediction is a lower bound.
	Latency func(tokens float64) time.Duration
	// Startup is how long a trial takes before it starts its pipeline: for
	// a process per trial (Exec), starting the process and listing the
	// corpus.
	Startup time.Duration
}

// Prediction is how long trials are expected to take (Options.Predict),
// retries and 429s not counted.
type Prediction struct {
	// Trials holds each trial's time, in the order of the trials given:
	// a lower bound when AtLeast.
	Trials []time.Duration
	// AtLeast reports that the provider's latency or the size of its
	// requests is unknown: each window lasts until MinRequests requests
	// complete, which may take up to MaxDuration, so each of Trials is a
	// lower bound and Most the upper one.
	AtLeast bool
	// Most is the longest a trial can take without retries: its window at
	// MaxDuration.
	Most time.Duration
	// Extended counts the trials whose windows are held open past Duration
	// until MinRequests requests complete (known to be; with AtLeast,
	// others may be too).
	Extended int
	// Quota reports that the trials run under a quota (see Options.Cooldown),
	// which may throttle them: a throttled request waits before its retry,
	// and a trial with such waits takes longer than predicted.
	Quota bool
}

// Total is the sum of Trials: the time of the whole benchmark (a lower
// bound when AtLeast).
func (p Prediction) Total() time.Duration {
	var sum time.Duration
	for _, d := range p.Trials {
		sum += d
	}
	return sum
}

// Predict returns how long each of trials takes against w, in Measure's
// steps:
//
//   - w.Startup, then against a quota the cool-down;
//   - the time to the first embedded chunk: the latency of a request;
//   - the warm-up (WarmupFor);
//   - the measured window: Duration, or longer until MinRequests requests
//     have completed, up to MaxDuration. Requests complete at concurrency
//     over their latency per second, or at the pace of a quota when that
//     is slower: a token budget admits tokensPerMinute/60 over a request's
//     tokens, a request budget requestsPerMinute/60, per second. A request
//     carries the trial's batch of chunks of w.TokensPerChunk tokens, cut
//     to the embedder's caps (Limits): whole chunks, so about half a chunk
//     below a token cap;
//   - the window opens at the first request to complete after the
//     warm-up, on average half the time between two completions later,
//     and, when Duration holds it open, closes at the first to complete
//     after Duration, another half of that time later;
//   - the window ends at a poll (every pollEvery), on average half a
//     period late.
//
// With the latency unknown, the window is counted at Duration or at the
// quota's pace (a quota caps the pace; a slow provider slows it further),
// and the prediction is a lower bound (Prediction.AtLeast).
func (o Options) Predict(trials []Trial, w Workload) Prediction {
	o.ApplyDefaults()
	p := Prediction{Trials: make([]time.Duration, len(trials))}
	for i, t := range trials {
		tp := o.predictTrial(t, w)
		p.Trials[i] = tp.took
		p.Most = max(p.Most, tp.most)
		p.AtLeast = p.AtLeast || !tp.exact
		p.Quota = p.Quota || tp.quota
		if tp.extended {
			p.Extended++
		}
	}
	return p
}

// trialPrediction is the prediction of one trial.
type trialPrediction struct {
	took, most time.Duration // predicted (a lower bound unless exact), and at most
	exact      bool          // took is a prediction, not a lower bound
	extended   bool          // MinRequests holds the window open past Duration
	quota      bool          // the trial runs under a quota
}

// predictTrial predicts trial t against w (see Predict). o has its
// defaults applied.
func (o Options) predictTrial(t Trial, w Workload) trialPrediction {
	cfg := w.Embedder
	cfg.BatchSize, cfg.Concurrency = t.BatchSize, t.Concurrency
	var p trialPrediction
	d := w.Startup + o.WarmupFor(cfg, w.TokensPerMinute) + pollEvery/2
	if p.quota = hasQuota(cfg, w.TokensPerMinute); p.quota {
		d += o.cooldown()
	}
	tokens := requestTokens(cfg, w.TokensPerChunk)
	rate := paceLimit(cfg, w.TokensPerMinute, tokens) // requests completed per second
	if p.exact = w.Latency != nil && tokens > 0; p.exact {
		latency := w.Latency(tokens)
		d += latency
		if latency > 0 {
			rate = min(rate, float64(t.Concurrency)/latency.Seconds())
		}
	}
	// The time between two completions, to wait for one at each end of
	// the window; 0 when the pace is unknown.
	var gap time.Duration
	if rate > 0 && !math.IsInf(rate, 1) {
		gap = time.Duration(float64(time.Second) / rate)
	}
	window := o.Duration + gap/2                    // closes at the first completion after Duration
	switch need := float64(o.MinRequests) / rate; { // seconds
	case need >= o.MaxDuration.Seconds():
		window, p.extended = o.MaxDuration, o.MaxDuration > o.Duration
	case need > o.Duration.Seconds():
		window, p.extended = time.Duration(need*float64(time.Second)), true
	}
	p.took, p.most = d+gap/2+window, d+gap/2+o.MaxDuration
	return p
}

// requestTokens returns the mean tokens of a request of cfg's batch size
// of chunks of tokensPerChunk tokens, cut to cfg's caps, or 0 when
// tokensPerChunk is unknown (0). Requests hold whole chunks, so a request
// cut by the token cap carries on average half a chunk less.
func requestTokens(cfg embedder.Config, tokensPerChunk float64) float64 {
	if tokensPerChunk <= 0 {
		return 0
	}
	l := cfg.Limits()
	chunks := float64(max(l.MaxInputs, 1))
	if l.MaxTokens > 0 {
		chunks = min(chunks, max(1, float64(l.MaxTokens)/tokensPerChunk-0.5))
	}
	return chunks * tokensPerChunk
}

// paceLimit returns the most requests per second of tokens tokens the
// quotas of a trial against cfg let through (+Inf when none applies; the
// token quotas do not apply when tokens is unknown, 0): the client's
// requestsPerMinute and tokensPerMinute budgets and the provider's quota
// of tokensPerMinute. A local embedder has none: it ignores budgets.
func paceLimit(cfg embedder.Config, tokensPerMinute int, tokens float64) float64 {
	rate := math.Inf(1)
	if cfg.Local() {
		return rate
	}
	if rpm := cfg.RequestsPerMinute; rpm > 0 {
		rate = min(rate, float64(rpm)/60)
	}
	if tokens <= 0 {
		return rate
	}
	for _, tpm := range []int{cfg.TokensPerMinute, tokensPerMinute} {
		if tpm > 0 {
			rate = min(rate, float64(tpm)/60/tokens)
		}
	}
	return rate
}
