package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// sluice runs the command line in dir and returns stdout, stderr and the exit code.
func sluice(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeCloudProject writes, into a new folder it returns, two documents
// under docs/ and a sluice.yaml for the Cloud AI Search index indexName
// (16 dimensions, created by the first run); the endpoint and key come
// from the environment.
func writeCloudProject(t *testing.T, indexName string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha document about pelicans.\n",
		"docs/b.md": "Bravo document about herons.\n",
		"sluice.yaml": `embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch: {indexName: ` + indexName + `, indexManagement: CreateIfNotExists, embeddingDimensionality: 16}
`,
	})
	return dir
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestLocalYAMLIsTheDefault(t *testing.T) {
	cfg, _, err := loadConfig("../../configs/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Compare printed values: an empty list in YAML and a nil default are the same setting.
	if got, want := fmt.Sprintf("%+v", cfg), fmt.Sprintf("%+v", DefaultConfig()); got != want {
		t.Errorf("configs/local.yaml differs from DefaultConfig():\n got %+v\nwant %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("default config invalid: %v", err)
	}
}

func TestConfigErrorsNameTheSetting(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "splitter:\n  chunkSise: 10\n", `unknown setting "chunkSise" (in section splitter)`},
		{"overlap too large", "splitter:\n  chunkSize: 100\n  chunkOverlap: 100\n", "splitter.chunkOverlap"},
		{"bad sink type", "sink:\n  type: postgres\n", `sink.type is "postgres"`},
		{"sink type quoted as written", "sink:\n  type: Postgres\n", `sink.type is "Postgres"; use local or cloudsearch`},
		{"Azure AI Search's name as the sink type", "sink:\n  type: AzureAISearch\n",
			`sink.type is "AzureAISearch"; for Azure AI Search (the Cloud AI Search vector store) write cloudsearch`},
		{"provider quoted as written", "embedder:\n  provider: AzureOpenAI\n",
			`embedder.provider: "AzureOpenAI" is not a provider; for Azure OpenAI (LlamaIndex's AzureOpenAI) write azure-openai`},
		{"unknown provider quoted as written", "embedder:\n  provider: Cohere\n", `embedder.provider: "Cohere" is not a provider; use hash, openai`},
		{"bad glob", "source:\n  include: [\"[\"]\n", "source.include[0]"},
		{"not a file metadata key", "source: {excludeFileMetadata: [file_size, modified]}\n",
			`source.excludeFileMetadata[1]: "modified" is not a key of the file metadata; use file_path, file_name, file_type, file_size, creation_date, last_modified_date`},
		{"bad budget", "pipeline:\n  memoryBudgetMB: 0\n", "pipeline.memoryBudgetMB"},
		{"duration not a duration", "embedder:\n  timeout: abc\n", `line 2: embedder.timeout is "abc", which is not a duration`},
		{"number not a number", "splitter: {chunkSize: big}\n", `line 1: splitter.chunkSize is "big", which is not a whole number`},
		{"list not a list", "source:\n  dir: .\n  include: 5\n", `line 3: source.include is 5, which is not a list of strings; write a list, even of one value: include: [5]`},
		{"empty state path", "state:\n  path: \"\"\n", "state.path is empty"},
		{"rate limit below zero", "embedder:\n  requestsPerMinute: -1\n", "0 means unlimited"},
		{"split concurrency too large", "pipeline:\n  splitConcurrency: 1000000000000\n", "pipeline.splitConcurrency"},
		{"split concurrency just too large", "pipeline:\n  splitConcurrency: 1025\n", "c.yaml: pipeline.splitConcurrency is 1025; it must be between 1 and 1024"},
		{"batch size too large", "embedder:\n  batchSize: 9223372036854775807\n", "embedder.batchSize"},
		{"chunk above the provider's input cap", "splitter: {chunkSize: 16000}\nembedder: {provider: openai, model: text-embedding-3-small}\n",
			"splitter.chunkSize: 16000 is above embedder.maxTokensPerInput (8192)"},
		{"chunk above a lowered input cap", "embedder: {provider: azure-openai, endpoint: https://x.openai.azure.com, deployment: d, maxTokensPerInput: 512}\n",
			"splitter.chunkSize: 1024 is above embedder.maxTokensPerInput (512)"},
		{"chunk above a tokens-per-minute budget", "embedder: {provider: openai, model: text-embedding-3-small, tokensPerMinute: 10}\n",
			"splitter.chunkSize: 1024 is above embedder.tokensPerMinute (10)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := sluice(t, dir, "run", ".", "--config", path)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, tt.want)
			}
		})
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := sluice(t, dir, "index", "create"); code != exitOK { // a store to query
		t.Fatalf("index create: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"run", "a", "b"},
		{"run", "--no-such-flag"},
		{"query"},
		{"query", "x", "--mode", "fuzzy"},
		{"query", "x", "--filter", "novalue"},
		{"delete"},
		{"run", filepath.Join(dir, "missing")},
		{},
		{"bogus"},
		{"index"},
		{"index", "creat"},
		{"failed", "bogus"},
		{"devserver"},
		{"completion"},
		{"completion", "tcsh"},
		{"devserver", "search", "--fault-rate", "NaN"},
		{"devserver", "search", "--latency", "-1s"},
		{"devserver", "embeddings", "--fault-rate", "1.5"},
		{"devserver", "embeddings", "--token-latency", "-1ms"},
		{"devserver", "embeddings", "--dimensions", "0"},
		{"devserver", "embeddings", "--dimensions", "-5"},
		{"query", "x", "--mode", "semantic_hybrid"}, // the local store has no semantic ranker
		{"help", "bogus"},
		{"help", "index", "creat"},
	} {
		if _, stderr, code := sluice(t, dir, args...); code != exitUsage {
			t.Errorf("%v: exit %d (stderr %q), want 2", args, code, stderr)
		}
	}
}

