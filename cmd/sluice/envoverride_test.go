package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// cloudSearchVars are the variables applyEnv reads by default, and the
// renamed endpoint variable of the tests.
var cloudSearchVars = []string{"CLOUD_AI_SEARCH_ENDPOINT", "CLOUD_AI_SEARCH_KEY", "CLOUD_SEARCH_API_VERSION", "MY_EP"}

// warnLines returns the lines of stderr logged at level WARN.
func warnLines(stderr string) []string {
	var warns []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "level=WARN") {
			warns = append(warns, l)
		}
	}
	return warns
}

// TestEnvOverrideWarning runs commands against the Cloud AI Search test
// double with a sluice.yaml that names one service while the environment
// (exported, or set by ./.env) names another value: the environment still
// wins, and each command warns once on stderr per overridden setting,
// naming the variable, the setting and the file, with both values for the
// endpoint and the API version and neither for the key. A variable equal
// to the file's value, a setting the file leaves empty, and a local store
// (which reads no sink.cloudsearch setting) warn of nothing.
func TestEnvOverrideWarning(t *testing.T) {
	const (
		key      = "test-admin-key"
		fileKey  = "file-secret-key-7d1c"
		fileVer  = "2024-07-01"
		otherVer = "2025-09-01"
	)
	fileSrv, fileEP := searchtest.Start(t, searchtest.Options{Key: key})
	envSrv, envEP := searchtest.Start(t, searchtest.Options{Key: key})
	hint := "(the environment wins over the config file; to use the file's, unset CLOUD_AI_SEARCH_ENDPOINT in the shell, " +
		"or remove it from the dotenv file, ./.env unless --env-file names another)"
	tests := []struct {
		name     string
		settings string            // of sink.cloudsearch, after the endpoint
		endpoint string            // the file's; "" to leave it unset
		env      map[string]string // exported
		dotenv   string            // ./.env
		sinkType string            // default cloudsearch
		want     []string          // one warning each, in this order
		used     *searchtest.Server
	}{
		{
			name: "endpoint", endpoint: fileEP, env: map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": envEP},
			want: []string{"CLOUD_AI_SEARCH_ENDPOINT overrides sink.cloudsearch.endpoint of sluice.yaml: " + envEP + " is used, not " + fileEP + " " + hint},
			used: envSrv,
		},
		{
			name: "endpoint from ./.env", endpoint: fileEP, dotenv: "CLOUD_AI_SEARCH_ENDPOINT=" + envEP + "\n",
			want: []string{"CLOUD_AI_SEARCH_ENDPOINT overrides sink.cloudsearch.endpoint of sluice.yaml: " + envEP + " is used, not " + fileEP},
			used: envSrv,
		},
		{
			name: "renamed endpoint variable", endpoint: fileEP, settings: "endpointEnv: MY_EP", env: map[string]string{"MY_EP": envEP},
			want: []string{"MY_EP overrides sink.cloudsearch.endpoint of sluice.yaml: " + envEP + " is used, not " + fileEP},
			used: envSrv,
		},
		{
			name: "key", endpoint: fileEP, settings: "key: " + fileKey,
			want: []string{"CLOUD_AI_SEARCH_KEY overrides sink.cloudsearch.key of sluice.yaml: the variable's key is used, not the file's, which differs; neither is shown"},
			used: fileSrv,
		},
		{
			name: "API version", endpoint: fileEP, settings: "apiVersion: " + fileVer, env: map[string]string{"CLOUD_SEARCH_API_VERSION": otherVer},
			want: []string{"CLOUD_SEARCH_API_VERSION overrides sink.cloudsearch.apiVersion of sluice.yaml: " + otherVer + " is used, not " + fileVer},
			used: fileSrv,
		},
		{
			name: "all three", endpoint: fileEP, settings: "key: " + fileKey + ", apiVersion: " + fileVer,
			env: map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": envEP, "CLOUD_SEARCH_API_VERSION": otherVer},
			want: []string{
				"CLOUD_AI_SEARCH_ENDPOINT overrides sink.cloudsearch.endpoint",
				"CLOUD_AI_SEARCH_KEY overrides sink.cloudsearch.key",
				"CLOUD_SEARCH_API_VERSION overrides sink.cloudsearch.apiVersion",
			},
			used: envSrv,
		},
		{
			name: "the same values", endpoint: fileEP, settings: "key: ' " + key + "', apiVersion: " + fileVer,
			env:  map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": strings.ToUpper(fileEP) + "/", "CLOUD_SEARCH_API_VERSION": fileVer},
			used: fileSrv,
		},
		{
			name: "the file leaves them empty", env: map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": envEP, "CLOUD_SEARCH_API_VERSION": otherVer},
			used: envSrv,
		},
		{
			name: "local store", sinkType: "local", endpoint: fileEP, settings: "key: " + fileKey,
			env: map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": envEP},
		},
	}
	for i, tt := range tests {
		// Each case has an index of its own on the shared services, so
		// that its run finds no nodes an earlier case's run wrote (which
		// a fresh manifest would warn of, as unknown_nodes).
		index := fmt.Sprintf("docs-%d", i)
		for _, cmd := range [][]string{{"run", "docs"}, {"get"}, {"query", "pelicans"}, {"delete", "--doc-id", "gone.md"}, {"doctor"}} {
			t.Run(tt.name+"/"+cmd[0], func(t *testing.T) {
				for _, v := range cloudSearchVars {
					unsetEnv(t, v)
				}
				t.Setenv("CLOUD_AI_SEARCH_KEY", key)
				for k, v := range tt.env {
					t.Setenv(k, v)
				}
				sinkType := tt.sinkType
				if sinkType == "" {
					sinkType = "cloudsearch"
				}
				settings := "indexName: " + index + ", indexManagement: CreateIfNotExists, embeddingDimensionality: 16"
				if tt.endpoint != "" {
					settings = "endpoint: " + tt.endpoint + ", " + settings
				}
				if tt.settings != "" {
					settings += ", " + tt.settings
				}
				dir := t.TempDir()
				files := map[string]string{
					"docs/a.md":   "Alpha document about pelicans.\n",
					"sluice.yaml": fmt.Sprintf("embedder: {dimensions: 16}\nsink:\n  type: %s\n  cloudsearch: {%s}\n", sinkType, settings),
				}
				if tt.dotenv != "" {
					files[".env"] = tt.dotenv
				}
				writeFiles(t, dir, files)
				var before int
				if tt.used != nil {
					before = len(tt.used.Requests())
				}
				_, stderr, code := sluice(t, dir, cmd...)
				// Without a first run, a local store is not there to read.
				if (cmd[0] == "run" || sinkType == "cloudsearch") && code != exitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				warns := warnLines(stderr)
				if len(warns) != len(tt.want) {
					t.Fatalf("%d warnings, want %d (%q):\n%s", len(warns), len(tt.want), tt.want, stderr)
				}
				for i, w := range tt.want {
					if !strings.Contains(warns[i], w) {
						t.Errorf("warning %d %q\nlacks %q", i+1, warns[i], w)
					}
				}
				if strings.Contains(stderr, fileKey) || strings.Contains(stderr, key) {
					t.Errorf("stderr shows a key:\n%s", stderr)
				}
				if tt.used != nil && len(tt.used.Requests()) == before {
					t.Errorf("the command sent nothing to the %s service, which the environment's precedence selects", map[bool]string{true: "environment's", false: "file's"}[tt.used == envSrv])
				}
			})
		}
	}
}

