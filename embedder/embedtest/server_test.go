package embedtest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const key = "k-123"

type call struct {
	path    string
	headers map[string]string
	body    string
}

func do(t *testing.T, url string, c call) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var bearer = map[string]string{"Authorization": "Bearer " + key}

func TestRoutesAndRejections(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{
		Key: key, Model: "m", Deployment: "dep", Dimensions: 4,
		MaxInputs: 3, MaxTokens: 10, MaxInputTokens: 6,
	})
	const azure = "/openai/deployments/dep/embeddings?api-version=2024-10-21"
	tests := []struct {
		name   string
		call   call
		status int
		stat   func(embedtest.Stats) int64
	}{
		{"openai ok", call{"/v1/embeddings", bearer, `{"model":"m","input":["hello world"]}`}, 200, func(s embedtest.Stats) int64 { return s.OK }},
		{"string input", call{"/v1/embeddings", bearer, `{"model":"m","input":"hello"}`}, 200, func(s embedtest.Stats) int64 { return s.OK }},
		{"azure api-key", call{azure, map[string]string{"api-key": key}, `{"input":["hi"]}`}, 200, func(s embedtest.Stats) int64 { return s.OK }},
		{"azure bearer", call{azure, bearer, `{"input":["hi"]}`}, 200, func(s embedtest.Stats) int64 { return s.OK }},
		{"no key", call{"/v1/embeddings", nil, `{"model":"m","input":["x"]}`}, 401, func(s embedtest.Stats) int64 { return s.Unauthorized }},
		{"azure wrong key", call{azure, map[string]string{"api-key": "nope"}, `{"input":["x"]}`}, 401, func(s embedtest.Stats) int64 { return s.Unauthorized }},
		{"unknown model", call{"/v1/embeddings", bearer, `{"model":"x","input":["x"]}`}, 404, func(s embedtest.Stats) int64 { return s.NotFound }},
		{"unknown deployment", call{"/openai/deployments/zz/embeddings?api-version=1", bearer, `{"input":["x"]}`}, 404, func(s embedtest.Stats) int64 { return s.NotFound }},
		{"no api-version", call{"/openai/deployments/dep/embeddings", bearer, `{"input":["x"]}`}, 400, func(s embedtest.Stats) int64 { return s.BadRequests }},
		{"no model", call{"/v1/embeddings", bearer, `{"input":["x"]}`}, 400, func(s embedtest.Stats) int64 { return s.BadRequests }},
		{"empty string", call{"/v1/embeddings", bearer, `{"model":"m","input":["a",""]}`}, 400, func(s embedtest.Stats) int64 { return s.BadRequests }},
		{"bad json", call{"/v1/embeddings", bearer, `{"model":`}, 400, func(s embedtest.Stats) int64 { return s.BadRequests }},
		{"too many inputs", call{"/v1/embeddings", bearer, `{"model":"m","input":["a","b","c","d"]}`}, 400, func(s embedtest.Stats) int64 { return s.TooLarge }},
		{"input too long", call{"/v1/embeddings", bearer, `{"model":"m","input":["one two three four five six seven"]}`}, 400, func(s embedtest.Stats) int64 { return s.TooLarge }},
		{"request too long", call{"/v1/embeddings", bearer, `{"model":"m","input":["a b c d e","f g h i j","k"]}`}, 400, func(s embedtest.Stats) int64 { return s.TooLarge }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.stat(srv.Stats())
			resp, body := do(t, url, tt.call)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if got := tt.stat(srv.Stats()); got != before+1 {
				t.Fatalf("counter went from %d to %d, want +1", before, got)
			}
			if tt.status != 200 {
				var e struct {
					Error struct{ Message string } `json:"error"`
				}
				if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
					t.Fatalf("error body %s lacks error.message", body)
				}
			}
		})
	}
}

func TestResponseGolden(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{Dimensions: 4})
	_, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":["hello world","naïve café"]}`})
	testenv.Golden(t, filepath.Join("testdata", "response.golden"), body)
	if st := srv.Stats(); st.TokensServed != 6 || st.InputsServed != 2 {
		t.Fatalf("stats %+v, want 6 cl100k tokens and 2 inputs served", st)
	}
}

