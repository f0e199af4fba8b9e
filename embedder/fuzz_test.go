package embedder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/internal/retryafter"
)

// fuzzClient returns a Client of provider for vectors of dims dimensions,
// which sends nothing.
func fuzzClient(provider string, dims int) *Client {
	cfg := Config{Provider: provider, Dimensions: dims, Concurrency: 1}
	cfg.ApplyDefaults()
	return newClient(cfg, provider, nil)
}

// FuzzDecode decodes arbitrary embeddings response bodies for n inputs
// of dims dimensions. decode must never panic; it must accept exactly the
// bodies that refDecode accepts, with the same vectors; and it must refuse
// the others with a *ResponseError or *DimensionError whose message names
// what is wrong (see namesProblem).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`,
		`{"data":[{"index":2,"embedding":[1,2]}]}`,
		`{"data":[{"index":0,"embedding":[1,2,3]}]}`,
		`{"data":[{"index":0,"embedding":"AAAAPwAAgL8="}]}`,
		`{"data":[{"index":0,"embedding":[1e39,2]}]}`,
		`{"data":[{"index":-1,"embedding":[1,2]}]}`,
		`{"data":[{"index":0.5,"embedding":[1,2]}]}`,
		`{"data":{"index":0,"embedding":[1,2]}}`,
		`{"data":[]}`,
		`{"error":{"message":"overloaded","type":"server_error"}}`,
		`[]`, `null`, `{}`, ``, `{"data":[null]}`,
	} {
		f.Add([]byte(s), uint8(0), uint8(1)) // 1 input, 2 dimensions
	}
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`), uint8(1), uint8(1))
	f.Add([]byte(`{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}`), uint8(1), uint8(1))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1,null]}]}`), uint8(0), uint8(1))
	clients := map[int]*Client{}
	for dims := 1; dims <= 4; dims++ {
		clients[dims] = fuzzClient(ProviderOpenAI, dims)
	}
	f.Fuzz(func(t *testing.T, body []byte, nIn, dimsIn uint8) {
		n, dims := 1+int(nIn%3), 1+int(dimsIn%4)
		got, err := clients[dims].decode(bytes.NewReader(body), n, nil)
		want, wantErr := refDecode(body, n, dims)
		if err != nil {
			var re *ResponseError
			var de *DimensionError
			switch { // the classes retry tells apart
			case errors.As(err, &re) && errors.Is(err, ErrBadResponse) && errors.Is(err, ErrEmbed):
			case errors.As(err, &de) && errors.Is(err, ErrDimensions) && errors.Is(err, ErrEmbed):
			default:
				t.Fatalf("decode(%q) = %#v, want a *ResponseError or *DimensionError", body, err)
			}
			if wantErr == "" {
				t.Fatalf("decode(%q, %d inputs, %d dimensions) = %v; want %v", body, n, dims, err, want)
			}
			if !namesProblem(err, wantErr) {
				t.Fatalf("decode(%q, %d inputs, %d dimensions) = %q, which does not name the problem: %s", body, n, dims, err, wantErr)
			}
			return
		}
		if wantErr != "" {
			t.Fatalf("decode(%q, %d inputs, %d dimensions) = %v, want an error: %s", body, n, dims, got, wantErr)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("decode(%q) = %v, want %v", body, got, want)
		}
	})
}

// namesProblem reports whether err, from decode, names what refDecode
// found wrong (why): a body that is no JSON object, its data field, or a
// field of one of its items (not necessarily the first problem refDecode
// finds: encoding/json reports a value of the wrong type before any other
// problem). Only a vector of the wrong length may be a *DimensionError,
// which tells to change embedder.dimensions.
func namesProblem(err error, why string) bool {
	msg := err.Error()
	var de *DimensionError
	switch {
	case errors.As(err, &de):
		return strings.HasSuffix(why, " numbers")
	case strings.Contains(msg, " was expected"): // a value of the wrong type, found first
		return strings.Contains(msg, `"data`) || strings.Contains(msg, "the body")
	case why == "invalid JSON":
		return strings.Contains(msg, "JSON")
	case why == "not an object":
		return strings.Contains(msg, "object") || strings.Contains(msg, `"data"`)
	case why == "data is not a list" || strings.HasPrefix(why, "data holds"):
		return strings.Contains(msg, `"data"`)
	}
	for _, field := range []string{"index", "embedding", "data["} {
		if strings.Contains(msg, field) {
			return true
		}
	}
	return false
}

