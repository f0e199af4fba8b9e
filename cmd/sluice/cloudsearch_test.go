package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

const specDir = "../../../shared/azure-search-spec/2024-07-01"

// TestCloudSearchEndToEnd runs the CLI against the strict Cloud AI Search
// test server, which validates every request body against the official
// 2024-07-01 schemas: run creates the index and ingests, query works in all
// four modes with EQ and IN filters on STRING, INT32 and COLLECTION fields,
// delete removes exactly one document (one whose id has a quote), and get
// pages past 1000 nodes.
func TestCloudSearchEndToEnd(t *testing.T) {
	if _, err := os.Stat(specDir); err != nil {
		missing := t.Skipf
		if testenv.InCI() {
			missing = t.Fatalf // CI always has the shared folder: a skip would hide the contract test
		}
		missing("official REST definitions not found at %s (the shared folder beside the repository): %v", specDir, err)
	}
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key", SpecDir: specDir, RecordLimit: -1})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	dir := t.TempDir()
	files := map[string]string{
		"guides/install.md":  "Installing the quartz flux capacitor takes patience and a steady hand.",
		"guides/upgrade.md":  "Upgrading requires draining the pelican queue before anything else.",
		"notes/O'Brien.md":   "Notes by O'Brien about harbour seals and their migration.",
		"notes/shopping.txt": "Milk, bread, and a capacitor for the radio.",
	}
	for i := range 1050 {
		files[fmt.Sprintf("bulk/%04d.txt", i)] = fmt.Sprintf("Bulk note number %d.", i)
	}
	writeFiles(t, filepath.Join(dir, "corpus"), files)
	config := fmt.Sprintf(`
source:
  include: ["**/*.md", "**/*.txt"]
  metadata:
    - match: "guides/**"
      set: {tags: [guide, howto], level: 2}
    - match: "notes/**"
      set: {tags: [note], level: 1}
embedder: {dimensions: 64, batchSize: 200}
sink:
  type: cloudsearch
  cloudsearch:
    endpoint: %s
    indexName: sluice-e2e
    indexManagement: CreateIfNotExists
    embeddingDimensionality: 64
    vectorAlgorithmType: hnsw
    compressionType: scalarQuantization
    filterableMetadataFieldKeys:
      file_name: [file_name, STRING]
      level: [level, INT32]
      tags: [tags, COLLECTION]
`, endpoint)
	writeFiles(t, dir, map[string]string{"sluice.yaml": config})

	if out, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, ok := srv.Index("sluice-e2e"); !ok {
		t.Fatal("run did not create the index")
	}
	for _, r := range srv.Requests() {
		if r.Status == 400 {
			t.Fatalf("the server rejected a request body: %s %s", r.Method, r.Path)
		}
	}

	tests := []struct {
		name    string
		args    []string
		wantDoc string
		wantN   int // number of results, if > 0
	}{
		{"vector", []string{"quartz flux capacitor", "--mode", "vector"}, "guides/install.md", 0},
		{"sparse", []string{"quartz flux capacitor", "--mode", "sparse"}, "guides/install.md", 0},
		{"hybrid", []string{"quartz flux capacitor", "--mode", "hybrid"}, "guides/install.md", 0},
		{"semantic hybrid", []string{"quartz flux capacitor", "--mode", "semantic_hybrid"}, "guides/install.md", 0},
		{"EQ on STRING", []string{"capacitor", "--mode", "sparse", "--filter", "file_name=shopping.txt"}, "notes/shopping.txt", 1},
		{"EQ on STRING with a quote", []string{"seals", "--mode", "hybrid", "--filter", "file_name=O'Brien.md"}, "notes/O'Brien.md", 1},
		{"EQ on INT32", []string{"capacitor", "--mode", "sparse", "--filter", "level=1"}, "notes/shopping.txt", 1},
		{"IN on INT32", []string{"capacitor", "--mode", "sparse", "--filter", "level=in:1,2", "--top-k", "10"}, "notes/shopping.txt", 2},
		{"EQ on COLLECTION", []string{"pelican queue", "--mode", "hybrid", "--filter", "tags=howto"}, "guides/upgrade.md", 0},
		{"IN on COLLECTION", []string{"capacitor", "--mode", "sparse", "--filter", "tags=in:note,none"}, "notes/shopping.txt", 1},
		{"AND of filters", []string{"capacitor", "--mode", "sparse", "--filter", "tags=guide", "--filter", "level=2"}, "guides/install.md", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := sluice(t, "", append(append([]string{"query"}, tt.args...), "--json")...)
			lines := jsonLines(t, out)
			if code != 0 || len(lines) == 0 || lines[0]["doc_id"] != tt.wantDoc {
				t.Fatalf("exit %d, stderr %q, results %v; want %s first", code, stderr, lines, tt.wantDoc)
			}
			if tt.wantN > 0 && len(lines) != tt.wantN {
				t.Errorf("%d results, want %d", len(lines), tt.wantN)
			}
		})
	}
	if _, stderr, code := sluice(t, "", "query", "capacitor", "--mode", "semantic_hybrid", "--top-k", "51"); code != exitUsage || !strings.Contains(stderr, "at most 50 results") || !strings.Contains(stderr, "--top-k is 51") {
		t.Errorf("semantic_hybrid --top-k 51: exit %d, %q; want exit 2 saying at most 50, naming --top-k", code, stderr)
	}
	if _, stderr, code := sluice(t, "", "query", "x", "--filter", "file_type=text/plain"); code == 0 || !strings.Contains(stderr, "file_type") {
		t.Errorf("a filter on a key missing from filterableMetadataFieldKeys must fail naming it: exit %d, %q", code, stderr)
	}

	out, _, code := sluice(t, "", "get", "--json")
	all := jsonLines(t, out)
	if code != 0 || len(all) != len(files) {
		t.Fatalf("get: exit %d, %d nodes, want %d (paging past 1000)", code, len(all), len(files))
	}
	out, stderr, code := sluice(t, "", "get", "--json", "--doc-id", "notes/O'Brien.md")
	if got := jsonLines(t, out); code != 0 || len(got) != 1 || got[0]["doc_id"] != "notes/O'Brien.md" {
		t.Errorf("get --doc-id notes/O'Brien.md: exit %d, stderr %q, nodes %v; want its one node", code, stderr, got)
	}
	if _, stderr, code := sluice(t, "", "delete", "--doc-id", "notes/O'Brien.md"); code != 0 {
		t.Fatalf("delete: %s", stderr)
	}
	out, _, _ = sluice(t, "", "get", "--json")
	after := jsonLines(t, out)
	if len(after) != len(all)-1 {
		t.Errorf("delete removed %d nodes, want 1", len(all)-len(after))
	}
	for _, n := range after {
		if n["doc_id"] == "notes/O'Brien.md" {
			t.Error("O'Brien.md still has nodes")
		}
	}
	// Incremental runs work the same on this sink: the deleted document is
	// ingested again, an edited one updated, a removed one deleted, and the
	// rest left alone.
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{"guides/upgrade.md": "Upgrading requires draining the pelican queue first. Then restart."})
	if err := os.Remove(filepath.Join(dir, "corpus", "notes", "shopping.txt")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = sluice(t, "", "run", "corpus", "--json")
	for _, want := range []string{`"files_added":1`, `"files_updated":1`, `"files_deleted":1`, fmt.Sprintf(`"files_unchanged":%d`, len(files)-3)} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("incremental run on cloudsearch: exit %d, want %s in %s %s", code, want, out, stderr)
		}
	}
	out, _, _ = sluice(t, "", "query", "pelican", "--mode", "sparse", "--json", "--top-k", "1")
	if lines := jsonLines(t, out); len(lines) != 1 || !strings.Contains(lines[0]["text"].(string), "restart") {
		t.Errorf("the edited document's new text is not searchable: %v", lines)
	}
	if docs := srv.Documents("sluice-e2e"); len(docs) != len(files)-1 {
		t.Errorf("index holds %d documents after the incremental run, want %d", len(docs), len(files)-1)
	}

	if out, stderr, code := sluice(t, "", "index", "stats", "--json"); code != 0 || !strings.Contains(out, `"dimensions":64`) {
		t.Errorf("index stats: exit %d, %s %s", code, out, stderr)
	}
	if out, stderr, code := sluice(t, "", "doctor"); code != 0 {
		t.Errorf("doctor: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestCloudSearchNoAnswerWarns runs `sluice index create` against an
// endpoint where nothing listens: each retry is a warning on stderr naming
// the endpoint, the cause, the attempt and the wait (never the key), and
// the command ends with exit 1 after maxRetries retries at most.
func TestCloudSearchNoAnswerWarns(t *testing.T) {
	const key = "cli-secret-key-0123456789"
	t.Setenv("CLOUD_AI_SEARCH_KEY", key)
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", "")
	t.Setenv("CLOUD_SEARCH_API_VERSION", "")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"sluice.yaml": `embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch: {endpoint: "http://127.0.0.1:1", indexName: docs, embeddingDimensionality: 16, maxRetries: 1}
`})
	_, stderr, code := sluice(t, dir, "index", "create")
	if code != exitFatal {
		t.Fatalf("exit %d, want %d\n%s", code, exitFatal, stderr)
	}
	warns := warnLines(stderr)
	if len(warns) != 1 || !strings.Contains(warns[0], "no answer from http://127.0.0.1:1: dial tcp 127.0.0.1:1: ") ||
		!strings.Contains(warns[0], "; retrying in") || !strings.Contains(warns[0], "(attempt 2 of 2)") {
		t.Errorf("warnings %q, want one naming the endpoint, the refusal and attempt 2 of 2\n%s", warns, stderr)
	}
	if !strings.Contains(stderr, "after 2 attempts") || strings.Contains(stderr, key) {
		t.Errorf("stderr should say how often the request was sent and never show the key:\n%s", stderr)
	}
}

