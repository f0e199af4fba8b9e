package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestCopiedAndRenamedFoldersAreNotEmbeddedAgain runs sluice run with an
// OpenAI-compatible embedder over a folder, a copy of it, and the original
// renamed, into the local store and into a Cloud AI Search index that the
// run creates (its vector field retrievable): the copy and the rename send
// the embeddings API nothing, and the summary says so. The dry run before
// the copy plans as much for the local store; for Cloud AI Search, which a
// dry run does not ask, it plans every chunk as embedded.
func TestCopiedAndRenamedFoldersAreNotEmbeddedAgain(t *testing.T) {
	for _, tt := range []struct {
		name       string
		sink       func(t *testing.T) string // the sink section of the configuration
		planCopies bool
	}{
		{"local store", func(*testing.T) string { return "" }, true},
		{"Cloud AI Search", func(t *testing.T) string {
			_, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
			t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
			return "sink: {type: cloudsearch, cloudsearch: {endpoint: \"" + endpoint + "\", indexName: docs, embeddingDimensionality: 16, indexManagement: CreateIfNotExists}}\n"
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testCopiedAndRenamedFolders(t, tt.sink(t), tt.planCopies)
		})
	}
}

func testCopiedAndRenamedFolders(t *testing.T, sinkYAML string, planCopies bool) {
	const key = "sk-copies-test"
	t.Setenv("SLUICE_COPIES_KEY", key)
	srv, url := embedtest.Start(t, embedtest.Options{Key: key, Dimensions: 16})
	dir := t.TempDir()
	files := map[string]string{
		"sluice.yaml": "splitter: {chunkSize: 32, chunkOverlap: 4}\n" +
			"embedder: {provider: openai, model: m, dimensions: 16, baseURL: \"" + url + "/v1\", apiKeyEnv: SLUICE_COPIES_KEY}\n" + sinkYAML,
	}
	for _, name := range []string{"a", "b", "c"} {
		files["docs/guide/"+name+".md"] = strings.Repeat("The "+name+" pelican dives for fish at dawn. It rests on the pier at noon. ", 6)
	}
	writeFiles(t, dir, files)
	report := func(args ...string) pipeline.Report {
		t.Helper()
		stdout, stderr, code := sluice(t, dir, append([]string{"run", "docs", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("run %v: exit %d: %s", args, code, stderr)
		}
		var r pipeline.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("run %v: %v: %s", args, err, stdout)
		}
		return r
	}
	first := report()
	if first.ChunksWritten < 6 || first.ChunksCopied != 0 || first.TokensEmbedded == 0 {
		t.Fatalf("first run: %d chunks written, %d copied, %d tokens; want several written, none copied", first.ChunksWritten, first.ChunksCopied, first.TokensEmbedded)
	}
	if err := os.CopyFS(filepath.Join(dir, "docs", "copy"), os.DirFS(filepath.Join(dir, "docs", "guide"))); err != nil {
		t.Fatal(err)
	}
	plan := report("--dry-run")
	switch {
	case planCopies && (plan.ChunksCopied != first.ChunksWritten || plan.ChunksPlanned != 0 || plan.TokensPlanned != 0):
		t.Errorf("dry run after the copy: %d copied, %d chunks and %d tokens planned; want %d copied, nothing planned",
			plan.ChunksCopied, plan.ChunksPlanned, plan.TokensPlanned, first.ChunksWritten)
	case !planCopies && (plan.ChunksCopied != 0 || plan.ChunksPlanned != first.ChunksWritten || plan.TokensPlanned != first.TokensEmbedded):
		t.Errorf("dry run after the copy: %d copied, %d chunks and %d tokens planned; want none copied, %d chunks and %d tokens planned",
			plan.ChunksCopied, plan.ChunksPlanned, plan.TokensPlanned, first.ChunksWritten, first.TokensEmbedded)
	}
	requests := srv.Stats().Requests
	copied := report()
	if err := os.Rename(filepath.Join(dir, "docs", "guide"), filepath.Join(dir, "docs", "renamed")); err != nil {
		t.Fatal(err)
	}
	renamed := report()
	for _, r := range []struct {
		name string
		rep  pipeline.Report
	}{{"copy", copied}, {"rename", renamed}} {
		if r.rep.ChunksWritten != first.ChunksWritten || r.rep.ChunksCopied != first.ChunksWritten || r.rep.TokensEmbedded != 0 {
			t.Errorf("%s: %d chunks written, %d copied, %d tokens embedded; want %d written and copied, 0 tokens",
				r.name, r.rep.ChunksWritten, r.rep.ChunksCopied, r.rep.TokensEmbedded, first.ChunksWritten)
		}
	}
	if renamed.FilesDeleted != 3 {
		t.Errorf("rename: %d files deleted, want 3", renamed.FilesDeleted)
	}
	if got := srv.Stats().Requests - requests; got != 0 {
		t.Errorf("the copy and the rename sent %d embedding requests, want none", got)
	}

	// The human summary names them.
	if err := os.CopyFS(filepath.Join(dir, "docs", "again"), os.DirFS(filepath.Join(dir, "docs", "copy"))); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := sluice(t, dir, "run", "docs")
	if want := "chunks written (" + strconv.Itoa(first.ChunksWritten) + " with the vector of a node of the same text)"; code != exitOK || !strings.Contains(stdout+stderr, want) {
		t.Errorf("exit %d, output %q; want it to say %q", code, stdout+stderr, want)
	}
}
