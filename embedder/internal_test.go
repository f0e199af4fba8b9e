package embedder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name   string
		toks   []int
		limits Limits
		want   [][]int
	}{
		{"empty", nil, Limits{MaxInputs: 2}, nil},
		{"by inputs", []int{1, 1, 1, 1, 1}, Limits{MaxInputs: 2}, [][]int{{0, 1}, {2, 3}, {4}}},
		{"by tokens", []int{5, 5, 5, 2}, Limits{MaxInputs: 10, MaxTokens: 10}, [][]int{{0, 1}, {2, 3}}},
		{"exact fit", []int{4, 6, 10}, Limits{MaxInputs: 10, MaxTokens: 10}, [][]int{{0, 1}, {2}}},
		{"no caps", []int{100, 100}, Limits{}, [][]int{{0, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := make([]int, len(tt.toks))
			for i := range idx {
				idx[i] = i
			}
			got := plan(idx, tt.toks, tt.limits)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("plan = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGateAIMD(t *testing.T) {
	g := newGate(8)
	t0 := time.Unix(1000, 0)
	g.throttled(t0, t0.Add(time.Second))
	if got := g.current(); got != 4 {
		t.Fatalf("after one 429: limit %v, want 4", got)
	}
	// A 429 to a request sent before the cut belongs to the same storm.
	g.throttled(t0.Add(500*time.Millisecond), t0.Add(2*time.Second))
	if got := g.current(); got != 4 {
		t.Fatalf("after a 429 of the same storm: limit %v, want 4", got)
	}
	g.throttled(t0.Add(3*time.Second), t0.Add(4*time.Second))
	g.throttled(t0.Add(5*time.Second), t0.Add(6*time.Second))
	g.throttled(t0.Add(7*time.Second), t0.Add(8*time.Second))
	if got := g.current(); got != 1 {
		t.Fatalf("limit %v, want the floor 1", got)
	}
	for range 100 {
		g.succeeded()
	}
	if got := g.current(); got != 8 {
		t.Fatalf("after 100 successes: limit %v, want back to 8", got)
	}
}

func TestGateBlocksAndCancels(t *testing.T) {
	g := newGate(1)
	ctx := context.Background()
	if err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- g.acquire(cctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire on a full gate after cancel = %v, want context.Canceled", err)
	}
	granted := make(chan error, 1)
	go func() { granted <- g.acquire(ctx) }()
	g.release()
	if err := <-granted; err != nil {
		t.Fatalf("waiter not granted after release: %v", err)
	}
	g.release()
	if g.inflight != 0 || len(g.waiters) != 0 {
		t.Fatalf("inflight %d, waiters %d; want 0, 0", g.inflight, len(g.waiters))
	}
}

// TestPacerDelay checks the quota mirror: each step asks, at a time after
// the report, for n units, books them, and must be told to wait want.
func TestPacerDelay(t *testing.T) {
	now := time.Unix(2000, 0)
	type step struct {
		at   time.Duration // since the report
		n    float64
		want time.Duration
	}
	tests := []struct {
		name    string
		kind    string            // "tokens" or "requests"
		headers map[string]string // the x-ratelimit-* headers of the answer; nil: no answer seen
		budget  float64           // embedder.tokensPerMinute or requestsPerMinute; 0: unset
		steps   []step
	}{
		{"limit known: refill at the limit", "tokens",
			map[string]string{"x-ratelimit-limit-tokens": "60000", "x-ratelimit-remaining-tokens": "500"}, 0, []step{
				{0, 400, 0},
				{0, 400, 300 * time.Millisecond}, // 100 left, 300 more at 1000/s
				{time.Second, 100, 0},            // a second later 1000 more, capped at the limit
			}},
		{"requests left", "requests",
			map[string]string{"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "10"}, 0, []step{
				{0, 1, 0},
			}},
		// Azure OpenAI sends x-ratelimit-remaining-* alone: the budget is
		// the refill rate.
		{"remaining only: the budget is the rate", "tokens",
			map[string]string{"x-ratelimit-remaining-tokens": "0"}, 60000, []step{
				{0, 500, 500 * time.Millisecond},
			}},
		// Without limit or budget the rate is unknown, but a reset time
		// says when the quota is full again.
		{"limit unknown, reset known", "tokens",
			map[string]string{"x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "2s"}, 0, []step{
				{0, 100, 0},
				{0, 1, 2 * time.Second}, // spent: wait for the reset
				{1500 * time.Millisecond, 1, 500 * time.Millisecond}, // still before it
				{3 * time.Second, 1e6, 0},                            // after the reset the quota is full: 0, not a negative delay
			}},
		{"limit unknown, reset known, requests", "requests",
			map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "250ms"}, 0, []step{
				{0, 1, 250 * time.Millisecond},
				{time.Second, 1, 0},
			}},
		{"remaining only, no budget: nothing to go by", "tokens",
			map[string]string{"x-ratelimit-remaining-tokens": "0"}, 0, []step{
				{0, 1e6, 0},
			}},
		{"no answer seen", "tokens", nil, 60000, []step{
			{0, 1e6, 0},
		}},
		// A wait too long for a Duration is the longest one, not a
		// wrapped negative value that reads as no wait.
		{"a wait beyond a Duration saturates", "tokens",
			map[string]string{"x-ratelimit-limit-tokens": "0.1", "x-ratelimit-remaining-tokens": "-1e8"}, 0, []step{
				{0, 8191, math.MaxInt64},
			}},
		{"remaining NaN is no report", "tokens",
			map[string]string{"x-ratelimit-remaining-tokens": "NaN"}, 60000, []step{
				{0, 1e6, 0},
			}},
		{"an infinite limit is no rate: the budget is", "tokens",
			map[string]string{"x-ratelimit-limit-tokens": "+Inf", "x-ratelimit-remaining-tokens": "0"}, 60000, []step{
				{0, 1000, time.Second},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pacer{rpm: tt.budget, tpm: tt.budget}
			if tt.headers != nil {
				h := http.Header{}
				for k, v := range tt.headers {
					h.Set(k, v)
				}
				p.observe(h, now)
			}
			q := &p.tokens
			if tt.kind == "requests" {
				q = &p.requests
			}
			for i, s := range tt.steps {
				if d := q.delay(now.Add(s.at), s.n); d != s.want {
					t.Fatalf("step %d (%v units at +%v): delay %v, want %v", i, s.n, s.at, d, s.want)
				}
			}
		})
	}
}

// TestPacerDatesReportAtSend checks the quota mirror with explicit times:
// a report is dated when its request was sent (the server computed what
// remains when it admitted it), so the quota refills during the request's
// latency; and the requests booked after that send time, sent or not yet
// sent, are not in the report and count as spent, while those sent before
// it are in it. The token limit is 60,000 a minute, 1,000 a second; every
// time is from t0.
func TestPacerDatesReportAtSend(t *testing.T) {
	t0 := time.Unix(3000, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type step struct {
		op   string // book (and ask: want the delay), send, drop, report (remaining n, of a request sent at at)
		req  string // the booking's name (book, send, drop)
		at   time.Duration
		n    int
		want time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"the quota refills during the latency", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"report", "", 0, 0, 0},        // answered at +500ms, say
			{"book", "B", ms(500), 400, 0}, // 500 refilled since A was sent
		}},
		{"requests sent after the report's are spent", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"book", "B", ms(100), 300, 0}, {"send", "B", ms(100), 0, 0},
			{"report", "", 0, 0, 0},
			{"book", "C", ms(500), 400, ms(200)}, // 500 refilled, 300 of them B's
		}},
		{"requests sent before the report's are in it", []step{
			{"book", "B", -ms(100), 300, 0}, {"send", "B", -ms(100), 0, 0},
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"report", "", 0, 0, 0},
			{"book", "C", ms(500), 400, 0},
		}},
		{"booked before the report's request, sent after it", []step{
			{"book", "B", -ms(50), 300, 0}, // waits for the token limiter
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"send", "B", ms(100), 0, 0},
			{"report", "", 0, 0, 0},
			{"book", "C", ms(500), 400, ms(200)},
		}},
		{"a booking not yet sent is spent", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"book", "B", ms(100), 300, 0},
			{"report", "", 0, 0, 0},
			{"book", "C", ms(500), 400, ms(200)},
		}},
		{"a dropped booking is not spent", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"book", "B", ms(100), 300, 0},
			{"report", "", 0, 0, 0},
			{"drop", "B", 0, 0, 0}, // its request was never sent
			{"book", "C", ms(500), 400, 0},
		}},
		{"an older report does not replace a newer one", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"book", "B", ms(100), 300, 0}, {"send", "B", ms(100), 0, 0},
			{"report", "", ms(100), 1000, 0}, // B's answer first
			{"report", "", 0, 0, 0},          // then A's, older
			{"book", "C", ms(100), 1000, 0},
		}},
		{"a newer report replaces an older one", []step{
			{"book", "A", 0, 1000, 0}, {"send", "A", 0, 0, 0},
			{"book", "B", ms(100), 300, 0}, {"send", "B", ms(100), 0, 0},
			{"report", "", 0, 1000, 0},
			{"report", "", ms(100), 0, 0},
			{"book", "C", ms(100), 100, ms(100)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p pacer
			booked := map[string]*booking{}
			for i, s := range tt.steps {
				switch s.op {
				case "book":
					d, b := p.reserve(t0.Add(s.at), s.n)
					if d != s.want {
						t.Fatalf("step %d: %s, %d tokens at %+v: delay %v, want %v", i, s.req, s.n, s.at, d, s.want)
					}
					booked[s.req] = b
				case "send":
					p.sent(booked[s.req], t0.Add(s.at))
				case "drop":
					p.drop(booked[s.req])
				case "report":
					h := http.Header{}
					h.Set("x-ratelimit-limit-tokens", "60000")
					h.Set("x-ratelimit-remaining-tokens", fmt.Sprint(s.n))
					p.observe(h, t0.Add(s.at))
				}
			}
		})
	}
}