// TestApplyEnvOverrides checks which overrides applyEnv reports for a
// warning, and that it still clears every setting its variable replaces.
// Only the Cloud AI Search endpoint, key and API version are replaced by
// variables: the embedder's variables (its API key, AZURE_CLIENT_ID, which
// embedder.managedIdentityClientId wins over) override nothing in the
// file, so they are never reported.
func TestApplyEnvOverrides(t *testing.T) {
	const endpoint = "https://file.search.windows.net"
	file := func() Config {
		c := DefaultConfig()
		c.Sink.Type = "cloudsearch"
		c.Sink.CloudSearch.Endpoint = endpoint
		c.Sink.CloudSearch.Key = "file-key"
		c.Sink.CloudSearch.APIVersion = "2024-07-01"
		return c
	}
	allEnv := map[string]string{
		"CLOUD_AI_SEARCH_ENDPOINT": "https://env.search.windows.net",
		"CLOUD_AI_SEARCH_KEY":      "env-key",
		"CLOUD_SEARCH_API_VERSION": "2025-09-01",
	}
	all := []envOverride{
		{env: "CLOUD_AI_SEARCH_ENDPOINT", setting: "sink.cloudsearch.endpoint", envValue: "https://env.search.windows.net", fileValue: endpoint},
		{env: "CLOUD_AI_SEARCH_KEY", setting: "sink.cloudsearch.key", secret: true},
		{env: "CLOUD_SEARCH_API_VERSION", setting: "sink.cloudsearch.apiVersion", envValue: "2025-09-01", fileValue: "2024-07-01"},
	}
	tests := []struct {
		name string
		edit func(*Config)
		env  map[string]string
		want []envOverride
	}{
		{name: "no variables"},
		{name: "all differ", env: allEnv, want: all},
		{name: "equal but for slashes, case and spaces", env: map[string]string{
			"CLOUD_AI_SEARCH_ENDPOINT": "HTTPS://File.Search.Windows.Net//",
			"CLOUD_AI_SEARCH_KEY":      " file-key\r\n",
			"CLOUD_SEARCH_API_VERSION": "2024-07-01 ",
		}},
		{name: "the file leaves them empty", env: allEnv, edit: func(c *Config) {
			c.Sink.CloudSearch.Endpoint, c.Sink.CloudSearch.Key, c.Sink.CloudSearch.APIVersion = "", " ", ""
		}},
		{name: "local store", env: allEnv, edit: func(c *Config) { c.Sink.Type = "local" }},
		{name: "a key unused by credential default", env: allEnv, edit: func(c *Config) { c.Sink.CloudSearch.Credential = "DefaultAzureCredential" },
			want: []envOverride{all[0], all[2]}},
		{name: "renamed variables", env: map[string]string{"MY_EP": "https://env.search.windows.net", "MY_KEY": "env-key", "CLOUD_AI_SEARCH_KEY": "ignored"},
			edit: func(c *Config) { c.Sink.CloudSearch.EndpointEnv, c.Sink.CloudSearch.KeyEnv = "MY_EP", "MY_KEY" },
			want: []envOverride{
				{env: "MY_EP", setting: "sink.cloudsearch.endpoint", envValue: "https://env.search.windows.net", fileValue: endpoint},
				{env: "MY_KEY", setting: "sink.cloudsearch.key", secret: true},
			}},
		{name: "the embedder's variables", env: map[string]string{"AZURE_CLIENT_ID": "env-id", "AZURE_OPENAI_API_KEY": "env-key", "OPENAI_API_KEY": "env-key"},
			edit: func(c *Config) {
				c.Embedder.Provider, c.Embedder.Auth, c.Embedder.ManagedIdentityClientID = "azure-openai", "managedIdentity", "file-id"
				c.Sink.CloudSearch.Credential = "managedIdentity"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := file()
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			want := cfg
			got := applyEnv(&cfg, func(k string) string { return tt.env[k] })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("overrides %+v\nwant %+v", got, tt.want)
			}
			// The settings whose variable is set are cleared, as before,
			// but for a key that the credential does not use: no variable
			// replaces it, and the store warns of it (TestUnusedFileKeyWarns).
			cs := &want.Sink.CloudSearch
			names := cs.WithDefaults()
			settings := map[string]*string{names.EndpointEnv: &cs.Endpoint, "CLOUD_SEARCH_API_VERSION": &cs.APIVersion}
			if kind, _ := cloudsearch.ParseCredentialKind(string(cs.Credential)); kind == cloudsearch.KeyCredential {
				settings[names.KeyEnv] = &cs.Key
			}
			for env, setting := range settings {
				if tt.env[env] != "" {
					*setting = ""
				}
			}
			if !reflect.DeepEqual(cfg, want) {
				t.Errorf("config after applyEnv:\n%+v\nwant\n%+v", cfg, want)
			}
			for _, o := range got {
				if msg := o.message("sluice.yaml"); strings.Contains(msg, "env-key") || strings.Contains(msg, "file-key") {
					t.Errorf("the warning shows a key: %s", msg)
				}
			}
		})
	}
}

