package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// goTypeName matches what must never reach a user: Go type names and
// yaml.v3's own wording.
var goTypeName = regexp.MustCompile(`\b(main|reader|splitter|embedder|cloudsearch|local|watch|time)\.[A-Z]|!!|unmarshal|\[\]string|map\[`)

// runWithConfig runs `sluice args... --config FILE` in a temp folder with
// body as FILE.
func runWithConfig(t *testing.T, body string, args ...string) (string, string, int) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"c.yaml": body})
	return sluice(t, dir, append(args, "--config", filepath.Join(dir, "c.yaml"))...)
}

// TestWholeNumberSettings checks that a decimal in a whole-number setting
// is refused, naming the setting, its line and the value as written,
// instead of being truncated (100.9 read as 100, 1.5 reported as "1 is
// invalid"), by run and doctor alike.
func TestWholeNumberSettings(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"every decimal is listed",
			"splitter:\n  chunkSize: 100.9\n  chunkOverlap: 10.5\nembedder:\n  batchSize: 2.7\npipeline:\n  memoryBudgetMB: 1.99\n",
			[]string{
				"line 2: splitter.chunkSize is 100.9, which is not a whole number",
				"line 3: splitter.chunkOverlap is 10.5, which is not a whole number",
				"line 5: embedder.batchSize is 2.7, which is not a whole number",
				"line 7: pipeline.memoryBudgetMB is 1.99, which is not a whole number",
			}},
		{"the value is quoted as written", "splitter:\n  chunkSize: 1.5\n", []string{"line 2: splitter.chunkSize is 1.5, which is not a whole number"}},
		{"a whole number written as a decimal", "splitter: {chunkSize: 1e3}\n", []string{"splitter.chunkSize is 1e3, which is not a whole number; write it as 1000"}},
		{"a trailing .0", "embedder: {dimensions: 256.0}\n", []string{"embedder.dimensions is 256.0, which is not a whole number; write it as 256"}},
		{"nested section", "sink:\n  cloudsearch:\n    uploadBatchSize: 10.5\n", []string{"line 3: sink.cloudsearch.uploadBatchSize is 10.5, which is not a whole number"}},
		{"watch section", "watch: {maxBatch: 2.5}\n", []string{"watch.maxBatch is 2.5, which is not a whole number"}},
		{"negative decimal", "embedder: {maxRetries: -0.5}\n", []string{"embedder.maxRetries is -0.5, which is not a whole number"}},
		{"not a number", "splitter: {chunkSize: .nan}\n", []string{"splitter.chunkSize is .nan, which is not a whole number"}},
		{"beyond float64", "splitter: {chunkSize: 1e400}\n", []string{"splitter.chunkSize is 1e400, which is too large (at most 9223372036854775807)"}},
		{"below float64", "embedder: {maxRetries: -1e400}\n", []string{"embedder.maxRetries is -1e400, which is too small (at least -9223372036854775808)"}},
		{"a number beyond float64", "embedder: {pricePerMillionTokens: 1e400}\n", []string{"embedder.pricePerMillionTokens is 1e400, which is beyond the range of numbers (about ±1.8e308)"}},
		{"a quoted number stays a string", "embedder: {pricePerMillionTokens: \"1e400\"}\n", []string{`embedder.pricePerMillionTokens is "1e400", which is not a number`}},
		{"through a merge key", "defaults: &d {chunkSize: 2.5}\nsplitter:\n  <<: *d\n", []string{"line 1: splitter.chunkSize is 2.5, which is not a whole number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range [][]string{{"run", ".", "--dry-run"}, {"doctor"}} {
				stdout, stderr, code := runWithConfig(t, tt.yaml, cmd...)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want 2\nstdout %s\nstderr %s", cmd[0], code, stdout, stderr)
				}
				for _, w := range tt.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: stderr %q lacks %q", cmd[0], stderr, w)
					}
				}
				if strings.Contains(stderr, "is invalid") || strings.Contains(stdout, "valid") {
					t.Errorf("%s: the truncated value was used: stdout %q, stderr %q", cmd[0], stdout, stderr)
				}
			}
		})
	}
}

