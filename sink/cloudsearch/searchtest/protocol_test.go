package searchtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAuthAndAPIVersion(t *testing.T) {
	_, url := Start(t, Options{Key: testKey, BearerTokens: []string{"tok-1"}})
	tests := []struct {
		name      string
		pathQuery string
		hdr       map[string]string
		want      int
	}{
		{"api-key", "/indexes?api-version=2024-07-01", map[string]string{"api-key": testKey}, http.StatusOK},
		{"bearer", "/indexes?api-version=2024-07-01", map[string]string{"Authorization": "Bearer tok-1"}, http.StatusOK},
		{"preview version", "/indexes?api-version=2024-09-01-preview", map[string]string{"api-key": testKey}, http.StatusOK},
		{"no credentials", "/indexes?api-version=2024-07-01", nil, http.StatusUnauthorized},
		{"wrong key", "/indexes?api-version=2024-07-01", map[string]string{"api-key": "nope"}, http.StatusForbidden},
		{"wrong token", "/indexes?api-version=2024-07-01", map[string]string{"Authorization": "Bearer tok-2"}, http.StatusUnauthorized},
		{"basic auth", "/indexes?api-version=2024-07-01", map[string]string{"Authorization": "Basic eDp5"}, http.StatusUnauthorized},
		{"missing api-version", "/indexes", map[string]string{"api-key": testKey}, http.StatusBadRequest},
		{"old api-version", "/indexes?api-version=2020-06-30", map[string]string{"api-key": testKey}, http.StatusBadRequest},
		{"stable version", "/indexes?api-version=2025-09-01", map[string]string{"api-key": testKey}, http.StatusOK},
		{"preview spelled Preview", "/indexes?api-version=2024-03-01-Preview", map[string]string{"api-key": testKey}, http.StatusOK},
		{"unpublished preview", "/indexes?api-version=2024-09-10-preview", map[string]string{"api-key": testKey}, http.StatusBadRequest},
		{"not a version", "/indexes?api-version=not-a-version-preview", map[string]string{"api-key": testKey}, http.StatusBadRequest},
		{"missing index", "/indexes/nope/docs/$count?api-version=2024-07-01", map[string]string{"api-key": testKey}, http.StatusNotFound},
		{"unknown path", "/datasources?api-version=2024-07-01", map[string]string{"api-key": testKey}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := callWith(t, url, http.MethodGet, tt.pathQuery, nil, tt.hdr)
			if st != tt.want {
				t.Fatalf("status %d, want %d: %s", st, tt.want, b)
			}
			if st >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
					t.Errorf("error body not in the service shape: %s", b)
				}
				if strings.Contains(string(b), testKey) || strings.Contains(string(b), "tok-") {
					t.Errorf("error leaks a credential: %s", b)
				}
			}
		})
	}
}

func TestOpenServerWithoutCredentials(t *testing.T) {
	_, url := Start(t, Options{})
	if st, b := callWith(t, url, http.MethodGet, "/indexes?api-version="+APIVersion, nil, nil); st != http.StatusOK {
		t.Fatalf("status %d: %s", st, b)
	}
}

func batchOf(n int, mk func(i int) map[string]any) map[string]any {
	v := make([]any, n)
	for i := range v {
		v[i] = mk(i)
	}
	return map[string]any{"value": v}
}

func TestBatchLimits(t *testing.T) {
	s, url := startWithIndex(t, Options{})
	small := func(i int) map[string]any {
		return map[string]any{"@search.action": "upload", "id": fmt.Sprintf("k%d", i), "embedding": []float32{1, 2, 3}}
	}
	st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batchOf(MaxBatchActions+1, small))
	if st != http.StatusBadRequest || !strings.Contains(string(b), "at most 1000") {
		t.Errorf("1001 actions: %d %s", st, b)
	}
	if st, _ = call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batchOf(MaxBatchActions, small)); st != http.StatusOK {
		t.Errorf("1000 actions: %d", st)
	}

	big := make([]byte, DefaultMaxBatchBytes+1)
	copy(big, `{"value": [`)
	for i := len(`{"value": [`); i < len(big); i++ {
		big[i] = ' '
	}
	if st, b = call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", big); st != http.StatusRequestEntityTooLarge {
		t.Errorf("16 MiB + 1: %d %s", st, b)
	}
	s.SetMaxBatchBytes(100)
	if st, _ = call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batchOf(3, small)); st != http.StatusRequestEntityTooLarge {
		t.Errorf("above SetMaxBatchBytes: %d", st)
	}
}

type indexResult struct {
	Key          string  `json:"key"`
	Status       bool    `json:"status"`
	ErrorMessage *string `json:"errorMessage"`
	StatusCode   int     `json:"statusCode"`
}

func indexDocs(t *testing.T, url string, batch any) (int, []indexResult) {
	t.Helper()
	st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", batch)
	var r struct{ Value []indexResult }
	if st == http.StatusOK || st == http.StatusMultiStatus {
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
	}
	return st, r.Value
}

