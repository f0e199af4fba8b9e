package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
	"github.com/sluice-dev/sluice/sink/local"
)

// TestRunVerify deletes chunks from the local store behind the manifest's
// back: `run` trusts the manifest, `run --verify --dry-run` reports the
// missing chunks without writing, and `run --verify` writes them again
// and says so in the summary and the report.
func TestRunVerify(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/a.md": strings.Repeat("Alpha sentence with a few words. ", 300),
		"corpus/b.md": strings.Repeat("Beta sentence with other words. ", 300),
	})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	store, err := local.Open(t.Context(), local.Config{Path: filepath.Join(dir, ".sluice", "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	total, err := store.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	if err := store.NodeIDs(t.Context(), "a.md", func(ids []string) error {
		gone = append(gone, ids...)
		return nil
	}); err != nil || len(gone) < 3 {
		t.Fatalf("listing a.md's nodes: %v, %d ids", err, len(gone))
	}
	gone = gone[:2]
	if err := store.DeleteNodes(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	// A chunk of b.md that no run wrote, as another tool would add it.
	some, err := store.GetNodes(t.Context(), nil, nil, 1)
	if err != nil || len(some) != 1 {
		t.Fatalf("reading a node: %v", err)
	}
	intruder := sink.Node{ID: "intruder", RefDocID: "b.md", Text: "Written by another tool.", Embedding: some[0].Embedding}
	if _, err := store.Add(t.Context(), []sink.Node{intruder}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	type report struct {
		FilesUpdated  int `json:"files_updated"`
		ChunksWritten int `json:"chunks_written"`
		ChunksPlanned int `json:"chunks_planned"`
		Verify        *struct {
			NodesChecked  int `json:"nodes_checked"`
			NodesMissing  int `json:"nodes_missing"`
			Documents     int `json:"documents"`
			NodesUnlisted int `json:"nodes_unlisted"`
		} `json:"verify"`
	}
	runJSON := func(args ...string) report {
		t.Helper()
		stdout, stderr, code := sluice(t, dir, append([]string{"run", "corpus", "--json"}, args...)...)
		var rep report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
			t.Fatalf("run %v: exit %d, %v; stdout %q, stderr %q", args, code, err, stdout, stderr)
		}
		return rep
	}
	if rep := runJSON(); rep.FilesUpdated != 0 || rep.Verify != nil {
		t.Fatalf("run without --verify: %+v, want nothing updated and no verify report", rep)
	}
	rep := runJSON("--verify", "--dry-run")
	if rep.Verify == nil || rep.Verify.NodesChecked != total || rep.Verify.NodesMissing != 2 || rep.Verify.Documents != 1 || rep.Verify.NodesUnlisted != 1 || rep.ChunksPlanned != 2 {
		t.Fatalf("run --verify --dry-run: %+v, verify %+v; want %d checked, 2 missing in 1 file, 1 unlisted, 2 planned", rep, rep.Verify, total)
	}
	stdout, stderr, code := sluice(t, dir, "run", "corpus", "--verify")
	if code != 0 || !strings.Contains(stdout, "Verified the store: 2 of the "+plural(total, "chunk", "chunks")+" the manifest records were missing, in 1 file") ||
		!strings.Contains(stdout, "It also held 1 chunk of 1 file that the manifest did not list: those files were read again") {
		t.Fatalf("run --verify: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "missing from the store") || !strings.Contains(stderr, "a.md") || !strings.Contains(stderr, "first=[b.md]") {
		t.Errorf("run --verify logged no warnings naming a.md and b.md: %q", stderr)
	}
	store, err = local.Open(t.Context(), local.Config{Path: filepath.Join(dir, ".sluice", "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.Count(t.Context()); err != nil || n != total {
		t.Errorf("%d chunks stored after run --verify (%v), want the %d of a clean run", n, err, total)
	}
	store.Close()
	if rep := runJSON("--verify"); rep.Verify == nil || rep.Verify.NodesMissing != 0 || rep.Verify.NodesChecked != total || rep.ChunksWritten != 0 {
		t.Errorf("run --verify after the repair: %+v, verify %+v; want all %d chunks held, nothing written", rep, rep.Verify, total)
	}
	if stdout, _, _ := sluice(t, dir, "run", "corpus", "--verify"); !strings.Contains(stdout, "Verified the store: it holds all "+plural(total, "chunk", "chunks")) {
		t.Errorf("summary of a verify that found nothing missing: %q", stdout)
	}
	// A store file that is gone: the dry run plans every chunk again and
	// creates nothing.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, ".sluice", "index.db"+suffix))
	}
	rep = runJSON("--verify", "--dry-run")
	if rep.Verify == nil || rep.Verify.NodesMissing != total || rep.Verify.Documents != 2 || rep.ChunksPlanned != total {
		t.Errorf("run --verify --dry-run without a store file: %+v, verify %+v; want all %d chunks missing and planned", rep, rep.Verify, total)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "index.db")); !os.IsNotExist(err) {
		t.Errorf("the dry run created the store (%v)", err)
	}
}

// ingestedCloudCorpus starts a Cloud AI Search test server and runs `sluice
// run corpus` over three one-chunk documents (a.md, b.md, c.md) into its
// index; it returns the server, its endpoint and the project folder.
func ingestedCloudCorpus(t *testing.T, index string) (*searchtest.Server, string, string) {
	t.Helper()
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key", SpecDir: specDir})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{
		"a.md": "Alpha is the first document of the folder.",
		"b.md": "Beta is the second one.",
		"c.md": "Gamma is the third and last.",
	})
	writeFiles(t, dir, map[string]string{"sluice.yaml": fmt.Sprintf(`
embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch: {endpoint: %s, indexName: %s, indexManagement: CreateIfNotExists, embeddingDimensionality: 16}
`, endpoint, index)})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	return srv, endpoint, dir
}

