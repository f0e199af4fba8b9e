package bench

import (
	"time"

	"github.com/sluice-dev/sluice/embedder"
)

// hasQuota reports whether a trial against emb runs under a quota: an HTTP
// provider with a requestsPerMinute or tokensPerMinute budget, or a known
// provider quota of tokensPerMinute.
func hasQuota(emb embedder.Config, tokensPerMinute int) bool {
	if tokensPerMinute > 0 {
		return true
	}
	return !emb.Local() && (emb.TokensPerMinute > 0 || emb.RequestsPerMinute > 0)
}

// burstWindow returns how long the burst allowance of the quotas a trial
// against emb runs under lasts at their refill rate, or 0 when no quota
// applies. A token bucket starts full: in its first moments a trial sends
// its burst on top of the quota's rate, so a measurement that starts before
// the burst is spent reports more than the quota can sustain (over 100% of
// it). The window is the longest of:
//
//   - emb's tokensPerMinute budget (HTTP providers): the client lets one
//     request's token cap (embedder.Config.Limits().MaxTokens, never less
//     than one input's cap) through at once, which the budget refills in
//     MaxTokens/(tokensPerMinute/60) seconds;
//   - emb's requestsPerMinute budget: max(1, rpm/60) requests at once, at
//     least one second's worth;
//   - the provider's quota of tokensPerMinute (the simulated provider's,
//     or the one utilisation is measured against): one second's worth, the
//     refill window of per-second limits. The simulated provider's bucket
//     also holds at least one input's cap and, with an RPM quota, one
//     request's share (TPM/RPM); SimulatedEmbedder gives the client the
//     same budget (unless the configuration sets its own), which paces it
//     at the quota's rate once its own burst, whose window is above, is
//     spent.
//
// The window assumes the burst is spent at once. A configuration only a
// little faster than the quota spends it more slowly, so its window may
// still read a little above 100% of the quota, which Pick counts as 100%.
// Options.WarmupFor raises the warm-up to it.
func burstWindow(emb embedder.Config, tokensPerMinute int) time.Duration {
	var w time.Duration
	if tokensPerMinute > 0 {
		w = time.Second
	}
	emb.ApplyDefaults()
	if emb.Local() {
		return w
	}
	if tpm := emb.TokensPerMinute; tpm > 0 {
		burst := float64(emb.Limits().MaxTokens)
		w = max(w, time.Duration(burst/(float64(tpm)/60)*float64(time.Second)))
	}
	if rpm := emb.RequestsPerMinute; rpm > 0 {
		burst := float64(max(1, rpm/60))
		w = max(w, time.Duration(burst/(float64(rpm)/60)*float64(time.Second)))
	}
	return w.Round(time.Millisecond)
}