func TestKeyRules(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	tests := []struct {
		key  string
		want int
	}{
		{"abc-DEF_09=", http.StatusCreated},
		{"a", http.StatusCreated},
		{strings.Repeat("k", MaxKeyLength), http.StatusCreated},
		{strings.Repeat("k", MaxKeyLength+1), http.StatusBadRequest},
		{"_leading", http.StatusBadRequest},
		{"has space", http.StatusBadRequest},
		{"slash/key", http.StatusBadRequest},
		{"dot.key", http.StatusBadRequest},
		{"", http.StatusBadRequest},
	}
	for _, tt := range tests {
		name := tt.key
		if len(name) > 20 {
			name = fmt.Sprintf("len%d", len(name))
		}
		t.Run(name, func(t *testing.T) {
			st, res := indexDocs(t, url, map[string]any{"value": []any{
				map[string]any{"@search.action": "upload", "id": tt.key},
				map[string]any{"@search.action": "upload", "id": "ok-neighbour"},
			}})
			wantStatus := http.StatusOK
			if tt.want >= 400 {
				wantStatus = http.StatusMultiStatus
			}
			if st != wantStatus || len(res) != 2 {
				t.Fatalf("status %d with %d results, want %d", st, len(res), wantStatus)
			}
			if res[0].StatusCode != tt.want || res[0].Status != (tt.want < 400) {
				t.Errorf("key result %+v, want statusCode %d", res[0], tt.want)
			}
			if tt.want >= 400 && (res[0].ErrorMessage == nil || !strings.Contains(*res[0].ErrorMessage, "key")) {
				t.Errorf("error message should explain the key rule: %+v", res[0])
			}
			if !res[1].Status {
				t.Errorf("valid neighbour failed: %+v", res[1])
			}
		})
	}
}

func TestBatchRejectsWholeRequest(t *testing.T) {
	_, url := startWithIndex(t, Options{})
	tests := []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"unknown field", map[string]any{"id": "a", "nosuch": 1}, "The property 'nosuch' does not exist"},
		{"vector dimensions", map[string]any{"id": "a", "embedding": []float32{1, 2}}, "Expected: '3'. Actual: '2'"},
		{"int type", map[string]any{"id": "a", "year": 1.5}, "not a valid Edm.Int32"},
		{"string type", map[string]any{"id": "a", "author": 7}, "not a valid Edm.String"},
		{"collection type", map[string]any{"id": "a", "tags": "x"}, "expected an array"},
		{"missing key", map[string]any{"author": "x"}, "no value for the key field 'id'"},
		{"bad action", map[string]any{"@search.action": "insert", "id": "a"}, "'@search.action'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := call(t, url, http.MethodPost, "/indexes/sluice-test/docs/index", map[string]any{"value": []any{tt.doc}})
			if st != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
				t.Errorf("got %d %s, want 400 containing %q", st, b, tt.want)
			}
		})
	}
}

func TestActions(t *testing.T) {
	s, url := startWithIndex(t, Options{})
	seed(t, url)
	st, res := indexDocs(t, url, map[string]any{"value": []any{
		map[string]any{"@search.action": "merge", "id": "a1", "author": "zed"},
		map[string]any{"@search.action": "merge", "id": "nope", "author": "zed"},
		map[string]any{"@search.action": "mergeOrUpload", "id": "e5", "author": "eve"},
		map[string]any{"@search.action": "delete", "id": "b2"},
		map[string]any{"@search.action": "delete", "id": "never-there"},
	}})
	want := []int{200, 404, 201, 200, 200}
	if st != http.StatusMultiStatus || len(res) != len(want) {
		t.Fatalf("status %d, %d results", st, len(res))
	}
	for i, r := range res {
		if r.StatusCode != want[i] {
			t.Errorf("result %d = %+v, want statusCode %d", i, r, want[i])
		}
	}
	docs := s.Documents("sluice-test")
	var keys []string
	for _, d := range docs {
		keys = append(keys, d["id"].(string))
	}
	if strings.Join(keys, ",") != "a1,c3,d4,e5" {
		t.Errorf("keys after actions = %v", keys)
	}
	if docs[0]["author"] != "zed" || docs[0]["chunk"] == nil {
		t.Errorf("merge should replace author and keep chunk: %v", docs[0])
	}
}