// TestArgumentCounts checks that a command given too many or too few
// positional arguments exits 2 with a message that names the command, says
// what it takes and what it got, and shows its usage line, for every
// command that checks their number (cobra's own said only "accepts at most
// 1 arg(s), received 2").
func TestArgumentCounts(t *testing.T) {
	tests := []struct {
		args []string
		want string // all of stderr
	}{
		{[]string{"run", "docs", "extra"}, `sluice run takes at most 1 argument, got 2 ("docs", "extra"); usage: sluice run [DIR] [flags]`},
		{[]string{"watch", "a", "b"}, `sluice watch takes at most 1 argument, got 2 ("a", "b"); usage: sluice watch [DIR] [flags]`},
		{[]string{"bench", "a", "b", "c", "d"}, `sluice bench takes at most 1 argument, got 4 ("a", "b", "c", ...); usage: sluice bench [DIR] [flags]`},
		{[]string{"failed", "retry", "a", "b"}, `sluice failed retry takes at most 1 argument, got 2 ("a", "b"); usage: sluice failed retry [DIR] [flags]`},
		{[]string{"split"}, `sluice split needs at least 1 argument, got none; usage: sluice split FILE... [flags]`},
		{[]string{"split", "--json"}, `sluice split needs at least 1 argument, got none; usage: sluice split FILE... [flags]`},
		{[]string{"failed", "list", "x"}, `sluice failed list takes no arguments, got 1 ("x"); usage: sluice failed list [flags]`},
		{[]string{"get", "x"}, `sluice get takes no arguments, got 1 ("x"); usage: sluice get [flags]`},
		{[]string{"delete", "a.md"}, `sluice delete takes no arguments, got 1 ("a.md"); usage: sluice delete --doc-id REF_DOC_ID [flags]`},
		{[]string{"index", "create", "x"}, `sluice index create takes no arguments, got 1 ("x"); usage: sluice index create [flags]`},
		{[]string{"index", "validate", "x"}, `sluice index validate takes no arguments, got 1 ("x"); usage: sluice index validate [flags]`},
		{[]string{"index", "delete", "x"}, `sluice index delete takes no arguments, got 1 ("x"); usage: sluice index delete [flags]`},
		{[]string{"index", "stats", "x", "y"}, `sluice index stats takes no arguments, got 2 ("x", "y"); usage: sluice index stats [flags]`},
		{[]string{"doctor", "x"}, `sluice doctor takes no arguments, got 1 ("x"); usage: sluice doctor [flags]`},
		{[]string{"devserver", "search", "x"}, `sluice devserver search takes no arguments, got 1 ("x"); usage: sluice devserver search [flags]`},
		{[]string{"devserver", "embeddings", "x"}, `sluice devserver embeddings takes no arguments, got 1 ("x"); usage: sluice devserver embeddings [flags]`},
		{[]string{"version", "x"}, `sluice version takes no arguments, got 1 ("x"); usage: sluice version [flags]`},
		{[]string{"completion", "bash", "x"}, `sluice completion bash takes no arguments, got 1 ("x"); usage: sluice completion bash`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := sluice(t, dir, tt.args...)
			if want := "sluice: " + tt.want + "\n"; code != exitUsage || stderr != want {
				t.Errorf("exit %d, stderr %q; want exit 2, stderr %q", code, stderr, want)
			}
		})
	}
}

