package main

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// missingIndexProject starts a Cloud AI Search test server holding no
// index, and writes a folder with a sluice.yaml for its index "docs" with
// the given indexManagement ("" leaves the default, NoValidation) and
// extra settings of sink.cloudsearch. It returns the server and the folder.
func missingIndexProject(t *testing.T, management, extra string, opts searchtest.Options) (*searchtest.Server, string) {
	t.Helper()
	opts.Key = "test-admin-key"
	srv, endpoint := searchtest.Start(t, opts)
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", endpoint)
	t.Setenv("CLOUD_SEARCH_API_VERSION", "")
	settings := "indexName: docs, embeddingDimensionality: 16"
	if management != "" {
		settings += ", indexManagement: " + management
	}
	if extra != "" {
		settings += ", " + extra
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md":   "Alpha document about pelicans.\n",
		"sluice.yaml": "embedder: {dimensions: 16}\nsink:\n  type: cloudsearch\n  cloudsearch: {" + settings + "}\n",
	})
	return srv, dir
}

// wrongAdvice is the remedy a missing index gets when indexManagement
// does not create it; it is wrong advice when the setting already does.
const wrongAdvice = "set sink.cloudsearch.indexManagement to CreateIfNotExists"

// TestDoctorIndexToBeCreated: with indexManagement CreateIfNotExists, an
// index that does not exist yet is no failure of `sluice doctor` (the
// first run creates it), as a local store before the first run is not;
// with NoValidation or ValidateIndex it is one, whose remedy is `sluice
// index create` or CreateIfNotExists. Doctor creates no index either way.
func TestDoctorIndexToBeCreated(t *testing.T) {
	tests := []struct {
		management string
		code       int
		want       []string
		notWant    []string
	}{
		{"CreateIfNotExists", exitOK,
			[]string{"✓ endpoint and credentials:", "✓ index docs: does not exist yet: the first `sluice run` creates it (sink.cloudsearch.indexManagement is CreateIfNotExists)",
				"✓ embedder dimensions: the first run creates the index with embeddingDimensionality 16, the embedder's dimensions"},
			[]string{"✗", wrongAdvice, "failed"}},
		{"ValidateIndex", exitFatal,
			[]string{"✗ index docs:", "404", "create it with `sluice index create`", wrongAdvice, "1 check failed"}, nil},
		{"", exitFatal, // NoValidation, the default
			[]string{"✗ index docs:", "404", "create it with `sluice index create`", wrongAdvice, "1 check failed"}, nil},
	}
	for _, tt := range tests {
		t.Run("indexManagement "+cmp.Or(tt.management, "default"), func(t *testing.T) {
			srv, dir := missingIndexProject(t, tt.management, "", searchtest.Options{})
			stdout, stderr, code := sluice(t, dir, "doctor")
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s\n%s", w, stdout, stderr)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(stdout+stderr, w) {
					t.Errorf("output has %q:\n%s\n%s", w, stdout, stderr)
				}
			}
			if _, ok := srv.Index("docs"); ok {
				t.Error("doctor created the index")
			}
		})
	}
}

// TestIndexValidateAndStatsMissingIndex: `index validate` and `index
// stats` on an index that does not exist fail (exit 1) without creating
// it. With CreateIfNotExists the message says the index does not exist
// yet and what creates it, without advising the setting it already has;
// otherwise it advises `sluice index create` or CreateIfNotExists.
func TestIndexValidateAndStatsMissingIndex(t *testing.T) {
	for _, cmd := range [][]string{{"index", "validate"}, {"index", "stats"}, {"index", "stats", "--json"}} {
		for _, management := range []string{"CreateIfNotExists", "ValidateIndex", ""} {
			t.Run(strings.Join(cmd, " ")+" indexManagement "+cmp.Or(management, "default"), func(t *testing.T) {
				srv, dir := missingIndexProject(t, management, "", searchtest.Options{})
				stdout, stderr, code := sluice(t, dir, cmd...)
				if code != exitFatal || stdout != "" {
					t.Errorf("exit %d, stdout %q; want exit 1 and nothing on stdout\n%s", code, stdout, stderr)
				}
				want := []string{`index "docs" does not exist`, "create it with `sluice index create`", wrongAdvice}
				notWant := []string{"yet"}
				if management == "CreateIfNotExists" {
					want = []string{`index "docs" does not exist yet at http://`, "`sluice index create` or the first `sluice run` creates it (sink.cloudsearch.indexManagement is CreateIfNotExists)"}
					notWant = []string{wrongAdvice}
				}
				for _, w := range want {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, stderr)
					}
				}
				for _, w := range notWant {
					if strings.Contains(stderr, w) {
						t.Errorf("stderr has %q:\n%s", w, stderr)
					}
				}
				if _, ok := srv.Index("docs"); ok {
					t.Errorf("%s created the index", strings.Join(cmd, " "))
				}
			})
		}
	}
}

// TestQueryAndGetCreateMissingIndex: with CreateIfNotExists, `sluice
// query` and `sluice get` on an index that does not exist yet create it,
// as opening the store for a run does, and find nothing in it.
func TestQueryAndGetCreateMissingIndex(t *testing.T) {
	for _, cmd := range [][]string{{"query", "pelicans", "--json"}, {"get", "--json"}} {
		t.Run(cmd[0], func(t *testing.T) {
			srv, dir := missingIndexProject(t, "CreateIfNotExists", "", searchtest.Options{})
			stdout, stderr, code := sluice(t, dir, cmd...)
			if code != exitOK || len(jsonLines(t, stdout)) != 0 {
				t.Errorf("exit %d, stdout %q; want exit 0 and no result\n%s", code, stdout, stderr)
			}
			if _, ok := srv.Index("docs"); !ok {
				t.Errorf("%s did not create the index", cmd[0])
			}
			if out, stderr, code := sluice(t, dir, "index", "validate"); code != exitOK {
				t.Errorf("index validate after %s: exit %d\n%s\n%s", cmd[0], code, out, stderr)
			}
		})
	}
}

// TestCloudSearchTimeoutRemedy: a service slower than
// sink.cloudsearch.timeout ends the command with exit 1 and an error that
// names the attempts and says to raise the timeout, with its value.
func TestCloudSearchTimeoutRemedy(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, cmd := range [][]string{{"run", "docs"}, {"query", "pelicans"}, {"index", "create"}, {"index", "validate"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			srv, dir := missingIndexProject(t, "CreateIfNotExists", fmt.Sprintf("timeout: %s, maxRetries: 1", timeout),
				searchtest.Options{Latency: 5 * timeout})
			start := time.Now()
			stdout, stderr, code := sluice(t, dir, cmd...)
			if code != exitFatal {
				t.Errorf("exit %d, want %d\n%s\n%s", code, exitFatal, stdout, stderr)
			}
			var last string
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if strings.HasPrefix(line, "sluice: ") {
					last = line
				}
			}
			for _, w := range []string{"no answer from http://", "after 2 attempts", "raise sink.cloudsearch.timeout (now 200ms) if the service is slow"} {
				if !strings.Contains(last, w) {
					t.Errorf("final error %q lacks %q\nstderr:\n%s", last, w, stderr)
				}
			}
			// The first request, which reads the index, got no answer:
			// none creates it.
			if _, ok := srv.Index("docs"); ok {
				t.Errorf("%s created the index", strings.Join(cmd, " "))
			}
			// Two attempts of 200ms and one retry delay (0.8s), not the
			// service's latency per attempt times the default retries.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the command took %s", d)
			}
		})
	}
}