// TestWholeNumberSettingsAccepted checks the integer forms YAML allows and
// an empty value (the default stays).
func TestWholeNumberSettingsAccepted(t *testing.T) {
	tests := []struct {
		yaml                string
		chunkSize, overlap  int
		memoryBudgetMB, dim int
	}{
		{"splitter: {chunkSize: 0x200, chunkOverlap: 1_0}\n", 512, 10, 64, 1536},
		{"splitter: {chunkSize: +300, chunkOverlap: 0o17}\npipeline: {memoryBudgetMB: 128}\n", 300, 15, 128, 1536},
		{"splitter: {chunkSize: ~}\nembedder:\n  dimensions:\n", 1024, 200, 64, 1536},
		{"embedder: {dimensions: !!int 256}\n", 1024, 200, 64, 256},
		{"embedder: {dimensions: 0}\n", 1024, 200, 64, 1536}, // 0 means the default
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := loadConfig(path)
		if err != nil {
			t.Errorf("%q: %v", tt.yaml, err)
			continue
		}
		if cfg.Splitter.ChunkSize != tt.chunkSize || cfg.Splitter.ChunkOverlap != tt.overlap ||
			cfg.Pipeline.MemoryBudgetMB != tt.memoryBudgetMB || cfg.Embedder.Dimensions != tt.dim {
			t.Errorf("%q: chunkSize %d, chunkOverlap %d, memoryBudgetMB %d, dimensions %d; want %d, %d, %d, %d", tt.yaml,
				cfg.Splitter.ChunkSize, cfg.Splitter.ChunkOverlap, cfg.Pipeline.MemoryBudgetMB, cfg.Embedder.Dimensions,
				tt.chunkSize, tt.overlap, tt.memoryBudgetMB, tt.dim)
		}
	}
}

// TestExampleConfigsLoad checks that the kind checks accept every example
// configuration.
func TestExampleConfigsLoad(t *testing.T) {
	paths, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example configurations: %v", err)
	}
	for _, p := range paths {
		if filepath.Base(p) == "kubernetes-watch.yaml" {
			continue // Kubernetes objects; TestServiceExamples loads the ConfigMap's sluice.yaml
		}
		if _, _, err := loadConfig(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestWrongKindNamesTheSetting checks values of the wrong kind: each error
// names the setting and its line and says what the setting takes in the
// user's words, never with a Go type name, also when the value is a list
// or a mapping (which yaml.v3 does not quote) or too long to be quoted.
func TestWrongKindNamesTheSetting(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"list for a string", "source:\n  dir: [a, b]\n", "line 2: source.dir is a list, which is not a string"},
		{"mapping for a whole number", "splitter: {chunkSize: {a: 1}}\n", "line 1: splitter.chunkSize is a mapping, which is not a whole number"},
		{"number beyond 64 bits", "splitter: {chunkSize: 99999999999999999999}\n", "line 1: splitter.chunkSize is 99999999999999999999, which is too large (at most 9223372036854775807)"},
		{"number below 64 bits", "splitter:\n  chunkOverlap: -99999999999999999999\n", "line 2: splitter.chunkOverlap is -99999999999999999999, which is too small (at least -9223372036854775808)"},
		{"huge decimal", "embedder: {batchSize: 1.5e300}\n", "embedder.batchSize is 1.5e300, which is too large"},
		{"scalar for a section", "splitter: 5\n", "line 1: splitter is 5, which is not a mapping"},
		{"scalar for the file", "5\n", "line 1: the configuration is 5, which is not a mapping; write sections such as source: and splitter:"},
		{"list for the file", "- source\n", "line 1: the configuration is a list, which is not a mapping"},
		{"list for a list element", "source:\n  include:\n    - [a]\n", "line 3: source.include[0] is a list, which is not a string"},
		{"mapping for a list", "source: {include: {a: 1}}\n", "line 1: source.include is a mapping, which is not a list of strings"},
		{"string for a list", "source:\n  include: \"*.md\"\n", `line 2: source.include is "*.md", which is not a list of strings; write a list, even of one value: include: ["*.md"]`},
		{"number for a list", "source: {exclude: 5}\n", `line 1: source.exclude is 5, which is not a list of strings; write a list, even of one value: exclude: [5]`},
		{"scalar for a list of rules", "source: {metadata: 5}\n", "line 1: source.metadata is 5, which is not a list of mappings"},
		{"list for a duration", "embedder:\n  timeout: [1]\n", "line 2: embedder.timeout is a list, which is not a duration such as 500ms, 60s or 2m"},
		{"number for a duration", "embedder:\n  timeout: 5\n", "line 2: embedder.timeout is 5, which is not a duration such as 500ms, 60s or 2m"},
		{"string for a whole number", "watch: {maxBatch: many}\n", `line 1: watch.maxBatch is "many", which is not a whole number`},
		{"true for a whole number", "splitter: {chunkSize: true}\n", "line 1: splitter.chunkSize is true, which is not a whole number"},
		{"mapping for true or false", "embedder: {sendDimensions: {a: 1}}\n", "line 1: embedder.sendDimensions is a mapping, which is not true or false"},
		{"mapping for a string in a rule", "source:\n  metadata:\n    - match: {a: 1}\n", "line 3: source.metadata[0].match is a mapping, which is not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runWithConfig(t, tt.yaml, "run", ".", "--dry-run")
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q\nstdout %s", code, stderr, tt.want, stdout)
			}
			if m := goTypeName.FindString(stderr); m != "" {
				t.Errorf("stderr %q shows %q, a Go type or yaml.v3 wording", stderr, m)
			}
		})
	}
}