// TestHelpTopics: `sluice help` prints the help of the command it names
// and exits 0; a topic that names no command is a usage error that says so,
// not the parent's help with exit 0.
func TestHelpTopics(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args       []string
		code       int
		out, lacks string // in stdout, not in stdout
		stderr     string // all of stderr
	}{
		{[]string{"help"}, exitOK, "Available Commands:", "", ""},
		{[]string{"help", "index"}, exitOK, "sluice index [command]", "", ""},
		{[]string{"help", "index", "create"}, exitOK, "sluice index create [flags]", "Available Commands:", ""},
		{[]string{"help", "bogus"}, exitUsage, "", "Available Commands:",
			"sluice: unknown command \"bogus\" for \"sluice\"; the commands are bench, completion, delete, devserver, doctor, failed, get, index, query, run, split, version, watch\n"},
		{[]string{"help", "index", "creat"}, exitUsage, "", "Available Commands:", "sluice: unknown command \"creat\" for \"sluice index\"; did you mean \"create\"?\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := sluice(t, dir, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.out) || (tt.lacks != "" && strings.Contains(stdout, tt.lacks)) || stderr != tt.stderr {
				t.Errorf("exit %d, stdout %.200q, stderr %q; want exit %d, stdout with %q and without %q, stderr %q",
					code, stdout, stderr, tt.code, tt.out, tt.lacks, tt.stderr)
			}
		})
	}
}

func TestEmptyConfigKeepsDefaults(t *testing.T) {
	for _, body := range []string{"", "# only a comment\n", "---\n"} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := loadConfig(path)
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		if got, want := fmt.Sprintf("%+v", cfg), fmt.Sprintf("%+v", DefaultConfig()); got != want {
			t.Errorf("%q: config differs from the defaults:\n got %s\nwant %s", body, got, want)
		}
	}
}

// TestEnvironmentOverridesFile checks the precedence environment > file
// for the Cloud AI Search endpoint, key and API version: a variable that is
// set clears the file's setting, so the store reads the variable.
func TestEnvironmentOverridesFile(t *testing.T) {
	file := func() Config {
		c := DefaultConfig()
		c.Sink.CloudSearch.Endpoint = "https://file.search.windows.net"
		c.Sink.CloudSearch.Key = "file-key"
		c.Sink.CloudSearch.APIVersion = "2024-07-01"
		return c
	}
	tests := []struct {
		name                  string
		edit                  func(*Config)
		env                   map[string]string
		endpoint, key, apiVer string
	}{
		{"no variables: the file wins", nil, nil, "https://file.search.windows.net", "file-key", "2024-07-01"},
		{"default variables", nil,
			map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": "https://env.search.windows.net", "CLOUD_AI_SEARCH_KEY": "env-key", "CLOUD_SEARCH_API_VERSION": "2024-09-01-preview"},
			"", "", ""},
		{"renamed variables", func(c *Config) { c.Sink.CloudSearch.EndpointEnv, c.Sink.CloudSearch.KeyEnv = "MY_EP", "MY_KEY" },
			map[string]string{"MY_EP": "https://env.search.windows.net", "CLOUD_AI_SEARCH_KEY": "ignored", "MY_KEY": "env-key"},
			"", "", "2024-07-01"},
		{"empty variables do not count", nil, map[string]string{"CLOUD_AI_SEARCH_ENDPOINT": ""}, "https://file.search.windows.net", "file-key", "2024-07-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := file()
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			applyEnv(&cfg, func(k string) string { return tt.env[k] })
			cs := cfg.Sink.CloudSearch
			if cs.Endpoint != tt.endpoint || cs.Key != tt.key || cs.APIVersion != tt.apiVer {
				t.Errorf("endpoint %q, key %q, apiVersion %q; want %q, %q, %q", cs.Endpoint, cs.Key, cs.APIVersion, tt.endpoint, tt.key, tt.apiVer)
			}
		})
	}
}