func TestBase64AndDimensions(t *testing.T) {
	_, url := embedtest.Start(t, embedtest.Options{})
	_, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":["hello"],"encoding_format":"base64","dimensions":8}`})
	var resp struct {
		Data []struct{ Embedding string } `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Data) != 1 {
		t.Fatalf("bad response %s: %v", body, err)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Data[0].Embedding)
	if err != nil || len(raw) != 8*4 {
		t.Fatalf("embedding is %d bytes (%v), want 8 float32s", len(raw), err)
	}
	want := embedder.NewHash(8).Vector("hello")
	for i := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != want[i] {
			t.Fatalf("float %d = %v, want %v", i, got, want[i])
		}
	}
}

func TestQuota429(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{RPM: 60, TPM: 100000})
	c := call{"/v1/embeddings", nil, `{"model":"m","input":["hello"]}`}
	resp, _ := do(t, url, c)
	if resp.StatusCode != 200 || resp.Header.Get("x-ratelimit-remaining-requests") != "0" || resp.Header.Get("x-ratelimit-limit-tokens") != "100000" {
		t.Fatalf("first answer %d with headers %v", resp.StatusCode, resp.Header)
	}
	resp, _ = do(t, url, c)
	if resp.StatusCode != 429 {
		t.Fatalf("second request within the second: status %d, want 429", resp.StatusCode)
	}
	for _, h := range []string{"retry-after-ms", "Retry-After", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "x-ratelimit-remaining-tokens"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("429 lacks header %s", h)
		}
	}
	if ms, err := strconv.Atoi(resp.Header.Get("retry-after-ms")); err != nil || ms < 900 || ms > 1000 {
		t.Errorf("retry-after-ms %d (%v), want about 1000", ms, err)
	}
	if st := srv.Stats(); st.Throttled != 1 || st.OK != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReorderFault(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultReorder}, Dimensions: 4})
	inputs := `["a","b","c","d","e","f","g","h"]`
	_, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":` + inputs + `}`})
	var resp struct {
		Data []struct{ Index int } `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	seen, inOrder := map[int]bool{}, true
	for k, d := range resp.Data {
		seen[d.Index] = true
		inOrder = inOrder && d.Index == k
	}
	if len(seen) != 8 || inOrder {
		t.Fatalf("indexes %v: want all 8, shuffled", resp.Data)
	}
	if srv.Stats().Faults != 1 {
		t.Fatal("reorder not counted as a fault")
	}
}

// A stall lasts until the client gives up: here the client cancels its
// request as soon as OnStall reports the stall under way.
func TestStallEndsWithClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stalls atomic.Int64
	srv, url := embedtest.Start(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultStall},
		OnStall: func() { stalls.Add(1); cancel() }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/embeddings", strings.NewReader(`{"model":"m","input":["x"]}`))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stalled request returned %v, want context.Canceled: no answer before the client gave up", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no stall reported within 10s, or the stall outlived the client's cancel")
	}
	if st := srv.Stats(); st.Faults != 1 || st.OK != 0 || stalls.Load() != 1 {
		t.Fatalf("stats %+v, %d stalls reported; want one stall and no answer", st, stalls.Load())
	}
}

// EchoKey quotes the refused key in 401 answers on both routes: not at
// all, masked as OpenAI did, or in full.
func TestKeyEcho(t *testing.T) {
	const sent = "sk-abcdefghijklmnopxyz"
	const azure = "/openai/deployments/dep/embeddings?api-version=2024-10-21"
	tests := []struct {
		name    string
		echo    embedtest.KeyEcho
		call    call
		want    string // in the message
		notWant string // absent from the message
	}{
		{"openai none", embedtest.EchoNone, call{"/v1/embeddings", map[string]string{"Authorization": "Bearer " + sent}, `{"model":"m","input":["x"]}`}, "Incorrect API key provided", "sk-abc"},
		{"openai masked", embedtest.EchoMasked, call{"/v1/embeddings", map[string]string{"Authorization": "Bearer " + sent}, `{"model":"m","input":["x"]}`}, "Incorrect API key provided: sk-abc***...xyz.", sent},
		{"openai full", embedtest.EchoFull, call{"/v1/embeddings", map[string]string{"Authorization": "Bearer " + sent}, `{"model":"m","input":["x"]}`}, "Incorrect API key provided: " + sent + ".", "***"},
		{"openai short key masked", embedtest.EchoMasked, call{"/v1/embeddings", map[string]string{"Authorization": "Bearer sk-short"}, `{"model":"m","input":["x"]}`}, "provided: ***.", "sk-short"},
		{"openai no key", embedtest.EchoFull, call{"/v1/embeddings", nil, `{"model":"m","input":["x"]}`}, "Incorrect API key provided.", "provided:"},
		{"azure none", embedtest.EchoNone, call{azure, map[string]string{"api-key": sent}, `{"input":["x"]}`}, "invalid subscription key or", "sk-abc"},
		{"azure masked", embedtest.EchoMasked, call{azure, map[string]string{"api-key": sent}, `{"input":["x"]}`}, "invalid subscription key sk-abc***...xyz or", sent},
		{"azure full", embedtest.EchoFull, call{azure, map[string]string{"api-key": sent}, `{"input":["x"]}`}, "invalid subscription key " + sent + " or", "***"},
		{"azure full bearer", embedtest.EchoFull, call{azure, map[string]string{"Authorization": "Bearer " + sent}, `{"input":["x"]}`}, "invalid subscription key " + sent + " or", "Bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{Key: key, Deployment: "dep", EchoKey: tt.echo})
			resp, body := do(t, url, tt.call)
			if resp.StatusCode != http.StatusUnauthorized || srv.Stats().Unauthorized != 1 {
				t.Fatalf("status %d, stats %+v: want one 401", resp.StatusCode, srv.Stats())
			}
			msg := decodeError(t, body).Error.Message
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, tt.notWant) {
				t.Fatalf("message %q: want it to contain %q and not %q", msg, tt.want, tt.notWant)
			}
			if strings.Contains(msg, key) {
				t.Fatalf("message %q shows the server's own key", msg)
			}
		})
	}
}

func TestLatencyRespectsClose(t *testing.T) {
	srv := embedtest.NewHandler(embedtest.Options{Latency: time.Hour})
	srv.Close()
	srv.Close() // twice is harmless
	req, _ := http.NewRequest(http.MethodPost, "/v1/embeddings", strings.NewReader(`{"model":"m","input":["x"]}`))
	rec := &recorder{header: http.Header{}}
	done := make(chan struct{})
	go func() { defer close(done); srv.ServeHTTP(rec, req) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP waited out its latency after Close")
	}
	if rec.status == 200 {
		t.Fatal("a closed server answered 200 without waiting its latency")
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// errorBody is an OpenAI error answer; Param and Code are null when absent.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decodeError(t *testing.T, body []byte) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("error body %s: %v", body, err)
	}
	return e
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// TestDimensionsByModel checks the dimensions parameter as OpenAI does:
// "Only supported in text-embedding-3 and later models", and never above the
// model's own size. Unknown models take any value up to 65536; on the Azure
// route the model is Options.Model, the one behind the deployment.
func TestDimensionsByModel(t *testing.T) {
	const azurePath = "/openai/deployments/dep/embeddings?api-version=2024-10-21"
	tests := []struct {
		name     string
		model    string // Options.Model
		path     string
		body     string
		status   int
		wantDims int    // length of the vector when 200
		wantCode string // error.code when 400 ("null" when absent)
	}{
		{"3-small shortened", "", "/v1/embeddings", `{"model":"text-embedding-3-small","input":["x"],"dimensions":256}`, 200, 256, ""},
		{"3-small native", "", "/v1/embeddings", `{"model":"text-embedding-3-small","input":["x"],"dimensions":1536}`, 200, 1536, ""},
		{"3-large native", "", "/v1/embeddings", `{"model":"text-embedding-3-large","input":["x"],"dimensions":3072}`, 200, 3072, ""},
		{"ada-002 without dimensions", "", "/v1/embeddings", `{"model":"text-embedding-ada-002","input":["x"]}`, 200, 8, ""},
		{"unknown model", "", "/v1/embeddings", `{"model":"m","input":["x"],"dimensions":4096}`, 200, 4096, ""},
		{"ada-002 with dimensions", "", "/v1/embeddings", `{"model":"text-embedding-ada-002","input":["x"],"dimensions":1536}`, 400, 0, "null"},
		{"served ada-002 with dimensions", "text-embedding-ada-002", "/v1/embeddings", `{"model":"text-embedding-ada-002","input":["x"],"dimensions":512}`, 400, 0, "null"},
		{"3-small above its size", "", "/v1/embeddings", `{"model":"text-embedding-3-small","input":["x"],"dimensions":1537}`, 400, 0, "integer_above_max_value"},
		{"3-large above its size", "", "/v1/embeddings", `{"model":"text-embedding-3-large","input":["x"],"dimensions":3073}`, 400, 0, "integer_above_max_value"},
		{"zero", "", "/v1/embeddings", `{"model":"m","input":["x"],"dimensions":0}`, 400, 0, "invalid_value"},
		{"above 65536", "", "/v1/embeddings", `{"model":"m","input":["x"],"dimensions":65537}`, 400, 0, "invalid_value"},
		{"azure ada-002 deployment", "text-embedding-ada-002", azurePath, `{"input":["x"],"dimensions":1536}`, 400, 0, "null"},
		{"azure 3-small deployment above its size", "text-embedding-3-small", azurePath, `{"input":["x"],"dimensions":3072}`, 400, 0, "integer_above_max_value"},
		{"azure 3-small deployment shortened", "text-embedding-3-small", azurePath, `{"input":["x"],"dimensions":64}`, 200, 64, ""},
		{"azure model unknown", "", azurePath, `{"input":["x"],"dimensions":3072}`, 200, 3072, ""},
		{"azure ignores the body's model", "text-embedding-3-large", azurePath, `{"model":"text-embedding-ada-002","input":["x"],"dimensions":3072}`, 200, 3072, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{Model: tt.model, Dimensions: 8})
			resp, body := do(t, url, call{tt.path, nil, tt.body})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				var ok struct {
					Data []struct{ Embedding []float32 } `json:"data"`
				}
				if err := json.Unmarshal(body, &ok); err != nil || len(ok.Data) != 1 || len(ok.Data[0].Embedding) != tt.wantDims {
					t.Fatalf("answer %.200s: want one %d-dimensional vector (%v)", body, tt.wantDims, err)
				}
				return
			}
			e := decodeError(t, body)
			if e.Error.Type != "invalid_request_error" || deref(e.Error.Param) != "dimensions" || deref(e.Error.Code) != tt.wantCode {
				t.Fatalf("error %s: want type invalid_request_error, param dimensions, code %s", body, tt.wantCode)
			}
			if st := srv.Stats(); st.BadRequests != 1 || st.OK != 0 {
				t.Fatalf("stats %+v, want one bad request", st)
			}
		})
	}
}

// TestQuotaFault checks the injected insufficient_quota answer: a 429 with
// OpenAI's error type and code, counted as a fault and not as throttling.
func TestQuotaFault(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultQuota}})
	resp, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":["x"]}`})
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", resp.StatusCode, body)
	}
	e := decodeError(t, body)
	if e.Error.Type != "insufficient_quota" || deref(e.Error.Code) != "insufficient_quota" || e.Error.Param != nil ||
		!strings.Contains(e.Error.Message, "exceeded your current quota") {
		t.Fatalf("error %s, want OpenAI's insufficient_quota answer", body)
	}
	if st := srv.Stats(); st.Faults != 1 || st.Throttled != 0 || st.OK != 0 {
		t.Fatalf("stats %+v, want one fault and no 429 counted as throttling", st)
	}
	for _, f := range embedtest.AllFaults {
		if f == embedtest.FaultQuota {
			t.Fatal("AllFaults holds FaultQuota: the default mix must be faults that pass")
		}
	}
}