// friendlyOf decodes the file yml with yaml.v3 alone, which must refuse
// it, and returns friendlyYAMLError's rewording of its error.
func friendlyOf(t *testing.T, yml string) string {
	t.Helper()
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(yml))
	dec.KnownFields(true)
	err := dec.Decode(&cfg)
	if err == nil {
		t.Fatal("yaml.v3 accepted the file")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yml), &doc); err != nil {
		t.Fatal(err)
	}
	return friendlyYAMLError(err, &doc).Error()
}

// friendlyCase is a file that yaml.v3 alone refuses and the start of
// friendlyYAMLError's rewording.
type friendlyCase struct{ name, yaml, want string }

// testFriendly checks each case's rewording (see friendlyOf): it starts
// with want and shows no Go type name.
func testFriendly(t *testing.T, tests []friendlyCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := friendlyOf(t, tt.yaml)
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			if m := goTypeName.FindString(got); m != "" {
				t.Errorf("%q shows %q", got, m)
			}
		})
	}
}

// TestFriendlyYAMLError checks the rewording of what yaml.v3 itself
// refuses, for values that reach the decoder (the kind checks catch these
// first): each case decodes the file with yaml.v3 alone.
func TestFriendlyYAMLError(t *testing.T) {
	testFriendly(t, []friendlyCase{
		{"list into a string, unquoted", "source:\n  dir: [a, b]\n", "line 2: source.dir is a list, which is not a string"},
		{"mapping on a line of two mappings", "splitter: {chunkSize: {a: 1}}\n", "line 1: splitter.chunkSize is a mapping, which is not a whole number"},
		{"value cut short", "splitter: {chunkSize: 99999999999999999999}\n", "line 1: splitter.chunkSize is 99999999999999999999, which is not a whole number"},
		{"scalar into a section", "splitter: 5\n", "line 1: splitter is 5, which is not a mapping"},
		{"scalar into the file", "5\n", "line 1: the configuration is 5, which is not a mapping"},
		{"not a duration", "embedder:\n  timeout: abc\n", `line 2: embedder.timeout is "abc", which is not a duration such as 500ms, 60s or 2m`},
		{"unknown key", "splitter:\n  chunkSise: 10\n", `line 2: unknown setting "chunkSise" (in section splitter)`},
	})
	// A value whose setting is not found is described by its kind, still
	// without a Go type name.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("source: {}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	te := &yaml.TypeError{Errors: []string{"line 9: cannot unmarshal !!seq into pkg.Thing", "line 9: cannot unmarshal !!str `x` into []string"}}
	got := friendlyYAMLError(te, &doc).Error()
	want := `line 9: a value is a list, which is not a valid value for this setting; line 9: a value is "x", which is not a list of strings`
	if got != want {
		t.Errorf("setting not found:\n got %q\nwant %q", got, want)
	}
}