// TestPacerRecordBounded checks that the pacer's record of bookings stays
// small: bookings sent no later than the latest report are forgotten, and
// without reports the record holds at most maxBookings.
func TestPacerRecordBounded(t *testing.T) {
	t0 := time.Unix(4000, 0)
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "1000000")
	h.Set("x-ratelimit-remaining-requests", "1000000")
	h.Set("x-ratelimit-limit-tokens", "100000000")
	h.Set("x-ratelimit-remaining-tokens", "100000000")
	tests := []struct {
		name    string
		reports bool // report each request's answer before the next is booked
		most    int
	}{
		{"no reports", false, maxBookings},
		{"each answer reported", true, 2}, // the last one sent, and the one being booked
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p pacer
			for i := range 3 * maxBookings {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				_, b := p.reserve(at, 10)
				p.sent(b, at)
				if tt.reports {
					p.observe(h, at)
				}
				if len(p.booked) > tt.most {
					t.Fatalf("after %d requests the pacer keeps %d bookings, want at most %d", i+1, len(p.booked), tt.most)
				}
			}
		})
	}
}

// TestClientDatesReportAtSend checks that the Client dates the
// x-ratelimit-* report of an answer at the moment the request was sent,
// not when the answer arrived: the mirror's date is no later than the
// moment the transport received the request, and equals the request's
// booking. The transport waits for the clock to pass that moment before
// it answers, so an answer dated on arrival would be later.
func TestClientDatesReportAtSend(t *testing.T) {
	var received time.Time
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		received = time.Now()
		for !time.Now().After(received) {
			runtime.Gosched() // until an answer dated now is later than receipt
		}
		body := `{"data":[{"index":0,"embedding":[0.5,0.5]}]}`
		h := http.Header{}
		h.Set("x-ratelimit-limit-tokens", "60000")
		h.Set("x-ratelimit-remaining-tokens", "59000")
		return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
	c, err := NewOpenAI(Config{Provider: ProviderOpenAI, Model: "m", Auth: AuthNone, BaseURL: "http://127.0.0.1:1/v1", Dimensions: 2}, WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []Input{{Text: "hello", Tokens: 1}}); err != nil {
		t.Fatal(err)
	}
	c.pace.mu.Lock()
	defer c.pace.mu.Unlock()
	q := c.pace.tokens
	if !q.known || q.remaining != 59000 {
		t.Fatalf("mirror %+v: the report was not recorded", q)
	}
	if q.at.After(received) {
		t.Errorf("report dated %s after the request reached the transport: dated on arrival, not at send", q.at.Sub(received))
	}
	if len(c.pace.booked) != 1 || !c.pace.booked[0].sent || !c.pace.booked[0].at.Equal(q.at) {
		t.Errorf("bookings %+v: want the request's, sent at the report's date %s", c.pace.booked, q.at)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPacerPause checks the client-wide pause after a 429: wait holds every
// request back until it ends, a shorter pause never shortens a longer one,
// and only the context ends the wait early. A pause that ends after the
// context's deadline fails at once, so those cases are exact without a
// clock; the one case that really waits checks only a lower bound, which a
// timer cannot undercut.
func TestPacerPause(t *testing.T) {
	tests := []struct {
		name     string
		pauses   []time.Duration // applied in order, all from the same instant
		deadline time.Duration   // of wait's context; 0: none
		cancel   bool            // cancel wait's context once wait has started
		wantErr  error           // nil: wait succeeds
		wantWait time.Duration   // wait returns no earlier than this after the pauses
	}{
		{"no pause", nil, time.Minute, false, nil, 0},
		{"wait blocks for the pause", []time.Duration{100 * time.Millisecond}, 0, false, nil, 100 * time.Millisecond},
		{"pause beyond the deadline fails at once", []time.Duration{time.Hour}, time.Minute, false, context.DeadlineExceeded, 0},
		{"a shorter pause keeps the longer", []time.Duration{time.Hour, time.Millisecond}, time.Minute, false, context.DeadlineExceeded, 0},
		{"a longer pause extends", []time.Duration{time.Millisecond, time.Hour}, time.Minute, false, context.DeadlineExceeded, 0},
		{"a zero pause changes nothing", []time.Duration{0}, time.Minute, false, nil, 0},
		{"cancel ends the wait", []time.Duration{time.Hour}, 0, true, context.Canceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tt.deadline > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tt.deadline)
			}
			defer cancel()
			var p pacer
			start := time.Now()
			for _, d := range tt.pauses {
				p.pause(start, d)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := p.wait(ctx, 1)
				errc <- err
			}()
			if tt.cancel {
				cancel()
			}
			select {
			case err := <-errc:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("wait() = %v, want %v", err, tt.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("wait() did not return within 10s")
			}
			if got := time.Since(start); got < tt.wantWait {
				t.Fatalf("wait() returned after %v, want at least %v", got, tt.wantWait)
			}
			if !tt.cancel && ctx.Err() != nil {
				t.Fatalf("wait() returned only when the context ended (%v), not at once", ctx.Err())
			}
		})
	}
}

