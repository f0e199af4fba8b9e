package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	tests := []struct {
		name    string
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.95, 7 * time.Millisecond},
		{"median odd unsorted", ms(30, 10, 20), 0.5, 20 * time.Millisecond},
		{"median even takes lower", ms(40, 10, 30, 20), 0.5, 20 * time.Millisecond},
		{"p95 of 20", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100), 0.95, 19 * time.Millisecond},
		{"p95 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 0.95, 100 * time.Millisecond},
		{"p100", ms(3, 1, 2), 1, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.samples, tt.q); got != tt.want {
				t.Errorf("percentile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestHuman(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {950.4, "950"}, {9499, "9.5k"}, {41234, "41k"}, {1.25e6, "1.2M"},
	}
	for _, tt := range tests {
		if got := human(tt.v); got != tt.want {
			t.Errorf("human(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestTimedKeepsLocal checks that wrapping an embedder to time it keeps
// whether it is local: the pipeline caps a local embedder's concurrency at
// the core count, and a benchmark must run it as a real run does.
func TestTimedKeepsLocal(t *testing.T) {
	record := func([]time.Duration, []embedder.Input) {}
	for _, tt := range []struct {
		e    embedder.Embedder
		want bool
	}{
		{embedder.NewHash(8), true},
		{embedder.NewInstant(8), true},
		{remoteEmbedder{}, false},
	} {
		l, ok := embedder.Embedder(timed{tt.e, false, record}).(interface{ Local() bool })
		if !ok || l.Local() != tt.want {
			t.Errorf("timed(%T).Local() = %v (implemented %v), want %v", tt.e, ok && l.Local(), ok, tt.want)
		}
	}
}

// remoteEmbedder is an embedder that does not say it is local.
type remoteEmbedder struct{ embedder.Embedder }

// TestResultChunksPerRequest checks the mean batch of a window: the inputs
// of the requests completed in it over their number, both taken from the
// same counters at each end, never the chunks written (counted later, when
// the store has them) over the latencies recorded. The window of a slow
// store starts with a backlog of embedded chunks that it writes during the
// window: chunks written over requests read 70 for a batch of 64.
func TestResultChunksPerRequest(t *testing.T) {
	t0 := time.Unix(5000, 0)
	lat := func(n int) []time.Duration { return make([]time.Duration, n) }
	tests := []struct {
		name       string
		start, end mark
		lat        []time.Duration
		want       float64
	}{
		{"full batches", mark{at: t0, requests: 10, inputs: 640}, mark{at: t0.Add(time.Second), requests: 110, inputs: 7040}, lat(100), 64},
		{"a backlog written in the window", mark{at: t0, requests: 10, inputs: 640}, mark{at: t0.Add(time.Second), requests: 110, inputs: 7040}, lat(100), 64},
		{"batches cut by the caps", mark{at: t0, requests: 4, inputs: 100}, mark{at: t0.Add(time.Second), requests: 14, inputs: 400}, lat(10), 30},
		{"no request completed", mark{at: t0, requests: 4, inputs: 100}, mark{at: t0.Add(time.Second), requests: 4, inputs: 100}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Harness
			if got := h.result(tt.start, tt.end, tt.lat).ChunksPerRequest; got != tt.want {
				t.Errorf("ChunksPerRequest = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTimedCountsCallsAndInputs checks that the recorder counts each
// successful Embed call of a timed embedder with its inputs and tokens,
// whether or not the window is open, leaves failed calls out, and opens
// the window at a call's completion: the call that opens it is not in it,
// the calls after it are.
func TestTimedCountsCallsAndInputs(t *testing.T) {
	rec := new(recorder)
	e, _, err := newEmbedder(t.Context(), embedder.Config{Provider: embedder.ProviderHash, Dimensions: 8}, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	inputs := func(n int) []embedder.Input {
		in := make([]embedder.Input, n)
		for i := range in {
			in[i] = embedder.Input{Text: "text", Tokens: 2}
		}
		return in
	}
	embed := func(n int) {
		t.Helper()
		if _, err := e.Embed(t.Context(), inputs(n)); err != nil {
			t.Fatal(err)
		}
	}
	embed(3)
	rec.openAt(time.Now().Add(time.Hour)) // not yet: no call opens it
	if _, _, open := rec.window(); open {
		t.Fatal("the window opened before the time it was to open at")
	}
	rec.openAfter = time.Time{}
	rec.openAt(rec.firstCall()) // the latest call returned then: it opens the window
	embed(5)
	if _, err := (timed{failing{}, false, func([]time.Duration, []embedder.Input) { t.Error("a failed call was recorded") }}).Embed(t.Context(), inputs(7)); err == nil {
		t.Fatal("the failing embedder succeeded")
	}
	start, last, open := rec.window()
	if !open {
		t.Fatal("the window did not open")
	}
	if start.calls != 1 || start.inputs != 3 || start.tokens != 6 {
		t.Errorf("window opened at %+v, want the first call's mark: 1 call, 3 inputs, 6 tokens", start)
	}
	if last.calls != 2 || last.inputs != 8 || last.tokens != 16 || last.requests != 2 {
		t.Errorf("latest mark %+v, want 2 calls and requests, 8 inputs, 16 tokens", last)
	}
	if n := len(rec.latencies(start, last)); n != 1 {
		t.Errorf("%d latencies recorded, want 1 (the call completed in the window)", n)
	}
}

// TestClientLatenciesComeWithTheirCall checks that the request latencies
// of an HTTP provider reach the recorder with the call that made them, one
// per request of the call: a call of 5 inputs, 2 per request, sent 3.
func TestClientLatenciesComeWithTheirCall(t *testing.T) {
	const key = "sk-bench-latency-test"
	t.Setenv("SLUICE_BENCH_TEST_KEY", key)
	_, url := embedtest.Start(t, embedtest.Options{Key: key, Dimensions: 8})
	cfg := embedder.DefaultConfig()
	cfg.Provider, cfg.BaseURL, cfg.Model, cfg.Dimensions, cfg.APIKeyEnv = "openai", url+"/v1", "test-model", 8, "SLUICE_BENCH_TEST_KEY"
	cfg.BatchSize, cfg.MaxInputsPerRequest = 2, 2
	rec := new(recorder)
	e, _, err := newEmbedder(t.Context(), cfg, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := []embedder.Input{{Text: "a"}, {Text: "b"}, {Text: "c"}, {Text: "d"}, {Text: "e"}}
	if _, err := e.Embed(t.Context(), in[:1]); err != nil {
		t.Fatal(err)
	}
	rec.openAt(rec.firstCall()) // at the first call
	if _, err := e.Embed(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	start, last, _ := rec.window()
	lat := rec.latencies(start, last)
	if last.calls-start.calls != 1 || len(lat) != 3 {
		t.Fatalf("%d latencies for %d calls in the window, want the 3 requests of its 1 call", len(lat), last.calls-start.calls)
	}
	for _, d := range lat {
		if d <= 0 {
			t.Errorf("latency %s, want above 0", d)
		}
	}
}

// failing is an embedder whose every call fails.
type failing struct{ embedder.Embedder }

func (failing) Embed(context.Context, []embedder.Input) ([][]float32, error) {
	return nil, errors.New("refused")
}

// TestResultCountsTheWholeTrialsThrottling: the 429s and retries of a
// result are the trial's from its start, warm-up included. With a budget
// above the provider's quota the client is throttled as it starts, then
// slows down, and a window after the warm-up alone may see none: "0
// throttled" for a budget that is wrong (the audit: 2 429s in the warm-up
// of a budget five times the quota, none reported).
func TestResultCountsTheWholeTrialsThrottling(t *testing.T) {
	t0 := time.Unix(5000, 0)
	start := mark{at: t0, throttled: 2, retries: 2, requests: 4, inputs: 32}
	end := mark{at: t0.Add(time.Second), throttled: 2, retries: 3, requests: 14, inputs: 112}
	var h Harness
	if r := h.result(start, end, make([]time.Duration, 10)); r.HTTP429 != 2 || r.Retries != 3 {
		t.Errorf("HTTP429 = %d, Retries = %d; want the trial's 2 and 3, not the window's 0 and 1", r.HTTP429, r.Retries)
	}
}

// TestWindowCountsItsCalls plays a window of concurrent requests whose
// goroutines interleave as a loaded machine may: one request's latency is
// observed before another call opens the window, and its own call returns
// inside it. The window closes at the call that brings it to the calls it
// must hold, and its Requests are those calls, never fewer: the latencies
// observed while it was open, which left that request out, read 2 of
// --min-requests 3.
func TestWindowCountsItsCalls(t *testing.T) {
	r := new(recorder)
	r.closeWhen(0, 3)
	r.openAt(time.Now())
	const d = 300 * time.Millisecond
	var calls [4]callLatencies
	calls[0].observe(d)               // the request of the call that opens the window
	calls[1].observe(d)               // another request of its cluster, seen before the window opens
	r.embedded(calls[0].all(), 4, 40) // the call that opens the window
	r.embedded(calls[1].all(), 4, 40) // the other call of the cluster: in the window
	for i := range calls[2:] {        // two calls of the next cluster
		calls[2+i].observe(d)
		r.embedded(calls[2+i].all(), 4, 40)
	}
	start, _, open := r.window()
	end, closed := r.closing()
	if !open || !closed {
		t.Fatalf("window open %v, closed %v; want it opened and closed", open, closed)
	}
	res := (&Harness{}).result(start, end, r.latencies(start, end))
	if res.Requests != 3 {
		t.Errorf("Requests = %d, want the 3 calls the window holds", res.Requests)
	}
}

// TestWindowLatenciesAreItsCalls plays a window of two workers whose
// requests complete a call apart from their calls' returns, as with
// TestWindowCountsItsCalls: B's request completes before A's call opens
// the window and B's call returns inside it; D's request completes inside
// the window and D's call returns after C's closed it. The window holds B
// and C, and its percentiles are theirs, one latency per request: the
// latencies observed while it was open are C's and D's (p95 900 ms instead
// of 400). Each call's request takes a latency of its own, so that the p95
// tells which calls it was taken over: A's, of the call that opened the
// window, is the longest and must be left out too (p95 1000 ms).
func TestWindowLatenciesAreItsCalls(t *testing.T) {
	r := new(recorder)
	r.closeWhen(0, 2)
	r.openAt(time.Now())
	const ms = time.Millisecond
	var a, b, c, d callLatencies
	a.observe(1000 * ms)
	b.observe(400 * ms)
	r.embedded(a.all(), 4, 40) // opens the window
	r.embedded(b.all(), 4, 40)
	c.observe(300 * ms)
	d.observe(900 * ms)
	r.embedded(c.all(), 4, 40) // closes it
	r.embedded(d.all(), 4, 40)
	start, _, open := r.window()
	end, closed := r.closing()
	if !open || !closed {
		t.Fatalf("window open %v, closed %v; want it opened and closed", open, closed)
	}
	lat := r.latencies(start, end)
	res := (&Harness{}).result(start, end, lat)
	if res.Requests != 2 || len(lat) != 2 || res.P50Ms != 300 || res.P95Ms != 400 {
		t.Errorf("Requests %d, %d latencies, p50 %v ms, p95 %v ms; want B's and C's: 2, 2, 300, 400", res.Requests, len(lat), res.P50Ms, res.P95Ms)
	}
}
