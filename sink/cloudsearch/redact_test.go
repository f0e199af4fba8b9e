package cloudsearch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// sentCredential returns the api-key or bearer token r carries.
func sentCredential(r *http.Request) string {
	if v := r.Header.Get("api-key"); v != "" {
		return v
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// echoServer is a search service that refuses every credential and quotes
// it: a 403 whose message holds the credential for index requests, and a
// 207 for uploads whose per-document messages hold it (status 400 for the
// first document, 422, which is retried, for the others). quote shortens
// the credential as the service would quote it.
func echoServer(t *testing.T, quote func(string) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := quote(sentCredential(r))
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasSuffix(r.URL.Path, "/docs/index") {
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "", "message": "Invalid api-key: " + cred}})
			return
		}
		var batch struct {
			Value []map[string]any `json:"value"`
		}
		_ = json.NewDecoder(r.Body).Decode(&batch)
		var results []map[string]any
		for i, d := range batch.Value {
			status := http.StatusUnprocessableEntity
			if i == 0 {
				status = http.StatusBadRequest
			}
			results = append(results, map[string]any{"key": d["id"], "status": false, "statusCode": status,
				"errorMessage": "The api-key '" + cred + "' may not write documents."})
		}
		w.WriteHeader(http.StatusMultiStatus)
		_ = json.NewEncoder(w).Encode(map[string]any{"value": results})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServiceMessagesRedacted has the service quote the credential a
// request sent, in a 403's message and in the per-document messages of a
// 207, and checks that neither the errors nor the debug log show it (nor
// any 8 characters of it in a row), while the service's own words remain:
// for a key from the variable or the setting, a key credential rotated
// after New, a bearer token, and a key the service quotes cut short.
func TestServiceMessagesRedacted(t *testing.T) {
	const secret = "TOPSECRETKEY42-0123456789abcdefABCDEF"
	const rotated = "ROTATEDKEY77-9876543210fedcbaFEDCBA"
	whole := func(s string) string { return s }
	tests := []struct {
		name    string
		quote   func(string) string
		cfg     func(*Config)
		opts    func() []Option
		secrets []string
		marker  bool // the service's quote shows as [redacted]
	}{
		{"key from the variable", whole, nil,
			func() []Option { return []Option{WithGetenv(envOf(map[string]string{EnvKey: secret}))} }, []string{secret}, true},
		{"key from the setting", whole, func(c *Config) { c.Key = secret }, nil, []string{secret}, true},
		{"key credential rotated after New", whole, nil, func() []Option {
			cred := azcore.NewKeyCredential(secret)
			return []Option{WithKeyCredential(cred), rotateOption(t, cred, rotated)}
		}, []string{secret, rotated}, true},
		{"bearer token", whole, nil,
			func() []Option { return []Option{WithCredential(&fakeCredential{token: secret})} }, []string{secret}, true},
		{"key quoted cut short", func(s string) string { return s[:len(s)-5] + "..." }, nil,
			func() []Option { return []Option{WithGetenv(envOf(map[string]string{EnvKey: secret}))} }, []string{secret}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := echoServer(t, tt.quote)
			cfg := testConfig(url)
			cfg.IndexManagement, cfg.MaxRetries = NoValidation, 1
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			var log bytes.Buffer
			opts := []Option{testHTTP(t), WithRetryDelay(time.Millisecond),
				WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))}
			if tt.opts != nil {
				opts = append(opts, tt.opts()...)
			}
			s, err := New(context.Background(), cfg, opts...)
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{}
			_, err = s.GetIndex(context.Background())
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("GetIndex() = %v, want a 403 (ErrAuth)", err)
			}
			outputs["get index error"] = err.Error()
			if tt.marker && !strings.Contains(err.Error(), "403 Forbidden: Invalid api-key: [redacted]") {
				t.Errorf("GetIndex() = %q, want the service's message with the key as [redacted]", err)
			}
			_, err = s.Add(context.Background(), makeNodes("a.md", 3))
			var we *sink.WriteError
			if !errors.As(err, &we) || len(we.Failed) != 3 {
				t.Fatalf("Add() = %v, want a *sink.WriteError for 3 documents", err)
			}
			outputs["write error"] = err.Error()
			for id, e := range we.Failed {
				var de *DocumentError
				if !errors.As(e, &de) || !strings.Contains(de.Message, "The api-key '[redacted]") {
					t.Errorf("document %s: %v, want a *DocumentError with the service's message, the key [redacted]", id, e)
				}
				outputs["document "+id] = fmt.Sprint(e)
			}
			outputs["debug log"] = log.String()
			for name, out := range outputs {
				for _, sec := range tt.secrets {
					if part := testenv.SecretRun(out, sec); part != "" {
						t.Errorf("the %s shows %q of a credential: %s", name, part, out)
					}
				}
			}
		})
	}
}