// TestUnknownSettingHint checks the hint of an unknown key: it names the
// example configuration that shows the key's section, and suggests the
// setting meant by a LlamaIndex option name (serviceApiVersion), a
// Python-style name (index_name) or another letter case, without
// accepting any of them.
func TestUnknownSettingHint(t *testing.T) {
	testFriendly(t, []friendlyCase{
		{"typo in a local section", "splitter:\n  chunkSise: 10\n",
			`line 2: unknown setting "chunkSise" (in section splitter); did you mean chunkSize? (see configs/local.yaml)`},
		{"typo in sink.cloudsearch", "sink:\n  cloudsearch:\n    indexNam: docs\n",
			`line 3: unknown setting "indexNam" (in section sink.cloudsearch); did you mean indexName? (see configs/cloudsearch.yaml)`},
		{"singular for plural", "embedder:\n  dimension: 256\n",
			`line 2: unknown setting "dimension" (in section embedder); did you mean dimensions? (see configs/local.yaml)`},
		{"too far from any setting", "splitter:\n  size: 10\n",
			`line 2: unknown setting "size" (in section splitter); check its spelling against configs/local.yaml`},
		{"short key, two slips", "sink:\n  tpe: local\n",
			`line 2: unknown setting "tpe" (in section sink); did you mean type? (see configs/local.yaml)`},
		{"LlamaIndex.TS serviceApiVersion", "sink:\n  type: cloudsearch\n  cloudsearch:\n    indexName: docs\n    serviceApiVersion: 2024-07-01\n",
			`line 5: unknown setting "serviceApiVersion" (in section sink.cloudsearch); did you mean apiVersion? (see configs/cloudsearch.yaml)`},
		{"Python semantic_configuration_name", "sink: {cloudsearch: {semantic_configuration_name: sem}}\n",
			`line 1: unknown setting "semantic_configuration_name" (in section sink.cloudsearch); did you mean semanticConfiguration? (see configs/cloudsearch.yaml)`},
		{"Python snake case", "sink:\n  cloudsearch:\n    vector_algorithm_type: hnsw\n",
			`line 3: unknown setting "vector_algorithm_type" (in section sink.cloudsearch); did you mean vectorAlgorithmType? (see configs/cloudsearch.yaml)`},
		{"letter case", "splitter:\n  ChunkSize: 10\n",
			`line 2: unknown setting "ChunkSize" (in section splitter); did you mean chunkSize? (see configs/local.yaml)`},
		{"embedder alias", "embedder:\n  embedBatchSize: 10\n",
			`line 2: unknown setting "embedBatchSize" (in section embedder); did you mean batchSize? (see configs/local.yaml)`},
		{"key in the file", "embedder:\n  apiKey: sk-x\n",
			`line 2: unknown setting "apiKey" (in section embedder); did you mean apiKeyEnv? It names the environment variable`},
		{"admin key in the file", "sink:\n  cloudsearch:\n    apiKey: Secr3tAdminKey\n",
			`line 3: unknown setting "apiKey" (in section sink.cloudsearch); did you mean keyEnv? It names the environment variable holding the admin key (CLOUD_AI_SEARCH_KEY by default)`},
		{"url of another vector store", "sink:\n  cloudsearch:\n    url: https://x.search.windows.net\n",
			`line 3: unknown setting "url" (in section sink.cloudsearch); did you mean endpoint? (see configs/cloudsearch.yaml)`},
		{"the seed's client option url", "embedder:\n  url: http://localhost:11434/v1\n",
			`line 2: unknown setting "url" (in section embedder); did you mean baseURL? (see configs/local.yaml)`},
		{"the seed's Settings.embedModel", "embedder:\n  embedModel: text-embedding-3-small\n",
			`line 2: unknown setting "embedModel" (in section embedder); did you mean model? LlamaIndex's Settings.embedModel is this whole section`},
		{"the seed's directoryPath", "source:\n  directoryPath: ./docs\n",
			`line 2: unknown setting "directoryPath" (in section source); did you mean dir? (see configs/local.yaml)`},
		{"Python input_dir", "source:\n  input_dir: ./docs\n",
			`line 2: unknown setting "input_dir" (in section source); did you mean dir? (see configs/local.yaml)`},
		{"alias of another section", "embedder:\n  serviceApiVersion: 2024-07-01\n",
			`line 2: unknown setting "serviceApiVersion" (in section embedder); check its spelling against configs/local.yaml`},
		{"top level", "sinks: {}\n", `line 1: unknown setting "sinks" (in section top level); did you mean sink? (see configs/local.yaml)`},
		{"top level, far", "output: {}\n", `line 1: unknown setting "output" (in section top level); check its spelling against configs/local.yaml`},
		{"through a merge key", "sink:\n  cloudsearch:\n    <<: {serviceApiVersion: x}\n",
			`line 3: unknown setting "serviceApiVersion" (in section sink.cloudsearch); check its spelling against configs/cloudsearch.yaml`},
	})
}