// TestRunVerifyCloudSearch deletes one document's nodes from a Cloud AI
// Search index behind the manifest's back (as a delete in the portal
// does), and adds one to another: `run --verify --dry-run` plans to write
// the first again, changing nothing, and `run --verify` writes it again
// and deletes the other; the store then holds what a clean run writes.
func TestRunVerifyCloudSearch(t *testing.T) {
	srv, endpoint, dir := ingestedCloudCorpus(t, "verify")
	store, err := cloudsearch.New(t.Context(), cloudsearch.Config{Endpoint: endpoint, IndexName: "verify", EmbeddingDimensionality: 16})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	if err := store.NodeIDs(t.Context(), "b.md", func(ids []string) error { gone = append(gone, ids...); return nil }); err != nil || len(gone) != 1 {
		t.Fatalf("b.md's nodes: %v, %v", gone, err)
	}
	if err := store.DeleteNodes(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	vec := make([]float32, 16)
	vec[0] = 1
	intruder := sink.Node{ID: "intruder", RefDocID: "c.md", Text: "Written by another tool.", Embedding: vec}
	if _, err := store.Add(t.Context(), []sink.Node{intruder}); err != nil { // as another tool would
		t.Fatal(err)
	}
	if n := len(srv.Documents("verify")); n != 3 {
		t.Fatalf("%d documents in the index, want 3", n)
	}
	for _, tt := range []struct {
		args []string
		docs int // in the index after the run
	}{{[]string{"--dry-run"}, 3}, {nil, 3}} {
		stdout, stderr, code := sluice(t, dir, append([]string{"run", "corpus", "--verify", "--json"}, tt.args...)...)
		if code != 0 || !strings.Contains(stdout, `"verify":{"nodes_checked":3,"nodes_missing":1,"documents":1,"nodes_unlisted":1,"documents_unlisted":1}`) {
			t.Errorf("run --verify %v: exit %d, stdout %s, stderr %s", tt.args, code, stdout, stderr)
		}
		if n := len(srv.Documents("verify")); n != tt.docs {
			t.Errorf("%d documents in the index after run --verify %v, want %d", n, tt.args, tt.docs)
		}
	}
	for _, d := range srv.Documents("verify") {
		if d["id"] == "intruder" {
			t.Error("the intruder is still in the index")
		}
	}
}

// TestCloudSearchRemovesDocumentsTheManifestForgot: after the state file is
// lost, a file removed from the folder leaves nodes in a Cloud AI Search
// index that no manifest record points to; `run --verify` and `run --full`
// list the index's documents and delete them (`--dry-run` plans it), as
// they do on the local store. A plain run cannot know of them.
func TestCloudSearchRemovesDocumentsTheManifestForgot(t *testing.T) {
	for _, flag := range []string{"--verify", "--full"} {
		t.Run(flag, func(t *testing.T) {
			srv, _, dir := ingestedCloudCorpus(t, "forgot")
			if err := os.RemoveAll(filepath.Join(dir, ".sluice")); err != nil { // the manifest is lost
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "corpus", "b.md")); err != nil {
				t.Fatal(err)
			}
			docIDs := func() []string {
				var ids []string
				for _, d := range srv.Documents("forgot") {
					ids = append(ids, d["doc_id"].(string))
				}
				slices.Sort(ids)
				return ids
			}
			for _, tt := range []struct {
				args []string
				want []string // doc ids in the index after the run
			}{
				{nil, []string{"a.md", "b.md", "c.md"}},
				{[]string{flag, "--dry-run"}, []string{"a.md", "b.md", "c.md"}},
				{[]string{flag}, []string{"a.md", "c.md"}},
			} {
				stdout, stderr, code := sluice(t, dir, append([]string{"run", "corpus", "--json"}, tt.args...)...)
				deleted := 0
				if len(tt.args) > 0 {
					deleted = 1
				}
				if code != 0 || !strings.Contains(stdout, fmt.Sprintf(`"files_deleted":%d`, deleted)) {
					t.Errorf("run %v: exit %d, want %d deleted; stdout %s, stderr %s", tt.args, code, deleted, stdout, stderr)
				}
				if got := docIDs(); !slices.Equal(got, tt.want) {
					t.Errorf("index after run %v holds %v, want %v", tt.args, got, tt.want)
				}
				if warned := strings.Contains(stderr, "the manifest does not know, whose files are not in the folder") && strings.Contains(stderr, "first=b.md"); warned != (deleted == 1) {
					t.Errorf("run %v: warned %v about b.md, want %v; stderr %s", tt.args, warned, deleted == 1, stderr)
				}
			}
		})
	}
}

