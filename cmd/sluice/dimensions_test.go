package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// sluiceWithin is sluice with a bound on how long the command may take,
// for commands (watch) that run until stopped when a check is missing.
func sluiceWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	code := execute(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestDimensionChangeRefusedBeforeRun builds a local store with the
// default 1536 dimensions, then sets embedder.dimensions to 256: every
// ingesting command must fail with exit 2 before it embeds anything
// (nothing printed, the store untouched), and the remedies it gives must
// work.
func TestDimensionChangeRefusedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": "Alpha beta gamma.", "corpus/b.md": "Delta epsilon."})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	before, _, _ := sluice(t, dir, "index", "stats", "--json")
	writeFiles(t, dir, map[string]string{"small.yaml": "embedder: {dimensions: 256}\n"})

	for _, args := range [][]string{
		{"run", "corpus", "--full"},
		{"run", "corpus"},
		{"watch", "corpus"},
		{"failed", "retry", "corpus"},
		{"index", "validate"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := sluiceWithin(t, time.Minute, append(args, "--config", "small.yaml")...)
			want := "holds 1536-dimensional vectors but embedder.dimensions is 256; set embedder.dimensions back to 1536, or start a new index: " +
				"set sink.local.path to a new file, or delete this one with `sluice index delete --config small.yaml` and run again"
			if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q before the run", code, stdout, stderr, want)
			}
			if after, _, _ := sluice(t, dir, "index", "stats", "--json"); after != before {
				t.Errorf("the store changed: %s, was %s", after, before)
			}
		})
	}

	// Remedy: a new store.
	writeFiles(t, dir, map[string]string{"new.yaml": "embedder: {dimensions: 256}\nsink: {local: {path: .sluice/small.db}}\n"})
	if _, stderr, code := sluice(t, dir, "run", "corpus", "--config", "new.yaml"); code != 0 {
		t.Errorf("run with a new sink.local.path: exit %d: %s", code, stderr)
	}
	// Remedy: delete the store and rebuild it.
	if _, stderr, code := sluice(t, dir, "index", "delete", "--config", "small.yaml"); code != 0 {
		t.Fatalf("index delete: exit %d: %s", code, stderr)
	}
	// The manifest's records went with the store: a plain run rebuilds it.
	out, stderr, code := sluice(t, dir, "run", "corpus", "--json", "--config", "small.yaml")
	if rep := jsonLines(t, out); code != 0 || len(rep) != 1 || rep[0]["files_unchanged"] != float64(0) || rep[0]["files_added"] == float64(0) {
		t.Errorf("run after index delete: exit %d: %s %s; want every document added", code, out, stderr)
	}
	if out, _, _ := sluice(t, dir, "index", "stats", "--json", "--config", "small.yaml"); !strings.Contains(out, `"dimensions":256`) {
		t.Errorf("rebuilt store: %s", out)
	}
}

// TestDimensionChangeRefusedOnCloudSearch does the same against the Cloud
// AI Search test server: an index of 64 dimensions, an embedder of 32.
// Without index validation the check reads the index definition; with it,
// opening the store refuses the index; both before any upload.
func TestDimensionChangeRefusedOnCloudSearch(t *testing.T) {
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": "Alpha beta gamma.", "corpus/b.md": "Delta epsilon."})
	config := func(dims int, management string) string {
		return fmt.Sprintf("embedder: {dimensions: %d}\nsink:\n  type: cloudsearch\n  cloudsearch: {endpoint: %s, indexName: dims, indexManagement: %s, embeddingDimensionality: %d}\n",
			dims, endpoint, management, dims)
	}
	writeFiles(t, dir, map[string]string{
		"first.yaml": config(64, "CreateIfNotExists"),
		"plain.yaml": config(32, "NoValidation"),
		"check.yaml": config(32, "CreateIfNotExists"),
	})
	if _, stderr, code := sluice(t, dir, "run", "corpus", "--config", "first.yaml"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	uploads := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if strings.HasSuffix(r.Path, "/docs/index") || (r.Method != "GET" && strings.HasPrefix(r.Path, "/indexes")) {
				n++
			}
		}
		return n
	}
	for _, tt := range []struct{ config, want string }{
		{"plain.yaml", `index "dims" holds 64-dimensional vectors but embedder.dimensions is 32; set embedder.dimensions and sink.cloudsearch.embeddingDimensionality back to 64, or start a new index: set sink.cloudsearch.indexName to a new name, or delete this one with ` + "`sluice index delete --config plain.yaml`"},
		{"check.yaml", "embeddingDimensionality"},
	} {
		t.Run(tt.config, func(t *testing.T) {
			before := uploads()
			stdout, stderr, code := sluice(t, dir, "run", "corpus", "--full", "--config", tt.config)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q before the run", code, stdout, stderr, tt.want)
			}
			if n := uploads() - before; n != 0 {
				t.Errorf("%d writes reached the service", n)
			}
		})
	}
}

// TestEmptyStoreHasNoDimensionsYet: a local store without vectors says so
// rather than reporting 0 dimensions (null in JSON).
func TestEmptyStoreHasNoDimensionsYet(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := sluice(t, dir, "index", "create"); code != exitOK {
		t.Fatalf("index create: exit %d: %s", code, stderr)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "validate"}, "no vectors yet: the first write sets their length, embedder.dimensions 1536"},
		{[]string{"index", "stats"}, "none yet (no vectors stored)"},
		{[]string{"index", "stats", "--json"}, `"dimensions":null`},
	} {
		if out, stderr, code := sluice(t, dir, tt.args...); code != exitOK || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tt.args, code, out, stderr, tt.want)
		}
	}
}