// rotateOption is an Option that rotates cred to key when the first
// request goes out, as a long-running process may call Update.
func rotateOption(t *testing.T, cred *azcore.KeyCredential, key string) Option {
	return WithTransport(rotatingTransport{cred: cred, key: key, once: &sync.Once{}, hc: testClient(t)})
}

// rotatingTransport updates cred to key before the first request it sends
// goes out (the api-key header of that attempt is already set, so the
// rotated key is sent from the next attempt on).
type rotatingTransport struct {
	cred *azcore.KeyCredential
	key  string
	once *sync.Once
	hc   *http.Client
}

func (r rotatingTransport) Do(req *http.Request) (*http.Response, error) {
	r.once.Do(func() { r.cred.Update(r.key) })
	return r.hc.Do(req)
}

// keyEchoServer starts a server that answers every request with a status
// line whose status code is the api-key the request sent, which Go's
// transport quotes in its error, and returns its URL.
func keyEchoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			req, err := http.ReadRequest(bufio.NewReader(conn))
			if err == nil {
				_, _ = conn.Write([]byte("HTTP/1.1 " + req.Header.Get("api-key") + " refused\r\n\r\n"))
			}
			conn.Close()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestTransportErrorRedacted has a server answer with a status line whose
// status code is the key the request sent, which Go's transport quotes in
// its error, and checks that neither the
// *ConnectionError nor the debug log shows the key.
func TestTransportErrorRedacted(t *testing.T) {
	const secret = "TRANSPORTSECRET-0123456789abcdef"
	cfg := testConfig(keyEchoServer(t))
	cfg.IndexManagement, cfg.MaxRetries = NoValidation, NoRetries
	var log bytes.Buffer
	s, err := New(context.Background(), cfg, testHTTP(t), WithGetenv(envOf(map[string]string{EnvKey: secret})),
		WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetIndex(context.Background())
	var ce *ConnectionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "malformed HTTP") {
		t.Fatalf("GetIndex() = %v, want a *ConnectionError for a malformed answer", err)
	}
	if !strings.Contains(log.String(), "malformed HTTP") {
		t.Fatalf("the debug log lacks the failed attempt:\n%s", log.String())
	}
	for name, out := range map[string]string{"error": err.Error(), "debug log": log.String()} {
		if part := testenv.SecretRun(out, secret); part != "" {
			t.Errorf("the %s shows %q of the key: %s", name, part, out)
		}
	}
}