// TestCloudSearchAPIVersionIsConfigError checks that a wrong API version,
// in CLOUD_SEARCH_API_VERSION or sink.cloudsearch.apiVersion, ends the
// command with exit 2 and a message naming the setting, the variable and
// the versions Sluice knows: before any request when it cannot be a
// published version, after the service's refusal when it is dated after
// every version Sluice knows.
func TestCloudSearchAPIVersionIsConfigError(t *testing.T) {
	tests := []struct {
		name, env, file string
		sent            bool // whether a request reached the service
		want            string
	}{
		{"variable", "1999-01-01", "", false, `CLOUD_SEARCH_API_VERSION holds "1999-01-01", which is not an API version that Cloud AI Search publishes`},
		{"setting", "", "1999-01-01", false, `sink.cloudsearch.apiVersion: "1999-01-01" is not an API version that Cloud AI Search publishes`},
		{"newer, refused by the service", "2099-01-01", "", true, `the service refused api-version "2099-01-01" (from CLOUD_SEARCH_API_VERSION)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
			t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
			t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", endpoint)
			t.Setenv("CLOUD_SEARCH_API_VERSION", tt.env)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"sluice.yaml": fmt.Sprintf(`embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch: {indexName: docs, embeddingDimensionality: 16, apiVersion: %q}
`, tt.file)})
			_, stderr, code := sluice(t, dir, "index", "create")
			if code != exitUsage {
				t.Fatalf("exit %d, want %d (configuration error)\n%s", code, exitUsage, stderr)
			}
			for _, w := range []string{tt.want, "sink.cloudsearch.apiVersion", "CLOUD_SEARCH_API_VERSION", "2024-07-01, 2025-09-01"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, ok := srv.Index("docs"); ok {
				t.Error("the index was created")
			}
			if got := len(srv.Requests()) > 0; got != tt.sent {
				t.Errorf("a request reached the service: %v, want %v", got, tt.sent)
			}
		})
	}
}

// TestDevserverSpecDir runs `sluice devserver search --spec-dir` with the
// folder above the official definitions, which it accepts (using the
// 2024-07-01 folder, which it names), and with a folder holding none,
// which is a usage error naming the flag and the folder it wants.
func TestDevserverSpecDir(t *testing.T) {
	if _, err := os.Stat(specDir); err != nil {
		missing := t.Skipf
		if testenv.InCI() {
			missing = t.Fatalf
		}
		missing("official REST definitions not found at %s: %v", specDir, err)
	}
	empty := t.TempDir()
	_, stderr, code := sluice(t, "", "devserver", "search", "--addr", "127.0.0.1:0", "--spec-dir", empty)
	if code != exitUsage || !strings.Contains(stderr, "--spec-dir: no Cloud AI Search REST definitions in "+empty) ||
		!strings.Contains(stderr, "azure-search-spec/2024-07-01), or the folder above it") || strings.Contains(stderr, "Options.SpecDir") {
		t.Errorf("--spec-dir %s: exit %d, %q; want exit 2 naming the flag and the folder it wants", empty, code, stderr)
	}

	parent := filepath.Dir(specDir)
	var stdout, errb watchBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"devserver", "search", "--addr", "127.0.0.1:0", "--spec-dir", parent}, &stdout, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	watchPoll(t, "the server's first line", func() bool { return strings.Contains(stdout.String(), "\n") || errb.String() != "" })
	if want := "request bodies validated against the REST definitions in " + filepath.Join(parent, "2024-07-01"); !strings.Contains(stdout.String(), want) {
		t.Errorf("--spec-dir %s: stdout %q, stderr %q; want %q", parent, stdout.String(), errb.String(), want)
	}
}