// TestWatchVerify: `sluice watch --verify` writes again, in its first
// round, the chunks deleted from the local store behind the manifest's
// back, and says so in the round's log line.
func TestWatchVerify(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": strings.Repeat("Alpha sentence with a few words. ", 300)})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	store, err := local.Open(t.Context(), local.Config{Path: filepath.Join(dir, ".sluice", "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	if err := store.NodeIDs(t.Context(), "a.md", func(ids []string) error { gone = append(gone, ids...); return nil }); err != nil || len(gone) < 2 {
		t.Fatalf("a.md's nodes: %v, %v", gone, err)
	}
	if err := store.DeleteNodes(t.Context(), gone[:1]); err != nil {
		t.Fatal(err)
	}
	store.Close()

	t.Chdir(dir)
	w := runWatch(t, "corpus", "--verify")
	watchPoll(t, "the first round's log line", func() bool { return strings.Contains(w.stderr.String(), "round=initial") })
	if line := w.stderr.String(); !strings.Contains(line, "verified="+fmt.Sprint(len(gone))+" missing=1") || !strings.Contains(line, "chunks=1") {
		t.Errorf("the first round did not report the missing chunk written again:\n%s", line)
	}
}

// TestDryRunVerifyDeletedIndex: with indexManagement CreateIfNotExists, a
// dry run with --verify over an index deleted behind the manifest's back
// plans every chunk again, as the run then writes them (the index created
// again, empty), and creates nothing itself; with ValidateIndex it fails as
// the run would, naming the remedy.
func TestDryRunVerifyDeletedIndex(t *testing.T) {
	for _, tt := range []struct {
		mode     string
		wantCode int
	}{{"CreateIfNotExists", exitOK}, {"ValidateIndex", exitFatal}} {
		t.Run(tt.mode, func(t *testing.T) {
			srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key", SpecDir: specDir})
			t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
			dir := t.TempDir()
			writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{"a.md": "Alpha is the first.", "b.md": "Beta is the second."})
			config := func(mode string) string {
				return fmt.Sprintf("embedder: {dimensions: 16}\nsink:\n  type: cloudsearch\n  cloudsearch: {endpoint: %s, indexName: verify, indexManagement: %s, embeddingDimensionality: 16}\n", endpoint, mode)
			}
			writeFiles(t, dir, map[string]string{"sluice.yaml": config("CreateIfNotExists")})
			if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
				t.Fatalf("run: exit %d, %s", code, stderr)
			}
			writeFiles(t, dir, map[string]string{"sluice.yaml": config(tt.mode)})
			store, err := cloudsearch.New(t.Context(), cloudsearch.Config{Endpoint: endpoint, IndexName: "verify", EmbeddingDimensionality: 16})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.DeleteIndex(t.Context()); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := sluice(t, dir, "run", "corpus", "--dry-run", "--verify", "--json")
			if code != tt.wantCode {
				t.Fatalf("dry run --verify: exit %d, want %d; stdout %s, stderr %s", code, tt.wantCode, stdout, stderr)
			}
			if _, ok := srv.Index("verify"); ok {
				t.Error("the dry run created the index")
			}
			if tt.wantCode != exitOK {
				if !strings.Contains(stderr, "sluice index create") {
					t.Errorf("the error gives no remedy: %s", stderr)
				}
				return
			}
			if !strings.Contains(stdout, `"chunks_planned":2`) || !strings.Contains(stdout, `"verify":{"nodes_checked":2,"nodes_missing":2,"documents":2,"nodes_unlisted":0,"documents_unlisted":0}`) {
				t.Errorf("dry run --verify: %s", stdout)
			}
		})
	}
}

// TestDryRunVerifyWithoutManifest: with the state file lost, `run --verify
// --dry-run` plans what `run --verify` does: every document new, and the
// removal of the documents the store holds whose files are gone, as
// `--full --dry-run` plans it.
func TestDryRunVerifyWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": "Alpha is the first.", "corpus/b.md": "Beta is the second."})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(dir, ".sluice", "state.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "corpus", "b.md")); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--verify", "--full"} {
		stdout, stderr, code := sluice(t, dir, "run", "corpus", flag, "--dry-run", "--json")
		if code != 0 || !strings.Contains(stdout, `"files_added":1`) || !strings.Contains(stdout, `"files_deleted":1`) {
			t.Errorf("run %s --dry-run without a manifest: exit %d, want a.md added and b.md deleted; stdout %s, stderr %s", flag, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "state.db")); !os.IsNotExist(err) {
		t.Errorf("a dry run created the manifest (%v)", err)
	}
}