// TestUnknownSettingHintSameLine: two sections on one line (flow style)
// with the same unknown key each get the hint of their own section, not
// that of the first mapping on the line holding the key.
func TestUnknownSettingHintSameLine(t *testing.T) {
	got := friendlyOf(t, "{embedder: {index_name: x}, sink: {cloudsearch: {index_name: y}}}\n")
	for _, want := range []string{
		`line 1: unknown setting "index_name" (in section embedder); check its spelling against configs/local.yaml`,
		`line 1: unknown setting "index_name" (in section sink.cloudsearch); did you mean indexName? (see configs/cloudsearch.yaml)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("\n got %q\nwant it to hold %q", got, want)
		}
	}
}

// TestUnknownSettingAliasRefused checks, through the command, that an
// alias is refused with its suggestion rather than accepted: each setting
// has one spelling.
func TestUnknownSettingAliasRefused(t *testing.T) {
	stdout, stderr, code := runWithConfig(t, "sink:\n  type: cloudsearch\n  cloudsearch:\n    indexName: docs\n    serviceApiVersion: 2024-07-01\n", "doctor")
	want := `unknown setting "serviceApiVersion" (in section sink.cloudsearch); did you mean apiVersion? (see configs/cloudsearch.yaml)`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q\nstdout %s", code, stderr, want, stdout)
	}
}

// TestDurationBareNumber: a bare number for a duration setting, such as
// the seed's timeout: 60000 (milliseconds), is refused with the duration it
// would be as milliseconds.
func TestDurationBareNumber(t *testing.T) {
	tests := []struct {
		yaml string
		want string // "" = accepted
	}{
		{"embedder:\n  timeout: 60000\n", "line 2: embedder.timeout is 60000, which is not a duration such as 500ms, 60s or 2m (a bare number is not a duration: read as milliseconds, the seed's unit for timeout, 60000 is 60s)"},
		{"embedder:\n  timeout: 1500\n", "(a bare number is not a duration: read as milliseconds, the seed's unit for timeout, 1500 is 1.5s)"},
		{"embedder:\n  maxRetryAfter: 250\n", "line 2: embedder.maxRetryAfter is 250, which is not a duration such as 500ms, 60s or 2m (a bare number is not a duration; if it means milliseconds, write 250ms)"},
		{"watch:\n  debounce: 1500\n", "line 2: watch.debounce is 1500, which is not a duration such as 500ms, 60s or 2m (a bare number is not a duration; if it means milliseconds, write 1.5s)"},
		{"embedder:\n  timeout: 0\n", "timeout, 0 is 0s)"},
		{"embedder:\n  timeout: 1_000\n", "timeout, 1_000 is 1s)"},
		{"embedder:\n  timeout: 60000.0\n", "timeout, 60000.0 is 60s)"},
		{"embedder:\n  timeout: \"60000\"\n", `line 2: embedder.timeout is "60000", which is not a duration such as 500ms, 60s or 2m (a bare number is not a duration: read as milliseconds, the seed's unit for timeout, 60000 is 60s)`},
		{"embedder:\n  timeout: 1e30\n", "line 2: embedder.timeout is 1e30, which is not a duration such as 500ms, 60s or 2m (a bare number is not a duration)"},
		{"embedder:\n  timeout: .nan\n", "(a bare number is not a duration)"},
		{"embedder:\n  timeout: 60s\n", ""},
		{"embedder:\n  timeout: \"0\"\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			var c Config
			err := decodeConfig([]byte(tt.yaml), &c)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("decodeConfig() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("decodeConfig() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestSecondYAMLDocumentRefused: settings after a --- line would be
// ignored, so a second document is an error naming its line; an empty one
// (a trailing ---) is not.
func TestSecondYAMLDocumentRefused(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"splitter:\n  chunkSize: 300\n---\nsplitter:\n  chunkOverlap: 10\n", "line 4: a second YAML document"},
		{"splitter: {chunkSize: 300}\n---\n", ""},
		{"---\nsplitter: {chunkSize: 300}\n", ""},
		{"splitter: {chunkSize: 300}\n---\n---\nembedder: {dimensions: 8}\n", "line 4: a second YAML document"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := loadConfig(path)
		switch {
		case tt.want == "" && (err != nil || cfg.Splitter.ChunkSize != 300):
			t.Errorf("%q: chunkSize %d, %v; want 300 and no error", tt.yaml, cfg.Splitter.ChunkSize, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v; want an error with %q", tt.yaml, err, tt.want)
		}
	}
}

// TestZeroDimensionsIsTheDefault: embedder.dimensions 0 means 1536 for
// every command, so a second run over the store the first built works.
func TestZeroDimensionsIsTheDefault(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha beta.", "sluice.yaml": "embedder: {dimensions: 0}\n"})
	for _, args := range [][]string{{"run", "docs"}, {"run", "docs"}, {"query", "alpha"}, {"index", "validate"}} {
		if out, stderr, code := sluice(t, dir, args...); code != exitOK {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
}

// TestEmptyProviderIsTheDefault: embedder.provider "" runs the default
// hash embedder and is recorded as it, so the same embedder written
// either way reuses the index (it was refused as a model change).
func TestEmptyProviderIsTheDefault(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha beta.", "empty.yaml": "embedder: {provider: \"\"}\n", "hash.yaml": "embedder: {provider: hash}\n"})
	for _, args := range [][]string{{"run", "docs", "--config", "empty.yaml"}, {"run", "docs", "--config", "hash.yaml"}, {"run", "docs"}, {"run", "docs", "--config", "empty.yaml"}} {
		if out, stderr, code := sluice(t, dir, args...); code != exitOK {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
}

// TestNearestSetting: a slip suggests the one setting it is near; a key
// as near to two settings, or far from all, suggests none.
func TestNearestSetting(t *testing.T) {
	keys := []string{"maxBatch", "maxMatch", "debounce", "path"}
	tests := []struct{ key, want string }{
		{"debounse", "debounce"},
		{"DEBOUNCE_", "debounce"}, // folded before comparing
		{"maxCatch", ""},          // one edit from both maxBatch and maxMatch
		{"pth", "path"},
		{"pt", ""},   // two letters: no edit is a slip
		{"debt", ""}, // beyond two edits
		{"paths", "path"},
	}
	for _, tt := range tests {
		if got := nearestSetting(keys, foldKey(tt.key)); got != tt.want {
			t.Errorf("nearestSetting(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