// TestWarnEnvOverridesOnce: the warnings of one loading of the
// configuration are logged once, however often, and from however many
// copies of the configuration, they are asked for.
func TestWarnEnvOverridesOnce(t *testing.T) {
	for _, v := range cloudSearchVars {
		unsetEnv(t, v)
	}
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", "https://env.search.windows.net")
	t.Setenv("CLOUD_SEARCH_API_VERSION", "2025-09-01")
	path := filepath.Join(t.TempDir(), "c.yaml")
	writeFiles(t, filepath.Dir(path), map[string]string{"c.yaml": "sink:\n  type: cloudsearch\n  cloudsearch: {endpoint: https://file.search.windows.net, apiVersion: 2024-07-01, indexName: docs}\n"})
	cfg, _, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	a := &app{log: slog.New(slog.NewTextHandler(&buf, nil))}
	cfgCopy := cfg
	a.warnEnvOverrides(cfg)
	a.warnEnvOverrides(cfg)
	a.warnEnvOverrides(cfgCopy)
	want := []string{
		"CLOUD_AI_SEARCH_ENDPOINT overrides sink.cloudsearch.endpoint of " + path + ": https://env.search.windows.net is used, not https://file.search.windows.net",
		"CLOUD_SEARCH_API_VERSION overrides sink.cloudsearch.apiVersion of " + path + ": 2025-09-01 is used, not 2024-07-01",
	}
	warns := warnLines(buf.String())
	if len(warns) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(warns), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(warns[i], w) {
			t.Errorf("warning %d %q\nlacks %q", i+1, warns[i], w)
		}
	}
	// Loaded again (another command), they are logged again.
	again, _, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	a.warnEnvOverrides(again)
	if n := len(warnLines(buf.String())); n != len(want) {
		t.Errorf("%d warnings after loading the configuration again, want %d", n, len(want))
	}
}

