package cloudsearch

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	want := Config{
		EndpointEnv: EnvEndpoint, KeyEnv: EnvKey, Credential: KeyCredential, ManagedIdentityClientIDEnv: EnvManagedIdentityClientID,
		IndexManagement: NoValidation, EmbeddingDimensionality: 1536, VectorAlgorithmType: ExhaustiveKNN,
		IDFieldKey: "id", ChunkFieldKey: "chunk", EmbeddingFieldKey: "embedding", MetadataStringFieldKey: "metadata", DocIDFieldKey: "doc_id",
		HiddenFieldKeys: []string{}, FilterableMetadataFieldKeys: FilterableFields{}, SemanticConfiguration: "mySemanticConfig",
		Timeout: 60 * time.Second, MaxRetries: 5, UploadBatchSize: 1000, UploadConcurrency: 4,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("DefaultConfig() =\n%+v\nwant\n%+v", c, want)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sink.cloudsearch.indexName") {
		t.Errorf("Validate of DefaultConfig = %v, want an error naming sink.cloudsearch.indexName", err)
	}
}

func decodeConfig(t *testing.T, src string) (Config, error) {
	t.Helper()
	c := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	err := dec.Decode(&c)
	return c, err
}

func TestFilterableFieldsYAML(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want FilterableFields
	}{
		{"list of names", "filterableMetadataFieldKeys: [author, year]",
			FilterableFields{{Key: "author", Field: "author", Type: String}, {Key: "year", Field: "year", Type: String}}},
		{"map to field", "filterableMetadataFieldKeys: {author: author_field, year: year}",
			FilterableFields{{Key: "author", Field: "author_field", Type: String}, {Key: "year", Field: "year", Type: String}}},
		{"map to field and type", "filterableMetadataFieldKeys:\n  author: [author, STRING]\n  year: [year_field, INT32]\n  tags: [tags, COLLECTION]\n  score: [score, Edm.Double]\n  big: [big, int64]\n  ok: [ok, BOOLEAN]",
			FilterableFields{{Key: "author", Field: "author", Type: String}, {Key: "year", Field: "year_field", Type: Int32}, {Key: "tags", Field: "tags", Type: StringCollection},
				{Key: "score", Field: "score", Type: Double}, {Key: "big", Field: "big", Type: Int64}, {Key: "ok", Field: "ok", Type: Boolean}}},
		{"empty map", "filterableMetadataFieldKeys: {}", FilterableFields{}},
		{"null", "filterableMetadataFieldKeys: null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeConfig(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.FilterableMetadataFieldKeys, tt.want) {
				t.Errorf("got %+v, want %+v", c.FilterableMetadataFieldKeys, tt.want)
			}
		})
	}
}

func TestFilterableFieldsYAMLErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"bad type", "filterableMetadataFieldKeys: {year: [year, INT8]}", "filterableMetadataFieldKeys.year"},
		{"triple", "filterableMetadataFieldKeys: {year: [a, b, c]}", "[field name, type]"},
		{"nested list", "filterableMetadataFieldKeys: [[a]]", "metadata key names"},
		{"scalar", "filterableMetadataFieldKeys: author", "list of names or a map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeConfig(t, tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFilterableFieldsRoundTrip(t *testing.T) {
	in := FilterableFields{{Key: "author", Field: "a", Type: String}, {Key: "tags", Field: "tags", Type: StringCollection}}
	b, err := yaml.Marshal(struct {
		F FilterableFields `yaml:"filterableMetadataFieldKeys"`
	}{in})
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeConfig(t, string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.FilterableMetadataFieldKeys, in) {
		t.Errorf("round trip of\n%s gave %+v", b, c.FilterableMetadataFieldKeys)
	}
}

