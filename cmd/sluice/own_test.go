package main

import (
	"testing"
)

// TestRunSkipsItsOwnFiles keeps the manifest and the local store inside
// the folder read, with an include pattern that selects every file: they,
// their SQLite files and the store's lock are not documents, so the first
// run fails none and the second finds everything unchanged.
func TestRunSkipsItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha is the first document.",
		"sluice.yaml": "source: {include: [\"**/*\"], exclude: [sluice.yaml]}\n" +
			"embedder: {dimensions: 16}\n" +
			"state: {path: data/state.db}\n" +
			"sink: {local: {path: data/index.db}}\n",
	})
	for i, want := range []string{"files_ingested", "files_unchanged"} {
		out, stderr, code := sluice(t, dir, "run", ".", "--json")
		if code != 0 {
			t.Fatalf("run %d: exit %d; stderr:\n%s", i+1, code, stderr)
		}
		rep := jsonLines(t, out)[0]
		if rep["files_failed"] != 0.0 || rep["files_seen"] != 1.0 || rep[want] != 1.0 {
			t.Errorf("run %d: files_seen %v, %s %v, files_failed %v (failures %v); want 1, 1, 0",
				i+1, rep["files_seen"], want, rep[want], rep["files_failed"], rep["failures"])
		}
	}
}
