package reader

import (
	"os"
	"path/filepath"
	"slices"
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

// TestLinksToOwnFilesAreNoDocuments: a symbolic link to the manifest or the
// store, or a file of theirs reached through a link to their folder, is no
// document either: Walk does not list it, and the watcher reports no change
// of it when they are written, as each round writes them (a watch would
// otherwise fail the link, write the failure and start again, every
// debounce period, forever).
func TestLinksToOwnFilesAreNoDocuments(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.md":                 "a document",
		"store/index.db":       "store",
		"store/notes.md":       "a document beside the store",
		".sluice/state.db":     "manifest",
		".sluice/state.db-wal": "manifest's log",
		"s.md":                 "->.sluice/state.db",
		"w.md":                 "->.sluice/state.db-wal",
		"i.md":                 "->store/index.db",
		"mirror":               "->store",
		"other.md":             "->a.md",
	})
	cfg := Config{Dir: root, Include: []string{"**/*"}, Own: []string{filepath.Join(root, ".sluice", "state.db"), filepath.Join(root, "store", "index.db")}}
	res := walkAll(t, cfg)
	want := []string{"a.md", "mirror/notes.md", "other.md", "store/notes.md"}
	if !equalStrings(res.files, want) || len(res.failures) != 0 {
		t.Errorf("Walk lists %q, fails %v; want %q and no failure", res.files, res.failures, want)
	}

	r := startWatch(t, cfg, nil)
	r.write(".sluice/state.db", "manifest, written")
	r.write(".sluice/state.db-wal", "manifest's log")
	r.write("store/index.db", "store, written")
	r.write("store/index.db-wal", "store's log")
	r.write("store/notes.md", "edited")
	if got, want := sorted(r.until()), []string{"changed mirror/notes.md", "changed store/notes.md"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want only the documents'", got)
	}
	if err := os.Symlink(filepath.Join(".sluice", "state.db-shm"), r.path("shm.md")); err != nil {
		t.Fatal(err)
	}
	r.write(".sluice/state.db-shm", "shared memory")
	if got := r.until(); len(got) != 0 {
		t.Errorf("a link to the manifest's -shm created: events %q, want none", got)
	}
}
