package reader

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOwnFilesAreNoDocuments(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	cfg := Config{Dir: root, Include: []string{"**/*"}, Own: []string{"data/state.db", filepath.Join(link, "store", "index.db")}}
	m := cfg.Matcher()
	for rel, want := range map[string]bool{
		"data/state.db":                   false,
		"data/state.db-wal":               false,
		"data/state.db-shm":               false,
		"data/state.db-journal":           false,
		"data/state.db.9f86d081884c.lock": false,
		"store/index.db":                  false, // named through a link to the root
		"store/index.db.lock":             false,
		"store/index.db-wal":              false,
		"data/state.db.md":                true, // a document named after it, not a file of its own
		"data/state.db-notes":             true,
		"data/state.dbx":                  true,
		"state.db":                        true,
		"other/data/state.db":             true,
	} {
		if got := m(rel); got != want {
			t.Errorf("Match(%q) = %v, want %v", rel, got, want)
		}
	}
	// Outside the folder, a file of its own selects nothing away.
	if got := (Config{Dir: filepath.Join(root, "data"), Include: []string{"**/*"}, Own: []string{"state.db"}}).Match("state.db"); !got {
		t.Error(`Match("state.db") of data/ with Own "state.db" (./state.db, outside data/) = false, want true`)
	}
}

// TestWatchIgnoresOwnFiles writes the manifest's files inside the watched
// folder: no event names them, as a change of them is none of a document.
func TestWatchIgnoresOwnFiles(t *testing.T) {
	root := t.TempDir()
	r := startWatch(t, Config{Dir: root, Include: []string{"**/*"}, Own: []string{filepath.Join(root, "data", "state.db")}}, nil)
	r.write("data/state.db", "manifest")
	r.write("data/state.db-wal", "log")
	r.write("data/notes.md", "a document")
	if got := r.until(); !equalStrings(got, []string{"changed data/notes.md"}) {
		t.Errorf("events = %q, want only the document's", got)
	}
}