func TestConfigYAMLEveryOption(t *testing.T) {
	src := `
endpoint: https://x.search.windows.net
endpointEnv: MY_ENDPOINT
keyEnv: MY_KEY
credential: managedIdentity
managedIdentityClientIdEnv: MY_CLIENT
apiVersion: 2024-09-01-preview
indexName: docs-1
indexManagement: CREATE_IF_NOT_EXISTS
embeddingDimensionality: 768
vectorAlgorithmType: HNSW
compressionType: ScalarQuantization
idFieldKey: key
chunkFieldKey: text
embeddingFieldKey: vec
metadataStringFieldKey: meta
docIdFieldKey: ref
hiddenFieldKeys: [secret]
filterableMetadataFieldKeys: [author]
languageAnalyzer: en.lucene
semanticConfiguration: sem
timeout: 5s
maxRetries: 2
uploadBatchSize: 100
uploadConcurrency: 2
`
	c, err := decodeConfig(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	n := c.normalize()
	checks := map[string][2]any{
		"endpoint":        {n.Endpoint, "https://x.search.windows.net"},
		"indexManagement": {n.IndexManagement, CreateIfNotExists},
		"algorithm":       {n.VectorAlgorithmType, HNSW},
		"compression":     {n.CompressionType, ScalarQuantization},
		"credential":      {n.Credential, ManagedIdentity},
		"dims":            {n.EmbeddingDimensionality, 768},
		"timeout":         {n.Timeout, 5 * time.Second},
		"docId":           {n.DocIDFieldKey, "ref"},
		"hidden":          {len(n.HiddenFieldKeys), 1},
		"analyzer":        {n.LanguageAnalyzer, "en.lucene"},
		"apiVersion":      {n.APIVersion, "2024-09-01-preview"},
		"batch":           {n.UploadBatchSize, 100},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
}

func TestParseSpellings(t *testing.T) {
	for _, s := range []string{"NoValidation", "NO_VALIDATION", "novalidation", ""} {
		if m, err := ParseIndexManagement(s); err != nil || m != NoValidation {
			t.Errorf("ParseIndexManagement(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"ValidateIndex", "VALIDATE_INDEX"} {
		if m, err := ParseIndexManagement(s); err != nil || m != ValidateIndex {
			t.Errorf("ParseIndexManagement(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"CreateIfNotExists", "CREATE_IF_NOT_EXISTS"} {
		if m, err := ParseIndexManagement(s); err != nil || m != CreateIfNotExists {
			t.Errorf("ParseIndexManagement(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"ExhaustiveKnn", "exhaustiveknn", ""} {
		if a, err := ParseVectorAlgorithm(s); err != nil || a != ExhaustiveKNN {
			t.Errorf("ParseVectorAlgorithm(%q) = %v, %v", s, a, err)
		}
	}
	if c, err := ParseCompression("BinaryQuantization"); err != nil || c != BinaryQuantization {
		t.Errorf("ParseCompression = %v, %v", c, err)
	}
	if k, err := ParseCredentialKind("DefaultAzureCredential"); err != nil || k != DefaultCredential {
		t.Errorf("ParseCredentialKind = %v, %v", k, err)
	}
}

func TestValidateNamesSetting(t *testing.T) {
	base := func() Config { c := DefaultConfig(); c.IndexName = "docs"; return c }
	tests := []struct {
		name    string
		mutate  func(*Config)
		setting string
	}{
		{"ok", func(*Config) {}, ""},
		{"index name required", func(c *Config) { c.IndexName = "" }, "indexName"},
		{"index name upper case", func(c *Config) { c.IndexName = "Docs" }, "indexName"},
		{"index name double dash", func(c *Config) { c.IndexName = "a--b" }, "indexName"},
		{"index management", func(c *Config) { c.IndexManagement = "Sometimes" }, "indexManagement"},
		{"algorithm", func(c *Config) { c.VectorAlgorithmType = "ivf" }, "vectorAlgorithmType"},
		{"compression", func(c *Config) { c.CompressionType = "pq" }, "compressionType"},
		{"compression needs hnsw", func(c *Config) { c.CompressionType = BinaryQuantization }, "compressionType"},
		{"compression with hnsw", func(c *Config) { c.CompressionType = BinaryQuantization; c.VectorAlgorithmType = HNSW }, ""},
		{"credential", func(c *Config) { c.Credential = "password" }, "credential"},
		{"api version", func(c *Config) { c.APIVersion = "latest" }, "apiVersion"},
		{"preview api version", func(c *Config) { c.APIVersion = "2024-09-01-preview" }, ""},
		{"endpoint", func(c *Config) { c.Endpoint = "ftp://x" }, "endpoint"},
		{"endpoint env", func(c *Config) { c.EndpointEnv = "1X" }, "endpointEnv"},
		{"key pasted into keyEnv", func(c *Config) { c.KeyEnv = "sk-proj-SuperSecretKey-123456" }, "keyEnv"},
		{"admin key pasted into keyEnv", func(c *Config) { c.KeyEnv = "AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789ABCD" }, "keyEnv"},
		{"dimensions", func(c *Config) { c.EmbeddingDimensionality = -1 }, "embeddingDimensionality"},
		{"field name", func(c *Config) { c.ChunkFieldKey = "_chunk" }, "chunkFieldKey"},
		{"duplicate field", func(c *Config) { c.DocIDFieldKey = "id" }, "docIdFieldKey"},
		{"filterable clashes", func(c *Config) {
			c.FilterableMetadataFieldKeys = FilterableFields{{Key: "m", Field: "metadata"}}
		}, "filterableMetadataFieldKeys.m"},
		{"filterable type", func(c *Config) { c.FilterableMetadataFieldKeys = FilterableFields{{Key: "m", Type: "Edm.Vector"}} }, "filterableMetadataFieldKeys.m"},
		{"hidden key field", func(c *Config) { c.HiddenFieldKeys = []string{"id"} }, "hiddenFieldKeys"},
		{"batch size", func(c *Config) { c.UploadBatchSize = 1001 }, "uploadBatchSize"},
		{"concurrency", func(c *Config) { c.UploadConcurrency = -1 }, "uploadConcurrency"},
		{"retries", func(c *Config) { c.MaxRetries = -2 }, "maxRetries"},
		{"timeout", func(c *Config) { c.Timeout = -time.Second }, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(&c)
			err := c.Validate()
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate() = %v, want a *ConfigError", err)
			}
			if ce.Setting != "sink.cloudsearch."+tt.setting {
				t.Errorf("Setting = %q, want sink.cloudsearch.%s (%v)", ce.Setting, tt.setting, err)
			}
			if c.KeyEnv != base().KeyEnv && strings.Contains(err.Error(), c.KeyEnv) {
				t.Errorf("Validate() = %q shows the value of keyEnv", err)
			}
		})
	}
}

// TestExampleConfigFile checks configs/cloudsearch.yaml: it decodes with
// unknown keys refused, holds no key, and states exactly the defaults.
func TestExampleConfigFile(t *testing.T) {
	b, err := os.ReadFile("../../configs/cloudsearch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	sinkNode := top["sink"]
	var sinkSec struct {
		Type        string    `yaml:"type"`
		Cloudsearch yaml.Node `yaml:"cloudsearch"`
	}
	if err := sinkNode.Decode(&sinkSec); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	enc := yaml.NewEncoder(&raw)
	if err := enc.Encode(&sinkSec.Cloudsearch); err != nil {
		t.Fatal(err)
	}
	got, err := decodeConfig(t, raw.String())
	if err != nil {
		t.Fatalf("configs/cloudsearch.yaml: %v", err)
	}
	if sinkSec.Type != "cloudsearch" {
		t.Errorf("sink.type = %q", sinkSec.Type)
	}
	if got.Key != "" {
		t.Error("configs/cloudsearch.yaml must not hold a key")
	}
	want := DefaultConfig()
	want.IndexName = got.IndexName
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs/cloudsearch.yaml differs from DefaultConfig:\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

// TestValidateFilterableKeyTwice: a metadata key listed twice in
// filterableMetadataFieldKeys is refused as such. The list form
// [level, level] used to be reported as the field "level" being "also
// used by" itself, and one key given two fields passed, leaving which
// field a filter uses to the order of the list.
func TestValidateFilterableKeyTwice(t *testing.T) {
	for name, ff := range map[string]FilterableFields{
		"list form":      {{Key: "level"}, {Key: "level"}},
		"two fields":     {{Key: "level", Field: "lvl"}, {Key: "level", Field: "level2", Type: Int32}},
		"other in front": {{Key: "author"}, {Key: "level"}, {Key: "level", Field: "lvl"}},
	} {
		c := DefaultConfig()
		c.IndexName = "docs"
		c.FilterableMetadataFieldKeys = ff
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Setting != "sink.cloudsearch.filterableMetadataFieldKeys.level" || !strings.Contains(err.Error(), `"level" is listed more than once`) {
			t.Errorf("%s: Validate() = %v; want a *ConfigError for filterableMetadataFieldKeys.level saying it is listed twice", name, err)
		}
	}
}

// TestEndpointHoldingCredentialsRefused checks that an endpoint with user
// information, a query or a fragment, in the file or in its variable, is a
// *ConfigError naming where it came from and never showing the value: the
// endpoint appears in every message about an unreachable or missing index,
// and a key in it would go with it.
func TestEndpointHoldingCredentialsRefused(t *testing.T) {
	const secret = "Secr3tAdminKey0123456789"
	tests := []struct {
		name, endpoint string
	}{
		{"user and password", "https://admin:" + secret + "@x.search.windows.net"},
		{"user alone", "https://" + secret + "@x.search.windows.net"},
		{"query", "https://x.search.windows.net?api-key=" + secret},
		{"query after a path", "https://x.search.windows.net/?api-key=" + secret},
		{"fragment", "https://x.search.windows.net#" + secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(where string, err error, wantIn string) {
				t.Helper()
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Setting != "sink.cloudsearch.endpoint" {
					t.Fatalf("%s: %v, want a *ConfigError for sink.cloudsearch.endpoint", where, err)
				}
				if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, wantIn) || !strings.Contains(msg, "https://NAME.search.windows.net") {
					t.Errorf("%s: %q, want a message naming %s and the form of an endpoint, without the value", where, msg, wantIn)
				}
			}
			c := testConfig(tt.endpoint)
			check("Validate", c.Validate(), "sink.cloudsearch.endpoint")

			c = testConfig("")
			_, err := New(context.Background(), c, WithGetenv(envOf(map[string]string{EnvEndpoint: tt.endpoint, EnvKey: testKey})))
			check("New with "+EnvEndpoint, err, EnvEndpoint)
		})
	}
	// The service's address with a path is still an endpoint.
	if err := testConfig("https://x.search.windows.net/").Validate(); err != nil {
		t.Errorf("Validate of an endpoint with a trailing slash: %v", err)
	}
}

// TestPlainHTTPEndpointRefused checks that an http endpoint on another
// machine, in the file or in its variable, is a *ConfigError naming where
// it came from and the https address to use, before any request: azcore
// sends no key or token over plain http, so every request would fail with
// an error about the network ("no answer ... raise timeout"). On a
// loopback address (sluice devserver search) http stays accepted.
func TestPlainHTTPEndpointRefused(t *testing.T) {
	for _, endpoint := range []string{"http://x.search.windows.net", "http://x.search.windows.net:8080/", "http://10.0.0.5:8700"} {
		t.Run(endpoint, func(t *testing.T) {
			u, _ := url.Parse(endpoint)
			check := func(where string, err error, wantIn string) {
				t.Helper()
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Setting != "sink.cloudsearch.endpoint" {
					t.Fatalf("%s: %v, want a *ConfigError for sink.cloudsearch.endpoint", where, err)
				}
				if msg := err.Error(); !strings.Contains(msg, wantIn) || !strings.Contains(msg, "plain http") || !strings.Contains(msg, "use https://"+u.Host) {
					t.Errorf("%s: %q, want a message naming %s, plain http and https://%s", where, msg, wantIn, u.Host)
				}
			}
			check("Validate", testConfig(endpoint).Validate(), "sink.cloudsearch.endpoint")
			_, err := New(context.Background(), testConfig(""), WithGetenv(envOf(map[string]string{EnvEndpoint: endpoint, EnvKey: testKey})))
			check("New with "+EnvEndpoint, err, EnvEndpoint)
		})
	}
	for _, endpoint := range []string{"http://127.0.0.1:8700", "http://localhost:8700", "http://[::1]:8700", "https://x.search.windows.net"} {
		if err := testConfig(endpoint).Validate(); err != nil {
			t.Errorf("Validate of %s: %v", endpoint, err)
		}
	}
}

// TestHiddenKeyNotAFieldName checks that a hiddenFieldKeys entry that
// cannot be a field name ("doc-id") is a *ConfigError naming the setting
// and the field it most likely means, found by Validate before any
// request: such a key becomes a field of its own (TestStrayHiddenKeyWarns),
// and the service refuses to create an index with it.
func TestHiddenKeyNotAFieldName(t *testing.T) {
	for key, want := range map[string]string{
		"doc-id":   `did you mean "doc_id"? name one of the fields Sluice writes: id, chunk, embedding, metadata, doc_id`,
		"my field": "name one of the fields Sluice writes: id, chunk, embedding, metadata, doc_id",
		"1chunk":   `did you mean "chunk"?`,
	} {
		c := testConfig("https://x.search.windows.net")
		c.HiddenFieldKeys = []string{"chunk", key}
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Setting != "sink.cloudsearch.hiddenFieldKeys" ||
			!strings.Contains(err.Error(), strconv.Quote(key)+" is not a valid field name") || !strings.Contains(err.Error(), want) {
			t.Errorf("hiddenFieldKeys %q: Validate() = %v; want a *ConfigError for sink.cloudsearch.hiddenFieldKeys naming the key and %q", key, err, want)
		}
	}
	c := testConfig("https://x.search.windows.net")
	c.HiddenFieldKeys = []string{"chunk", "secret_notes"}
	if err := c.Validate(); err != nil {
		t.Errorf("hiddenFieldKeys of valid names: %v", err)
	}
}
