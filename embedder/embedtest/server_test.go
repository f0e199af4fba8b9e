package embedtest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/embedder/embedtest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

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
	path := filepath.Join("testdata", "response.golden")
	if *update {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(body, want) {
		t.Fatalf("response changed:\n%s\nwant:\n%s", body, want)
	}
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

func TestStallEndsWithClient(t *testing.T) {
	srv, url := embedtest.Start(t, embedtest.Options{FaultRate: 1, Faults: []embedtest.Fault{embedtest.FaultStall}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/embeddings", strings.NewReader(`{"model":"m","input":["x"]}`))
	_, err := http.DefaultClient.Do(req)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("stalled request returned %v before the client gave up", err)
	}
	if st := srv.Stats(); st.Faults != 1 || st.OK != 0 {
		t.Fatalf("stats %+v", st)
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
