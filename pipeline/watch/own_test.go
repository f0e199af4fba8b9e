package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnFilesInsideFolder keeps the manifest and the local store inside
// the watched folder, whose include pattern selects every file. They are
// not documents (reader.Config.Own): the initial round fails none of them,
// and their writes, which each round makes, are not changes that start
// another round, which would write them again, round after round.
func TestOwnFilesInsideFolder(t *testing.T) {
	e := newEnv(t)
	e.dbDir = filepath.Join(e.root, "data")
	if err := os.MkdirAll(e.dbDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.include = []string{"**/*"}
	e.own = []string{filepath.Join(e.dbDir, "index.db"), filepath.Join(e.dbDir, "state.db")}
	e.writeFile("a.md", "Alpha is the first document.")
	e.start(nil)
	e.waitReady()
	e.writeFile("b.md", "Beta is the second document.")
	e.wait()
	e.writeFile("a.md", "Alpha is the first document, changed.")
	e.wait()
	for _, r := range e.log.since(0) {
		if r.Report != nil {
			for _, f := range r.Report.Failures {
				t.Errorf("%s round failed %s: %s", r.Kind, f.Path, f.Error)
			}
		}
		for _, id := range r.Changed {
			if strings.HasPrefix(id, "data/") {
				t.Errorf("%s round took %s, a file of the manifest or the store, for a changed document", r.Kind, id)
			}
		}
	}
	e.checkClean()
}