func TestDoctorMissingKeyExits2(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLUICE_TEST_ABSENT_KEY", "")
	path := filepath.Join(dir, "c.yaml")
	cfg := "embedder: {provider: openai, model: text-embedding-3-small, apiKeyEnv: SLUICE_TEST_ABSENT_KEY}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := sluice(t, dir, "doctor", "--config", path)
	if code != exitUsage || !strings.Contains(stdout, "SLUICE_TEST_ABSENT_KEY") {
		t.Errorf("exit %d, stdout %q; want exit 2 naming the variable", code, stdout)
	}
}

// TestEndToEnd is the acceptance scenario on a temp folder: good
// files land, each bad one is listed with its reason, exit code 3; queries
// find a file's chunk first; get lists every node; delete removes exactly
// one document.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	files := map[string]string{
		"guide/install.md":  "# Installing\n\nRun the installer and then configure the quartz flux capacitor carefully.\n",
		"guide/usage.md":    "# Usage\n\nStart the service, then watch the logs for the word ready.\n",
		"notes/o'brien.txt": "Notes by O'Brien about pelican migration and harbour seals.\n",
		"empty.md":          "",
		"binary.md":         "PK\x03\x04\x00\x00binary",
		"latin1.txt":        "caf\xe9 au lait",
	}
	for i := range 30 {
		files["bulk/doc"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"] = strings.Repeat("Filler sentence about nothing in particular. ", 40)
	}
	writeFiles(t, corpus, files)
	// The default include reads *.md only; this corpus has plain text too.
	writeFiles(t, dir, map[string]string{"sluice.yaml": "source: {include: [\"**/*.md\", \"**/*.txt\"]}\n"})
	// An unreadable file proper, when not running as root.
	if os.Geteuid() != 0 {
		p := filepath.Join(corpus, "secret.md")
		writeFiles(t, corpus, map[string]string{"secret.md": "secret"})
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}

	stdout, stderr, code := sluice(t, dir, "run", "corpus", "--json", "--report", "report.json")
	if code != exitPartial {
		t.Fatalf("run: exit %d, want 3\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var rep struct {
		FilesSeen, FilesIngested, FilesFailed int
		Failures                              []struct{ Path, Error string }
		ChunksWritten                         int `json:"chunks_written"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, f := range rep.Failures {
		failed[f.Path] = f.Error
	}
	for _, bad := range []string{"empty.md", "binary.md", "latin1.txt"} {
		if failed[bad] == "" {
			t.Errorf("%s not listed in failures %v", bad, failed)
		}
	}
	if _, ok := failed["guide/install.md"]; ok {
		t.Errorf("good file listed as failed: %v", failed)
	}
	if !strings.Contains(stdout, `"files_ingested":33`) {
		t.Errorf("run --json: %s", stdout)
	}

	for _, mode := range []string{"sparse", "hybrid", "vector"} {
		out, stderr, code := sluice(t, dir, "query", "quartz flux capacitor", "--mode", mode, "--json")
		lines := jsonLines(t, out)
		if code != 0 || len(lines) == 0 || lines[0]["doc_id"] != "guide/install.md" {
			t.Errorf("query --mode %s: exit %d, stderr %q, first %v", mode, code, stderr, lines)
		}
	}
	out, _, _ := sluice(t, dir, "query", "pelican", "--mode", "sparse", "--json", "--filter", "file_name=o'brien.txt")
	if lines := jsonLines(t, out); len(lines) != 1 || lines[0]["doc_id"] != "notes/o'brien.txt" {
		t.Errorf("filtered query: %v", lines)
	}
	if _, stderr, code := sluice(t, dir, "query", "x", "--mode", "semantic_hybrid"); code != exitUsage || !strings.Contains(stderr, "semantic") {
		t.Errorf("semantic_hybrid on the local store: exit %d, %q", code, stderr)
	}

	out, _, code = sluice(t, dir, "get", "--json")
	all := jsonLines(t, out)
	if code != 0 || len(all) != rep.ChunksWritten {
		t.Fatalf("get: exit %d, %d nodes, want %d", code, len(all), rep.ChunksWritten)
	}
	for _, k := range []string{"id", "doc_id", "score", "text", "metadata"} {
		if _, ok := all[0][k]; !ok {
			t.Errorf("get --json line lacks %q: %v", k, all[0])
		}
	}
	perDoc := map[any]int{}
	for _, n := range all {
		perDoc[n["doc_id"]]++
	}

	if _, stderr, code := sluice(t, dir, "delete", "--doc-id", "notes/o'brien.txt"); code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	out, _, _ = sluice(t, dir, "get", "--json")
	after := jsonLines(t, out)
	if len(after) != len(all)-perDoc["notes/o'brien.txt"] {
		t.Errorf("delete removed %d nodes, want %d", len(all)-len(after), perDoc["notes/o'brien.txt"])
	}
	for _, n := range after {
		if n["doc_id"] == "notes/o'brien.txt" {
			t.Fatal("deleted document still has nodes")
		}
	}
	// The file is still there: the next run ingests it again.
	out, stderr, _ = sluice(t, dir, "run", "corpus", "--json")
	if !strings.Contains(out, `"files_added":1`) {
		t.Errorf("run after delete did not re-ingest the deleted document: %s %s", out, stderr)
	}
}

func TestSplitJSON(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("One sentence here. Another one thére, with a comma 🙂. ", 60)
	writeFiles(t, dir, map[string]string{"a.txt": text, "b.txt": "short"})
	out, stderr, code := sluice(t, dir, "split", "a.txt", "b.txt", "--chunk-size", "64", "--chunk-overlap", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := jsonLines(t, out)
	if len(lines) < 3 || lines[len(lines)-1]["file"] != "b.txt" {
		t.Fatalf("split output: %d lines", len(lines))
	}
	for _, l := range lines {
		if l["file"] != "a.txt" {
			continue
		}
		start, end := int(l["start"].(float64)), int(l["end"].(float64))
		if text[start:end] != l["text"] || l["tokens"].(float64) > 64 {
			t.Errorf("chunk %v does not slice the file or exceeds 64 tokens", l["index"])
		}
		units := utf16.Encode([]rune(text))
		cs, ce := int(l["start_char_idx"].(float64)), int(l["end_char_idx"].(float64))
		if cs > ce || ce > len(units) || string(utf16.Decode(units[cs:ce])) != l["text"] {
			t.Errorf("chunk %v: start_char_idx %d, end_char_idx %d do not slice the text in UTF-16 code units", l["index"], cs, ce)
		}
	}
}

// TestConfigNamesAnyCase: sink.type and embedder.provider are names whose
// letter case does not matter.
func TestConfigNamesAnyCase(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha document about pelicans.\n",
		"c.yaml":    "sink: {type: Local}\nembedder: {provider: Hash}\n",
	})
	if _, stderr, code := sluice(t, dir, "run", "docs", "--config", "c.yaml"); code != exitOK {
		t.Fatalf("exit %d, stderr %q; want the run to take Local and Hash", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "index.db")); err != nil {
		t.Errorf("no local store: %v", err)
	}
}

// TestDoctorBeforeTheFirstRun: a local store that does not exist yet is
// not a failure (the first run creates it); one whose folder cannot be
// made (a file is in the way) is.
func TestDoctorBeforeTheFirstRun(t *testing.T) {
	tests := []struct {
		name, path string
		setup      func(t *testing.T, dir string)
		code       int
		want       string
	}{
		{"default path", ".sluice/index.db", nil, exitOK, "✓ local store: .sluice/index.db (sink.local.path) does not exist yet: the first `sluice run` creates it"},
		{"folders to make", "a/b/c/index.db", nil, exitOK, "does not exist yet: the first `sluice run` creates it"},
		{"a file in the way", "blocker/index.db", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"blocker": "not a folder"})
		}, 1, "✗ local store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			writeFiles(t, dir, map[string]string{"c.yaml": "sink: {local: {path: " + tt.path + "}}\n"})
			stdout, stderr, code := sluice(t, dir, "doctor", "--config", "c.yaml")
			if code != tt.code || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, tt.code, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, tt.path)); err == nil {
				t.Errorf("doctor created %s", tt.path)
			}
		})
	}
}

// TestDoctorChecksTheManifest: doctor compares the embedder the manifest
// says built the index with the configured one, as run does, and fails
// with exit 2 where run would refuse a change of model without --full.
func TestDoctorChecksTheManifest(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/a.md": "Alpha is the first.",
		"hash.yaml":   "embedder: {provider: hash, dimensions: 16}\n",
		"other.yaml":  "embedder: {provider: instant, dimensions: 16}\n",
	})
	if stdout, _, code := sluice(t, dir, "doctor", "--config", "hash.yaml"); code != exitOK || !strings.Contains(stdout, "✓ manifest: .sluice/state.db (state.path) does not exist yet") {
		t.Errorf("doctor before the first run: exit %d, %q", code, stdout)
	}
	if _, stderr, code := sluice(t, dir, "run", "corpus", "--config", "hash.yaml"); code != exitOK {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	if stdout, _, code := sluice(t, dir, "doctor", "--config", "hash.yaml"); code != exitOK || !strings.Contains(stdout, "✓ manifest: .sluice/state.db (state.path): the configured embedder is the one the index was built with") {
		t.Errorf("doctor with the same embedder: exit %d, %q", code, stdout)
	}
	stdout, _, code := sluice(t, dir, "doctor", "--config", "other.yaml")
	if code != exitUsage || !strings.Contains(stdout, "✗ manifest:") || !strings.Contains(stdout, "--full") {
		t.Errorf("doctor with another embedder: exit %d, %q; want exit %d and the manifest check failed, naming --full", code, stdout, exitUsage)
	}
	if _, _, code := sluice(t, dir, "run", "corpus", "--config", "other.yaml"); code != exitUsage {
		t.Errorf("run with another embedder: exit %d, want %d as doctor said", code, exitUsage)
	}
}

// TestRefusedRunWritesNothing: a run or a watch refused for a
// missing key or endpoint exits 2 naming the variable and leaves no state
// file or lock behind: nothing was started.
func TestRefusedRunWritesNothing(t *testing.T) {
	for _, v := range cloudSearchVars {
		unsetEnv(t, v)
	}
	t.Setenv("SLUICE_TEST_ABSENT_KEY", "")
	tests := []struct {
		name, config, want string
		args               []string
	}{
		{"embedder key", "embedder: {provider: openai, model: text-embedding-3-small, apiKeyEnv: SLUICE_TEST_ABSENT_KEY}\n", "SLUICE_TEST_ABSENT_KEY", []string{"run", "docs"}},
		{"search endpoint", "embedder: {dimensions: 16}\nsink: {type: cloudsearch, cloudsearch: {indexName: docs, embeddingDimensionality: 16}}\n", "CLOUD_AI_SEARCH_ENDPOINT", []string{"run", "docs"}},
		{"watch", "embedder: {provider: openai, model: text-embedding-3-small, apiKeyEnv: SLUICE_TEST_ABSENT_KEY}\n", "SLUICE_TEST_ABSENT_KEY", []string{"watch", "docs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha.\n", "sluice.yaml": tt.config})
			_, stderr, code := sluice(t, dir, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %s", code, stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ".sluice")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf(".sluice was created (%v): a refused run must write nothing", err)
			}
		})
	}
}

// TestDoctorNamesTheCheckOnce: a failed check's line names the check once,
// not again as its error's prefix ("cloudsearch: cloudsearch: ...").
func TestDoctorNamesTheCheckOnce(t *testing.T) {
	for _, v := range cloudSearchVars {
		unsetEnv(t, v)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"sluice.yaml": "embedder: {dimensions: 16}\nsink: {type: cloudsearch, cloudsearch: {indexName: docs, embeddingDimensionality: 16}}\n"})
	stdout, _, code := sluice(t, dir, "doctor")
	if code != exitUsage || !strings.Contains(stdout, "✗ cloudsearch: sink.cloudsearch.endpoint: is not set and CLOUD_AI_SEARCH_ENDPOINT is empty") ||
		strings.Contains(stdout, "cloudsearch: cloudsearch:") {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 2 and the check named once", code, stdout)
	}
}

// TestUnusedCloudSearchSettingsWarn: while sink.type is local, a
// sink.cloudsearch section the store would refuse is warned about, naming
// the setting; a sound one, without an index name yet, is not.
func TestUnusedCloudSearchSettingsWarn(t *testing.T) {
	tests := []struct {
		name, section, want string
	}{
		{"bad credential", "{credential: bogus}", `sink.cloudsearch is not used while sink.type is local, but the Cloud AI Search store would refuse it: cloudsearch: sink.cloudsearch.credential: unknown credential \"bogus\"`},
		{"sound, no index name", "{embeddingDimensionality: 1536, vectorAlgorithmType: hnsw}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha.\n", "sluice.yaml": "sink: {type: local, cloudsearch: " + tt.section + "}\n"})
			_, stderr, code := sluice(t, dir, "run", "docs", "--dry-run")
			switch {
			case code != 0:
				t.Errorf("exit %d, stderr %q; want 0: the section is not used", code, stderr)
			case tt.want == "" && stderr != "":
				t.Errorf("stderr %q; want nothing", stderr)
			case tt.want != "" && (!strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, tt.want)):
				t.Errorf("stderr %q; want a warning saying %q", stderr, tt.want)
			}
		})
	}
}