func TestHintBackOff(t *testing.T) {
	h := &hintBackOff{BackOff: &backoff.ConstantBackOff{Interval: time.Second}}
	if d := h.NextBackOff(); d != time.Second {
		t.Fatalf("no hint: %v, want 1s", d)
	}
	h.hint = 7 * time.Second
	if d := h.NextBackOff(); d != 7*time.Second {
		t.Fatalf("with hint: %v, want 7s", d)
	}
	if d := h.NextBackOff(); d != time.Second {
		t.Fatalf("hint used once: %v, want 1s", d)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&APIError{Status: 429}, true},
		{&APIError{Status: 429, Type: "requests", Code: "rate_limit_exceeded"}, true},
		{&APIError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota"}, false},
		{&APIError{Status: 429, Type: "insufficient_quota", Code: "project_spend_limit_exceeded"}, false},
		{&APIError{Status: 429, Code: "credit_balance_exhausted"}, false},
		{&APIError{Status: 429, Code: "insufficient_quota"}, false},
		// Larger than the quota ever admits: OpenAI's and embedtest's words.
		{&APIError{Status: 429, Type: "tokens", Code: "rate_limit_exceeded", Message: "Request too large for text-embedding-3-small in organization org-x on tokens per min (TPM): Limit 150000, Requested 300000."}, false},
		{&APIError{Status: 429, Code: "rate_limit_exceeded", Message: "Request too large: 16667 tokens is more than the token quota admits at once (16666). Send smaller requests."}, false},
		{&APIError{Status: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached: requests per minute 0, tokens per minute 1000000. Please try again later."}, true},
		{&APIError{Status: 408}, true},
		{&APIError{Status: 500}, true},
		{&APIError{Status: 502}, true},
		{&APIError{Status: 503}, true},
		{&APIError{Status: 504}, true},
		{&APIError{Status: 400}, false},
		{&APIError{Status: 401}, false},
		{&APIError{Status: 403}, false},
		{&APIError{Status: 404}, false},
		{&APIError{Status: 501}, false},
		{&TransportError{Err: syscall.ECONNRESET}, true},
		{&TransportError{Err: io.ErrUnexpectedEOF}, true},
		{&TransportError{Err: &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}}, true},
		{&TransportError{Err: fmt.Errorf("no answer: %w", context.DeadlineExceeded)}, true},
		{&TransportError{Err: syscall.ECONNREFUSED}, false},
		{&ResponseError{Reason: "x"}, true},
		{&DimensionError{Want: 3, Got: 4}, false},
		{context.Canceled, false},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.want {
			t.Errorf("retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact("Incorrect API key provided: sk-abc***xyz. Also secret123 here.", "secret123")
	if got != "Incorrect API key provided: [redacted] Also [redacted] here." {
		t.Fatalf("redact = %q", got)
	}
}

// TestSecretHidden checks the secret type on its own: whichever way it is
// printed, directly or inside a struct, the key does not appear.
func TestSecretHidden(t *testing.T) {
	const key = "sk-test-0123456789"
	s := newSecret(key)
	holder := struct {
		Key   secret
		inner secret
	}{s, s}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outputs = append(outputs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, holder))
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "key", s)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "key", s)
	outputs = append(outputs, buf.String())
	for _, out := range outputs {
		if strings.Contains(out, key) {
			t.Errorf("the key appears in %s", out)
		}
	}
	if s.value() != key || secret(nil).value() != "" {
		t.Fatal("value() does not return the key")
	}
}

// TestAPIErrorJoinsItsHint: the provider's message and the hint read as one
// sentence, without ".;" between them.
func TestAPIErrorJoinsItsHint(t *testing.T) {
	got := (&APIError{Provider: "openai", Status: 401, Message: "Incorrect API key provided.", Hint: "check OPENAI_API_KEY"}).Error()
	if want := "embedder: openai returned HTTP 401: Incorrect API key provided; check OPENAI_API_KEY"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (&APIError{Provider: "openai", Status: 400, Message: "Bad input."}).Error(); !strings.HasSuffix(got, ": Bad input.") {
		t.Errorf("without a hint: %q", got)
	}
}