// repeatTokens returns a text of exactly n cl100k_base tokens.
func repeatTokens(t *testing.T, n int) string {
	t.Helper()
	text := "hello" + strings.Repeat(" hello", n-1)
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := codec.Count(text); got != n {
		t.Fatalf("text has %d tokens, want %d", got, n)
	}
	return text
}

// TestDefaultInputCap checks the default per-input cap: OpenAI's API
// reference allows 8192 tokens per input for all embedding models.
func TestDefaultInputCap(t *testing.T) {
	tests := []struct {
		tokens int
		status int
	}{
		{8192, 200},
		{8193, 400},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.tokens), func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{Dimensions: 4})
			in, err := json.Marshal(repeatTokens(t, tt.tokens))
			if err != nil {
				t.Fatal(err)
			}
			resp, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":[` + string(in) + `]}`})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 400 && (srv.Stats().TooLarge != 1 || !strings.Contains(string(body), "8192")) {
				t.Fatalf("stats %+v, body %.300s: want a cap rejection naming 8192", srv.Stats(), body)
			}
		})
	}
}

// TestKeyNeverPrinted checks that printing or logging the options or the
// server never shows the key.
func TestKeyNeverPrinted(t *testing.T) {
	const secret = "k-very-secret-123"
	// OnStall set: a func field must not break slog's JSON handler.
	opts := embedtest.Options{Key: secret, RPM: 60, OnStall: func() {}}
	srv := embedtest.NewHandler(opts)
	defer srv.Close()
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("serving", "opts", opts, "server", srv)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("serving", "opts", opts, "server", srv)
	outputs := map[string]string{"slog text": text.String(), "slog JSON": js.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%q", "%x"} {
		outputs[verb+" options"] = fmt.Sprintf(verb, opts)
		outputs[verb+" *options"] = fmt.Sprintf(verb, &opts)
		outputs[verb+" server"] = fmt.Sprintf(verb, srv)
		outputs[verb+" in a slice"] = fmt.Sprintf(verb, []any{opts, srv})
	}
	for name, out := range outputs {
		if strings.Contains(out, secret) {
			t.Errorf("%s shows the key: %s", name, out)
		}
	}
	if got := fmt.Sprintf("%+v", opts); !strings.Contains(got, "RPM:60") || !strings.Contains(got, "Key:[redacted]") {
		t.Errorf("%%+v = %s, want the other fields as usual and the key redacted", got)
	}
	if !strings.Contains(text.String(), "RPM:60") || !strings.Contains(js.String(), `"RPM":60`) {
		t.Errorf("logs lack the options:\n%s%s", text.String(), js.String())
	}
}