// refDecode is a reference reading of an embeddings response: an object
// whose data holds n objects, each with an integer index below n, each
// index once (an item without one, or with a null one, has its position),
// and an embedding of dims numbers that fit a float32. JSON
// keys match case-insensitively, as encoding/json matches them, and for a
// key given twice the last one counts. It returns the vectors, or why the
// body is not a valid response.
func refDecode(body []byte, n, dims int) ([][]float32, string) {
	if !json.Valid(body) {
		return nil, "invalid JSON"
	}
	top, ok := object(body)
	if !ok {
		return nil, "not an object"
	}
	var data []json.RawMessage
	if raw, ok := top["data"]; !ok || json.Unmarshal(raw, &data) != nil || data == nil {
		return nil, "data is not a list"
	}
	if len(data) != n {
		return nil, fmt.Sprintf("data holds %d items for %d inputs", len(data), n)
	}
	out := make([][]float32, n)
	for i, raw := range data {
		item, ok := object(raw)
		if !ok {
			return nil, fmt.Sprintf("data[%d] is not an object", i)
		}
		idx := int64(i) // no index: the position
		if raw, ok := item["index"]; ok && string(raw) != "null" {
			var err error
			if idx, err = strconv.ParseInt(string(raw), 10, 64); err != nil {
				return nil, fmt.Sprintf("data[%d].index is %s", i, raw)
			}
		}
		if idx < 0 || idx >= int64(n) {
			return nil, fmt.Sprintf("data[%d].index is %s", i, item["index"])
		}
		if out[idx] != nil {
			return nil, fmt.Sprintf("data[%d].index %d again", i, idx)
		}
		var nums []json.RawMessage
		if json.Unmarshal(item["embedding"], &nums) != nil || nums == nil {
			return nil, fmt.Sprintf("data[%d].embedding is not a list", i)
		}
		vec := make([]float32, len(nums))
		for j, num := range nums {
			x, err := strconv.ParseFloat(string(num), 64)
			if err != nil || math.Abs(x) > math.MaxFloat32 || num[0] == '"' {
				return nil, fmt.Sprintf("data[%d].embedding[%d] is %s", i, j, num)
			}
			vec[j] = float32(x)
		}
		if len(vec) != dims {
			return nil, fmt.Sprintf("data[%d].embedding has %d numbers", i, len(vec))
		}
		out[idx] = vec
	}
	return out, ""
}

// object reads a JSON object into its members, with lower-case keys (the
// last of those equal but for case wins, as in encoding/json); ok is false
// for anything else.
func object(raw []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out[strings.ToLower(k.(string))] = v
	}
	return out, true
}