// TestSwappedEndpointAndKeyAreNotShown: with the Cloud AI Search endpoint's
// and key's variables swapped, the key, now in the endpoint's variable, is
// in no message, report, state file or lock file of a run, a doctor, or a
// run whose configuration file sets the endpoint too (the environment's
// override warning); the error names the variable.
func TestSwappedEndpointAndKeyAreNotShown(t *testing.T) {
	const key = "Zq8vN3kTxW5yHbR2mLcP9dF4gJ7sA6eU1iO0AzSeDkQw"
	for _, v := range cloudSearchVars {
		unsetEnv(t, v)
	}
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", key)
	t.Setenv("CLOUD_AI_SEARCH_KEY", "https://svc.search.windows.net")
	tests := []struct {
		name     string
		endpoint string // in the configuration file
		args     []string
		want     string
	}{
		{"run", "", []string{"run", "docs", "--report", "report.json"}, "CLOUD_AI_SEARCH_ENDPOINT is not an http(s) URL: it holds a value not shown (it may be a key)"},
		{"doctor", "", []string{"doctor"}, "CLOUD_AI_SEARCH_ENDPOINT"},
		{"file sets the endpoint", "endpoint: https://file.search.windows.net, ", []string{"run", "docs"},
			"CLOUD_AI_SEARCH_ENDPOINT overrides sink.cloudsearch.endpoint of sluice.yaml: a value not shown (it may be a key) is used, not https://file.search.windows.net"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"docs/a.md":   "Alpha document about pelicans.\n",
				"sluice.yaml": "embedder: {dimensions: 16}\nsink:\n  type: cloudsearch\n  cloudsearch: {" + tt.endpoint + "indexName: docs, embeddingDimensionality: 16}\n",
			})
			stdout, stderr, code := sluice(t, dir, tt.args...)
			if code == 0 || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, output %q; want a failure saying %q", code, stdout+stderr, tt.want)
			}
			if strings.Contains(stdout+stderr, key) || strings.Contains(stdout+stderr, key[:16]) {
				t.Errorf("the output shows the key: %s", stdout+stderr)
			}
			for _, root := range []string{dir, os.Getenv("XDG_CACHE_HOME")} {
				err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(path)
					if err == nil && strings.Contains(string(b), key[:16]) {
						t.Errorf("%s holds the key", path)
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestUnusedFileKeyWarns checks that a key in the configuration file
// beside a credential that does not use it is warned about when the store
// opens, without showing it, whether or not the key's variable is set: a
// variable set too (the walkthrough exports CLOUD_AI_SEARCH_KEY) must not
// hide the key left in the file.
func TestUnusedFileKeyWarns(t *testing.T) {
	const fileKey = "file-secret-key-5e2a"
	const envKey = "env-secret-key-9b41"
	for _, credential := range []string{"default", "managedIdentity"} {
		for _, envSet := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/variable set %v", credential, envSet), func(t *testing.T) {
				for _, v := range append(cloudSearchVars, "AZURE_CLIENT_ID") {
					unsetEnv(t, v)
				}
				if envSet {
					t.Setenv("CLOUD_AI_SEARCH_KEY", envKey)
				}
				dir := t.TempDir()
				writeFiles(t, dir, map[string]string{"c.yaml": "sink:\n  type: cloudsearch\n  cloudsearch: {endpoint: https://example.search.windows.net, indexName: docs, " +
					"indexManagement: NoValidation, credential: " + credential + ", key: " + fileKey + "}\n"})
				var buf bytes.Buffer
				a := &app{configPath: filepath.Join(dir, "c.yaml"), log: slog.New(slog.NewTextHandler(&buf, nil))}
				cfg, err := a.config()
				if err != nil {
					t.Fatal(err)
				}
				s, err := a.openStore(t.Context(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				out := buf.String()
				if !strings.Contains(out, "sink.cloudsearch.key is set, but sink.cloudsearch.credential is "+credential) {
					t.Errorf("no warning that the file's key is not used:\n%s", out)
				}
				if strings.Contains(out, fileKey) || strings.Contains(out, envKey) {
					t.Errorf("the log shows a key:\n%s", out)
				}
			})
		}
	}
}
