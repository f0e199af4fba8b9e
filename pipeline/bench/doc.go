// Package bench finds the embedding batch size and concurrency that give
// the most throughput for a quota, by running the real Sluice pipeline over
// a corpus once per configuration and measuring it.
//
// A trial feeds the corpus to pipeline.Run again and again, discards a
// warm-up period (against a quota at least its burst window, see
// Options.WarmupFor, so that the burst allowance the quota starts with is
// spent), then measures a window of steady state: chunks and tokens per
// second, the share of the tokens-per-minute quota used, HTTP 429 answers,
// retries, request latency percentiles and the peak resident memory. A
// corpus from which a whole pass embeds no token fails the trial
// (ErrNothingEmbedded).
// Run runs the trials in turn through a Measurer: Harness measures in this
// process, Exec in a child process per trial so that each peak RSS is the
// trial's own. Pick chooses the winner (see its rules); WriteTable,
// WriteJSON, WriteCSV and WriteChart render the results, marked partial
// with Interrupted when the benchmark stopped early. Simulator serves a
// simulated provider (an OpenAI-compatible server with latency of a base
// plus a cost per token and an RPM/TPM quota) for benchmarks that need no
// real endpoint.
package bench