// TestTokenBucketHoldsARequestsShare checks what the token bucket holds:
// a second's worth of TPM (at least one input's cap), and with an RPM
// quota at least TPM/RPM, one request's share: a quota of R requests and T
// tokens a minute admits a request of T/R tokens. A request of one token
// more is answered 429 "Request too large", however long it waits. Each
// request goes to a new server, whose buckets start full.
func TestTokenBucketHoldsARequestsShare(t *testing.T) {
	tests := []struct {
		name     string
		rpm, tpm int
		tokens   int
		status   int
	}{
		{"a second's worth", 0, 600_000, 10_000, 200},
		{"above a second's worth", 0, 600_000, 10_001, 429},
		{"a second's worth, rounded down", 0, 1_000_000, 16_666, 200},
		{"above it", 0, 1_000_000, 16_667, 429},
		{"one input's cap", 0, 60_000, 8192, 200},
		{"a request's share", 30, 600_000, 20_000, 200},
		{"above a request's share", 30, 600_000, 20_001, 429},
		{"a second's worth above a request's share", 600, 600_000, 10_000, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := embedtest.Start(t, embedtest.Options{RPM: tt.rpm, TPM: tt.tpm, Dimensions: 4})
			var inputs []string
			for left := tt.tokens; left > 0; left -= 8000 {
				inputs = append(inputs, repeatTokens(t, min(left, 8000)))
			}
			in, err := json.Marshal(inputs)
			if err != nil {
				t.Fatal(err)
			}
			resp, body := do(t, url, call{"/v1/embeddings", nil, `{"model":"m","input":` + string(in) + `}`})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 429 && (srv.Stats().Throttled != 1 || !strings.Contains(string(body), "Request too large")) {
				t.Fatalf("stats %+v, body %.300s: want a 429 saying the request is too large", srv.Stats(), body)
			}
		})
	}
}
