package cloudsearch

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestLoggerLogsEachAttempt checks WithLogger: one debug line per attempt,
// a throttled one included, with method, path and status, and no key.
func TestLoggerLogsEachAttempt(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, srv := startStore(t, searchtest.Options{}, nil, WithLogger(log))
	buf.Reset() // forget index management
	srv.FailNext(1, http.StatusServiceUnavailable, time.Millisecond)
	if _, err := s.Add(context.Background(), makeNodes("a.md", 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), sink.Query{Embedding: vec(1)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !strings.Contains(line, `msg="search service request"`) {
			t.Errorf("unexpected log line: %s", line)
			continue
		}
		var method, path, status string
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "method":
				method = v
			case "path":
				path = v[strings.LastIndex(v, "/")+1:]
			case "status":
				status = v
			}
		}
		got = append(got, method+" "+path+" "+status)
	}
	want := []string{"POST index 503", "POST index 200", "POST search 200"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("logged attempts %q, want %q\nlog:\n%s", got, want, buf.String())
	}
	if strings.Contains(buf.String(), testKey) {
		t.Errorf("the admin key appears in the log:\n%s", buf.String())
	}
}

// TestConnectFromEnvironment checks that the endpoint and key variables,
// and an explicit key, are what the store connects with.
func TestConnectFromEnvironment(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(cfg *Config, url string)
		env  func(url string) map[string]string
	}{
		{"endpoint and key variables",
			func(cfg *Config, _ string) { cfg.Endpoint = "" },
			func(url string) map[string]string { return map[string]string{EnvEndpoint: url + "/", EnvKey: testKey} }},
		{"renamed variables",
			func(cfg *Config, _ string) {
				cfg.Endpoint, cfg.EndpointEnv, cfg.KeyEnv = "", "MY_SEARCH", "MY_SEARCH_KEY"
			},
			func(url string) map[string]string {
				return map[string]string{"MY_SEARCH": url, "MY_SEARCH_KEY": testKey}
			}},
		{"explicit key",
			func(cfg *Config, url string) { cfg.Endpoint, cfg.Key = url, testKey },
			func(string) map[string]string { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := searchtest.Start(t, searchtest.Options{Key: testKey})
			cfg := testConfig("")
			tt.cfg(&cfg, url)
			s, err := New(context.Background(), cfg, testHTTP(t), WithGetenv(envOf(tt.env(url))))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Close()
			if _, err := s.Add(context.Background(), makeNodes("a.md", 1)); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Documents("docs")); n != 1 {
				t.Errorf("%d documents stored, want 1", n)
			}
			for _, r := range srv.Requests() {
				if r.Auth != "api-key" {
					t.Errorf("%s %s sent auth %q, want api-key", r.Method, r.Path, r.Auth)
				}
			}
		})
	}
}

// TestManagedIdentityClientID checks which identity ManagedIdentity uses:
// the user-assigned one named by the variable, else the system-assigned.
func TestManagedIdentityClientID(t *testing.T) {
	cfg := testConfig("https://example.search.windows.net").normalize()
	tests := []struct {
		env  map[string]string
		want azidentity.ManagedIDKind
	}{
		{map[string]string{EnvManagedIdentityClientID: "00000000-0000-0000-0000-000000000001"}, azidentity.ClientID("00000000-0000-0000-0000-000000000001")},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := managedIdentityOptions(&cfg, envOf(tt.env)).ID; got != tt.want {
			t.Errorf("with %v: identity %v, want %v", tt.env, got, tt.want)
		}
	}
}

// TestStrayHiddenKeyWarns: a hiddenFieldKeys entry that names no field
// Sluice writes is warned about when the store opens, with the written
// field it most likely means; a hidden written field is not.
func TestStrayHiddenKeyWarns(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	startStore(t, searchtest.Options{}, func(c *Config) {
		c.HiddenFieldKeys = []string{"chunck", "doc_id", "secret"}
	}, WithLogger(log))
	warns := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`hiddenFieldKeys: \"chunck\" names no field Sluice writes (id, chunk, embedding, metadata, doc_id, author, year, tags): the index gets it as an empty hidden field; did you mean \"chunk\"?`,
		`hiddenFieldKeys: \"secret\" names no field Sluice writes (id, chunk, embedding, metadata, doc_id, author, year, tags): the index gets it as an empty hidden field; check the name`,
	}
	if len(warns) != len(want) {
		t.Fatalf("log:\n%s\nwant %d warnings", buf.String(), len(want))
	}
	for i, w := range want {
		if !strings.Contains(warns[i], "level=WARN") || !strings.Contains(warns[i], w) {
			t.Errorf("warning %d = %s\nwant %s", i, warns[i], w)
		}
	}
}

// TestUnusedKeyWarns checks that a key set in the configuration beside a
// credential that does not use it (the seed's credential is used instead
// of key) is warned about, without showing it, and only then.
func TestUnusedKeyWarns(t *testing.T) {
	const secret = "Secr3tAdminKey0123456789"
	tests := []struct {
		name       string
		credential CredentialKind
		key        string
		warn       bool
	}{
		{"default with a key", DefaultCredential, secret, true},
		{"managed identity with a key", ManagedIdentity, secret, true},
		{"default without a key", DefaultCredential, "", false},
		{"key credential with a key", KeyCredential, secret, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			cfg := testConfig("https://example.search.windows.net")
			cfg.IndexManagement = NoValidation
			cfg.Credential, cfg.Key = tt.credential, tt.key
			s, err := New(context.Background(), cfg, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))), WithGetenv(envOf(nil)))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Close()
			out := buf.String()
			if strings.Contains(out, secret) {
				t.Fatalf("the log shows the key:\n%s", out)
			}
			warned := strings.Contains(out, "sink.cloudsearch.key is set, but sink.cloudsearch.credential is "+string(tt.credential)) &&
				strings.Contains(out, "set credential: key")
			if warned != tt.warn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tt.warn, out)
			}
		})
	}
}