// FuzzAPIError turns arbitrary error answers into *APIError values. It must
// never panic, and:
//   - the error keeps the provider and the HTTP status;
//   - the delay is the one retryafter.Parse reads from the headers (taken
//     just before and just after, for a Retry-After date), never negative;
//   - the provider's text that the error keeps (Message, Type, Code), and
//     the text of Error() that reaches logs, hold no run of
//     credential.MinRun characters of the credentials the request sent;
//   - a JSON error's message is kept, redacted, whole; any other body is
//     kept trimmed and redacted, cut to maxRawMessage bytes and "..." at a
//     character boundary (valid UTF-8 stays valid).
func FuzzAPIError(f *testing.F) {
	const key = "sk-proj-Abc123Def456Ghi789Jkl0"
	f.Add(uint16(429), []byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), "2", "1500", key)
	f.Add(uint16(401), []byte(`{"error":{"message":"Incorrect API key provided: sk-proj-Abc1****Jkl0.","type":"invalid_request_error","code":"invalid_api_key"}}`), "", "", key)
	f.Add(uint16(429), []byte(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`), "", "", key)
	f.Add(uint16(500), []byte("<html>upstream error for key "+key+"</html>"), "", "", key)
	f.Add(uint16(400), []byte(`{"error":{"message":"bad","code":400}}`), "Wed, 21 Oct 2015 07:28:00 GMT", "", "0123456789abcdef0123456789abcdef")
	f.Add(uint16(503), []byte(strings.Repeat("x", 290)+"Abc123Def456"), "", "", key)
	clients := []*Client{fuzzClient(ProviderOpenAI, 2), fuzzClient(ProviderAzureOpenAI, 2)}
	f.Fuzz(func(t *testing.T, status uint16, body []byte, retryAfter, retryAfterMS, secret string) {
		if len(secret) < credential.MinRun || strings.ContainsFunc(secret, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) {
			return // keys are letters, digits, - and _
		}
		for _, c := range clients {
			resp := &http.Response{StatusCode: 400 + int(status%200), Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}
			if retryAfter != "" {
				resp.Header.Set("Retry-After", retryAfter)
			}
			if retryAfterMS != "" {
				resp.Header.Set("retry-after-ms", retryAfterMS)
			}
			before := retryafter.Parse(resp.Header, time.Now())
			e := c.apiError(resp, []string{secret})
			after := retryafter.Parse(resp.Header, time.Now())
			if e.RetryAfter < 0 || e.RetryAfter > before || e.RetryAfter < after {
				t.Fatalf("RetryAfter = %v for Retry-After %q, retry-after-ms %q; retryafter.Parse gives %v to %v", e.RetryAfter, retryAfter, retryAfterMS, before, after)
			}
			if e.Provider != c.provider || e.Status != resp.StatusCode {
				t.Fatalf("APIError for %s HTTP %d names %s HTTP %d", c.provider, resp.StatusCode, e.Provider, e.Status)
			}
			var eb errorBody
			if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
				if want := redact(eb.Error.Message, secret); e.Message != want {
					t.Fatalf("Message = %q for the JSON error message %q, want %q", e.Message, eb.Error.Message, want)
				}
			} else {
				whole := redact(strings.TrimSpace(string(body)), secret)
				kept, cut := strings.CutSuffix(e.Message, "...")
				switch {
				case e.Message == whole:
				case !cut || len(kept) > maxRawMessage || !strings.HasPrefix(whole, kept) || len(whole) <= maxRawMessage:
					t.Fatalf("Message = %q for the body %q, want it whole or its first %d bytes and ...", e.Message, body, maxRawMessage)
				case utf8.ValidString(whole) && !utf8.ValidString(kept):
					t.Fatalf("Message = %q cuts a character of the body %q", e.Message, body)
				}
			}
			for _, s := range []string{e.Message, e.Type, e.Code, e.Error()} {
				for i := 0; i+credential.MinRun <= len(secret); i++ {
					if strings.Contains(s, secret[i:i+credential.MinRun]) {
						t.Fatalf("%s: error text %q holds %q of the key %q", c.provider, s, secret[i:i+credential.MinRun], secret)
					}
				}
			}
			_ = e.Error()
			_ = errors.Is(e, ErrEmbed)
			_ = retryable(e)
		}
	})
}

// FuzzPacer feeds arbitrary x-ratelimit-* headers to the pacer. The wait
// it asks for must never be negative, and must be monotonic in what the
// headers report: a report of fewer remaining units, or of a lower
// per-minute limit, never gives a shorter wait. (A wait too long for a
// time.Duration must saturate, not wrap around to a negative value that
// reads as no wait at all.)
func FuzzPacer(f *testing.F) {
	f.Add("500", "60000", "1s", "100", 0.0, 0.0, uint16(400), uint16(0))
	f.Add("0", "", "6m0s", "0", 10000.0, 60.0, uint16(1000), uint16(100))
	f.Add("-100", "1000", "", "-5", 0.0, 0.0, uint16(1), uint16(5000))
	f.Add("1e300", "0.5", "20ms", "3", 1e6, 3.0, uint16(8191), uint16(1))
	t0 := time.Unix(2000, 0)
	f.Fuzz(func(t *testing.T, remaining, limit, reset, requests string, lower, lowerLimit float64, tokens, elapsedMS uint16) {
		wait := func(remaining, limit string) time.Duration {
			h := http.Header{}
			for k, v := range map[string]string{
				"x-ratelimit-remaining-tokens": remaining, "x-ratelimit-limit-tokens": limit, "x-ratelimit-reset-tokens": reset,
				"x-ratelimit-remaining-requests": requests,
			} {
				if v != "" {
					h.Set(k, v)
				}
			}
			p := &pacer{tpm: 0, rpm: 0}
			p.observe(h, t0)
			d, _ := p.reserve(t0.Add(time.Duration(elapsedMS)*time.Millisecond), int(tokens))
			if d < 0 {
				t.Fatalf("wait %v for remaining %q, limit %q, reset %q", d, remaining, limit, reset)
			}
			return d
		}
		base := wait(remaining, limit)
		// Fewer remaining tokens: no shorter wait.
		if x, err := strconv.ParseFloat(remaining, 64); err == nil && !math.IsNaN(x) && !math.IsNaN(lower) && lower >= 0 {
			less := strconv.FormatFloat(x-lower, 'g', -1, 64)
			if d := wait(less, limit); d < base {
				t.Fatalf("remaining %s waits %v, less than the %v for remaining %s (limit %q, reset %q, %d tokens)", less, d, base, remaining, limit, reset, tokens)
			}
		}
		// A lower limit, when it is one: no shorter wait.
		if l, err := strconv.ParseFloat(limit, 64); err == nil && l > 0 && !math.IsNaN(lowerLimit) && lowerLimit >= 1 {
			lowerL := strconv.FormatFloat(l/lowerLimit, 'g', -1, 64)
			if d := wait(remaining, lowerL); d < base {
				t.Fatalf("limit %s waits %v, less than the %v for limit %s (remaining %q, reset %q, %d tokens)", lowerL, d, base, limit, remaining, reset, tokens)
			}
		}
	})
}
