package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestIndexDeleteTakesTheIndexLock: `index delete` takes the index's lock
// even when its own manifest does not exist (it does not create one) or
// cannot be opened: while another writer holds the index through another
// state file, it exits 1 and the store stays; otherwise it deletes it.
func TestIndexDeleteTakesTheIndexLock(t *testing.T) {
	tests := []struct {
		name     string
		manifest string // the content of other/state.db; "" for no file
		want     string // in stdout once the lock is free
	}{
		{"no manifest", "", "`sluice run` rebuilds it"},
		{"damaged manifest", "not a database", "could not be opened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"docs/a.md":  "Alpha document about pelicans.\n",
				"other.yaml": "state: {path: other/state.db}\n",
			})
			if tt.manifest != "" {
				writeFiles(t, dir, map[string]string{"other/state.db": tt.manifest})
			}
			if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
				t.Fatalf("run: exit %d: %s", code, errOut)
			}
			cfg := DefaultConfig()
			holder, err := state.OpenForWriting(context.Background(), filepath.Join(dir, ".sluice", "state.db"), sinkScope(cfg))
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			index := filepath.Join(dir, ".sluice", "index.db")

			_, errOut, code := sluice(t, dir, "index", "delete", "--config", "other.yaml")
			if code != exitFatal || !strings.Contains(errOut, "already writes the index") {
				t.Errorf("index delete while another writer holds the index: exit %d, %q; want 1 and the lock named", code, errOut)
			}
			if _, err := os.Stat(index); err != nil {
				t.Errorf("the store after a refused delete: %v", err)
			}

			holder.Close()
			out, errOut, code := sluice(t, dir, "index", "delete", "--config", "other.yaml")
			if code != exitOK || !strings.Contains(out, tt.want) {
				t.Errorf("index delete: exit %d, %q %q; want 0 and %q", code, out, errOut, tt.want)
			}
			if _, err := os.Stat(index); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the store after index delete: %v, want it gone", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "other", "state.db")); (tt.manifest == "") != errors.Is(err, os.ErrNotExist) {
				t.Errorf("other/state.db after index delete: %v; want it created only if it was there", err)
			}
		})
	}
}

// TestStoreInANewFolder: a run creates the folder of sink.local.path, where
// the index's lock is, however the paths reach it.
func TestStoreInANewFolder(t *testing.T) {
	for _, sinkPath := range []string{"new/sub/index.db", "state/../new/index.db"} {
		t.Run(sinkPath, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"docs/a.md":   "Alpha document about pelicans.\n",
				"sluice.yaml": "sink: {type: local, local: {path: " + sinkPath + "}}\nstate: {path: state/state.db}\n",
			})
			if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
				t.Fatalf("run: exit %d: %s", code, errOut)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(sinkPath)+".lock")); err != nil {
				t.Errorf("lock file beside the store: %v", err)
			}
		})
	}
}

// TestIndexDeleteRefusedKeepsTheManifest: an `index delete` of a Cloud AI
// Search index refused for its settings or by the service changes nothing:
// the manifest keeps its records, so the next run does not embed again
// what the index still holds.
func TestIndexDeleteRefusedKeepsTheManifest(t *testing.T) {
	const key = "test-admin-key"
	_, endpoint := searchtest.Start(t, searchtest.Options{Key: key, RecordLimit: -1})
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", endpoint)
	t.Setenv("CLOUD_AI_SEARCH_KEY", key)
	dir := writeCloudProject(t, "kept")
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	planned := func(what string) float64 {
		t.Helper()
		out, errOut, code := sluice(t, dir, "run", "docs", "--dry-run", "--json")
		rep := jsonLines(t, out)
		if code != exitOK || len(rep) != 1 {
			t.Fatalf("dry run: exit %d: %s", code, errOut)
		}
		n, _ := rep[0][what].(float64)
		return n
	}
	for _, tt := range []struct {
		name, key string
		code      int
	}{
		{"no key", "", exitUsage},
		{"key refused", "wrong-key", exitFatal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLOUD_AI_SEARCH_KEY", tt.key)
			if _, errOut, code := sluice(t, dir, "index", "delete"); code != tt.code {
				t.Errorf("index delete: exit %d, want %d: %s", code, tt.code, errOut)
			}
			t.Setenv("CLOUD_AI_SEARCH_KEY", key)
			if n := planned("files_unchanged"); n != 2 {
				t.Errorf("after a refused index delete, a run finds %v documents unchanged, want 2: the manifest lost its records", n)
			}
		})
	}
	if out, errOut, code := sluice(t, dir, "index", "delete"); code != exitOK || !strings.Contains(out, "deleted index kept") || !strings.Contains(out, "records in the manifest") {
		t.Fatalf("index delete: exit %d, %q %q", code, out, errOut)
	}
	if n := planned("files_added"); n != 2 {
		t.Errorf("after index delete, a run plans %v documents new, want 2", n)
	}
	// Again: there is no such index now, and the output says so (a
	// misspelt name must not look like a successful delete).
	if out, errOut, code := sluice(t, dir, "index", "delete"); code != exitOK || !strings.Contains(out, "there was no index kept") {
		t.Errorf("index delete of an absent index: exit %d, %q %q; want 0 and \"there was no index kept\"", code, out, errOut)
	}
}