func TestScriptedFaults(t *testing.T) {
	s, url := startWithIndex(t, Options{})
	s.FailKeys(http.StatusServiceUnavailable, 1, "k1")
	s.FailKeys(http.StatusConflict, 2, "k2")
	batch := batchOf(3, func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("k%d", i)} })
	wantRounds := [][]int{{201, 503, 409}, {200, 201, 409}, {200, 200, 201}}
	for round, want := range wantRounds {
		st, res := indexDocs(t, url, batch)
		wantSt := http.StatusOK
		for _, w := range want {
			if w >= 400 {
				wantSt = http.StatusMultiStatus
			}
		}
		if st != wantSt {
			t.Fatalf("round %d: status %d, want %d", round, st, wantSt)
		}
		for i, r := range res {
			if r.StatusCode != want[i] || r.Status != (want[i] < 400) {
				t.Errorf("round %d key %s: %+v, want %d", round, r.Key, r, want[i])
			}
		}
	}

	s.FailNext(2, http.StatusTooManyRequests, 1500*time.Millisecond)
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodGet, url+"/indexes/sluice-test/docs/$count?api-version="+APIVersion, nil)
		req.Header.Set("api-key", testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("retry-after-ms") != "1500" {
			t.Errorf("request %d: %d Retry-After=%q retry-after-ms=%q", i, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("retry-after-ms"))
		}
	}
	if st, _ := call(t, url, http.MethodGet, "/indexes/sluice-test/docs/$count", nil); st != http.StatusOK {
		t.Errorf("after the scripted faults: %d", st)
	}
	if st, _ := call(t, url, http.MethodGet, "/indexes/sluice-test", nil); st != http.StatusOK {
		t.Errorf("index requests are not data-plane: %d", st)
	}
}

func TestFaultRateIsSeeded(t *testing.T) {
	run := func() string {
		_, url := startWithIndex(t, Options{FaultRate: 0.5, Seed: 7})
		var b strings.Builder
		for range 20 {
			st, _ := call(t, url, http.MethodGet, "/indexes/sluice-test/docs/$count", nil)
			fmt.Fprintf(&b, "%d ", st)
		}
		return b.String()
	}
	a, b := run(), run()
	if a != b || !strings.Contains(a, "503") || !strings.Contains(a, "200") {
		t.Errorf("fault sequences %q and %q: want equal and mixed", a, b)
	}
}

func TestLatencyRespectsCancel(t *testing.T) {
	s := NewServer(Options{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/indexes?api-version="+APIVersion, nil)
	rec := &recorder{header: http.Header{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return after the request was cancelled")
	}
	if rec.status != 499 {
		t.Errorf("status %d, want 499", rec.status)
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(s int) { r.status = s }

func TestSchemaValidationOnRequests(t *testing.T) {
	needSpec(t)
	_, url := startWithIndex(t, Options{SpecDir: specDir})
	tests := []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"search top string", http.MethodPost, "/indexes/sluice-test/docs/search", `{"top": "3"}`, "/top"},
		{"batch shape", http.MethodPost, "/indexes/sluice-test/docs/index", `{"documents": []}`, "missing property 'value'"},
		{"index shape", http.MethodPut, "/indexes/other", `{"name": "other", "fields": {}}`, "/fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := call(t, url, tt.method, tt.path, tt.body)
			if st != http.StatusBadRequest || !strings.Contains(string(b), tt.want) || !strings.Contains(string(b), "InvalidRequestBody") {
				t.Errorf("got %d %s, want 400 naming %q", st, b, tt.want)
			}
		})
	}
	seed(t, url)
	if keys, _ := searchKeys(t, url, map[string]any{"search": "fox", "top": 1, "count": true}); len(keys) != 1 {
		t.Errorf("valid search through the validator: %v", keys)
	}
}

func TestSpecDirMissing(t *testing.T) {
	s := NewServer(Options{SpecDir: t.TempDir()})
	if err := s.SpecError(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SpecError() = %v, want one wrapping fs.ErrNotExist", err)
	}
	rec := &recorder{header: http.Header{}}
	s.ServeHTTP(rec, httptestRequest(http.MethodGet, "/indexes?api-version="+APIVersion))
	if rec.status != http.StatusInternalServerError {
		t.Errorf("status %d, want 500 while the spec is unavailable", rec.status)
	}
}

func httptestRequest(method, target string) *http.Request {
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// TestLatencyEndsWhenClientGoesAway checks that a client giving up on a POST
// in injected latency frees the handler, so that Close does not wait for the
// full latency.
//
// The client gives up once the server has its request, not after a fixed
// time: a client deadline can pass before the server's goroutines have
// accepted the connection and read the request (a loaded machine holds them
// up), and Close then drops the connection unread, so that no request is
// recorded at all.
func TestLatencyEndsWhenClientGoesAway(t *testing.T) {
	s := NewServer(Options{Latency: time.Hour})
	arrived := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		s.ServeHTTP(w, r)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		select {
		case <-arrived:
		case <-time.After(10 * time.Second): // the check below reports it
		}
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/indexes?api-version="+APIVersion, strings.NewReader(`{"name": "x"}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("request answered %d during an hour of latency", resp.StatusCode)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		ts.Close()
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits for the abandoned request")
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Status != 499 {
		t.Errorf("recorded %+v, want one request answered 499", reqs)
	}
}