// TestMalformedKeyIsConfigError sets the admin key to a value with a
// character no HTTP header can carry, and checks that New refuses it at
// once with a *ConfigError (exit 2) naming the variable or setting and the
// character, without showing the key or sending a request; white space
// around a key is dropped, not refused.
func TestMalformedKeyIsConfigError(t *testing.T) {
	tests := []struct {
		name    string
		env     string // CLOUD_AI_SEARCH_KEY
		key     string // sink.cloudsearch.key
		names   string // the variable or setting the error names; "" when the key is accepted
		problem string
	}{
		{"DEL at the end of the variable", testKey + "\x7f", "", EnvKey, "a DEL character (0x7F) at byte 26 of 26"},
		{"line break in the variable", testKey[:9] + "\n" + testKey[9:], "", EnvKey, "a line break"},
		{"carriage return in the setting", "", testKey[:5] + "\r" + testKey[5:], "sink.cloudsearch.key", "a carriage return"},
		{"tab in the variable", testKey[:3] + "\t" + testKey[3:], "", EnvKey, "a tab"},
		{"NUL in the setting", "", testKey + "\x00", "sink.cloudsearch.key", "a control character (0x00)"},
		{"CRLF after the variable", testKey + "\r\n", "", "", ""},
		{"CRLF after the setting", "", testKey + "\r\n", "", ""},
		{"spaces around the setting", "", "  " + testKey + " ", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := searchtest.Start(t, searchtest.Options{Key: testKey})
			cfg := testConfig(url)
			cfg.Key = tt.key
			if tt.names != "" {
				cfg.IndexManagement = NoValidation // New sends nothing: it must refuse the key itself
			}
			s, err := New(context.Background(), cfg, testHTTP(t), WithRetryDelay(time.Millisecond),
				WithGetenv(envOf(map[string]string{EnvKey: tt.env})))
			if tt.names == "" {
				if err != nil {
					t.Fatalf("New() = %v, want the key accepted without the white space around it", err)
				}
				if _, err := s.Add(context.Background(), makeNodes("a.md", 1)); err != nil {
					t.Fatalf("Add() = %v, want the trimmed key accepted by the service", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || ce.Setting != "sink.cloudsearch.key" {
				t.Fatalf("New() = %v, want a *ConfigError for sink.cloudsearch.key", err)
			}
			msg := err.Error()
			for _, want := range []string{tt.names, tt.problem} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Count(msg, "a control character") > 1 || !strings.Contains(msg, "no key") {
				t.Errorf("error %q names the kind of character twice, or does not say that no key holds one", msg)
			}
			if errors.Is(err, ErrConnection) || strings.Contains(msg, "no answer") || strings.Contains(msg, "header field") {
				t.Errorf("error %q blames the network or the header, not the key", msg)
			}
			if part := testenv.SecretRun(msg, testKey); part != "" {
				t.Errorf("the error shows %q of the key: %s", part, msg)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent with a malformed key", n)
			}
		})
	}
}

// TestMalformedKeyCredentialNotRetried gives New a key credential whose key
// no HTTP header can carry (New cannot read it to check it), and checks
// that the first request fails at once with a *ConfigError, not retried
// and not reported as an unreachable endpoint.
func TestMalformedKeyCredentialNotRetried(t *testing.T) {
	srv, url := searchtest.Start(t, searchtest.Options{Key: testKey})
	cfg := testConfig(url)
	cfg.IndexManagement, cfg.MaxRetries = NoValidation, 5
	var log bytes.Buffer
	s, err := New(context.Background(), cfg, testHTTP(t), WithRetryDelay(time.Millisecond),
		WithKeyCredential(azcore.NewKeyCredential(testKey+"\x7f")),
		WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetIndex(context.Background())
	var ce *ConfigError
	if !errors.As(err, &ce) || errors.Is(err, ErrConnection) || !strings.Contains(err.Error(), "key credential given to cloudsearch.New") ||
		!strings.Contains(err.Error(), "a DEL character") {
		t.Fatalf("GetIndex() = %v, want a *ConfigError naming the key credential and the DEL", err)
	}
	if n := strings.Count(log.String(), "search service request"); n > 1 {
		t.Errorf("%d attempts logged, want the malformed key refused without retries:\n%s", n, log.String())
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
	if part := testenv.SecretRun(err.Error(), testKey); part != "" {
		t.Errorf("the error shows %q of the key: %s", part, err)
	}
}
