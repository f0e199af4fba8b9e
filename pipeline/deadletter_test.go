package pipeline

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// failureIDs lists the dead-letter table.
func (in *incr) failureIDs() []string {
	in.t.Helper()
	fails, err := in.state.Failures(context.Background())
	if err != nil {
		in.t.Fatal(err)
	}
	ids := []string{}
	for _, f := range fails {
		ids = append(ids, f.ID)
	}
	return ids
}

// namedFiles is a source of the named documents of root, as `sluice failed
// retry` and watch rounds use.
func namedFiles(cfg reader.Config, ids ...string) FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, id := range ids {
			f, err := reader.Stat(cfg, id)
			if err := fn(f, err); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestDeadLettersLeave checks when a document leaves the dead-letter table:
// once it is excluded, deleted, gone before it could be read, ingested or
// unchanged again, or names a folder that can be read again; and that runs
// that did not look at it (over named files, or with a narrower include)
// leave it listed.
func TestDeadLettersLeave(t *testing.T) {
	const binary = "x\x00y"
	tests := []struct {
		name string
		// change is applied after a first run in which bin.md failed; it
		// returns the options of the next run.
		change func(t *testing.T, in *incr) func(*Options)
		want   []string // dead letters after the next run
	}{
		{"excluded", func(t *testing.T, in *incr) func(*Options) {
			return func(o *Options) { o.Reader.Exclude = []string{"bin.md"} }
		}, []string{}},
		{"a file of Sluice's own (reader.Config.Own)", func(t *testing.T, in *incr) func(*Options) {
			// A manifest kept inside the folder, failed as a binary
			// document by a version that read it.
			return func(o *Options) { o.Reader.Own = []string{filepath.Join(in.root, "bin.md")} }
		}, []string{}},
		{"excluded folder", func(t *testing.T, in *incr) func(*Options) {
			in.write("sub/bad.md", binary)
			in.run(nil)
			return func(o *Options) { o.Reader.Exclude = []string{"sub", "bin.md"} }
		}, []string{}},
		{"deleted", func(t *testing.T, in *incr) func(*Options) {
			remove(t, in, "bin.md")
			return nil
		}, []string{}},
		{"fixed", func(t *testing.T, in *incr) func(*Options) {
			in.write("bin.md", "Text again.")
			return nil
		}, []string{}},
		{"not included by a narrower include", func(t *testing.T, in *incr) func(*Options) {
			return func(o *Options) { o.Reader.Include = []string{"a.md"} }
		}, []string{"bin.md"}},
		{"run over named files", func(t *testing.T, in *incr) func(*Options) {
			remove(t, in, "bin.md")
			return func(o *Options) { o.Source = namedFiles(o.Reader, "a.md") }
		}, []string{"bin.md"}},
		{"still binary", func(t *testing.T, in *incr) func(*Options) { return nil }, []string{"bin.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha text.", "bin.md": binary})
			if rep := in.run(nil); rep.FilesFailed != 1 {
				t.Fatalf("first run: %+v, want bin.md failed", rep)
			}
			mod := tt.change(t, in)
			in.run(mod)
			if got := in.failureIDs(); !slices.Equal(got, tt.want) {
				t.Errorf("dead letters = %v, want %v", got, tt.want)
			}
		})
	}
}

func remove(t *testing.T, in *incr, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(in.root, name)); err != nil {
		t.Fatal(err)
	}
}

// TestDeadLetterOfVanishedFileLeaves: a file recorded as failed because it
// vanished (by an earlier version, or with Options.KeepVanished) leaves the
// dead-letter table in the next run, which does not find it.
func TestDeadLetterOfVanishedFileLeaves(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text."})
	ctx := context.Background()
	if err := in.state.Fail(ctx, "gone.md", "reader: gone.md: vanished", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := in.state.Fail(ctx, "dry.md", "reader: dry.md: vanished", time.Now()); err != nil {
		t.Fatal(err)
	}
	in.run(func(o *Options) { o.DryRun = true })
	if got := in.failureIDs(); len(got) != 2 {
		t.Fatalf("a dry run changed the dead letters: %v", got)
	}
	in.run(nil)
	if got := in.failureIDs(); len(got) != 0 {
		t.Errorf("dead letters of files that are gone = %v, want none", got)
	}
}

// TestDeadLetterOfRestoredFileLeaves: a file that turned binary and was then
// restored to the content it was ingested with is unchanged (by its size
// and modification time, or by its hash) and leaves the dead-letter table,
// in a whole-folder run and in a run over named files.
func TestDeadLetterOfRestoredFileLeaves(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sameMtime bool // restored with its old modification time (cp -p, git stash pop)
		named     bool // the next run is over named files (failed retry)
	}{
		{"same mtime", true, false},
		{"new mtime", false, false},
		{"same mtime, named", true, true},
		{"new mtime, named", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha text, the good version."})
			p := filepath.Join(in.root, "a.md")
			// At noon, so that a new modification time a minute later is on
			// the same day: last_modified_date, a date, stays the same.
			noon := time.Date(2026, 11, 21, 12, 0, 0, 0, time.Local)
			if err := os.Chtimes(p, noon, noon); err != nil {
				t.Fatal(err)
			}
			in.run(nil)
			good, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			in.write("a.md", "x\x00y")
			if rep := in.run(nil); rep.FilesFailed != 1 {
				t.Fatalf("binary a.md: %+v", rep)
			}
			if err := os.WriteFile(p, []byte("Alpha text, the good version."), 0o644); err != nil {
				t.Fatal(err)
			}
			mtime := good.ModTime()
			if !tt.sameMtime {
				mtime = mtime.Add(time.Minute)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			in.emb.requests = 0
			rep := in.run(func(o *Options) {
				if tt.named {
					o.Source = namedFiles(o.Reader, "a.md")
				}
			})
			if rep.FilesUnchanged != 1 || in.emb.requests != 0 {
				t.Errorf("restored file: %+v, %d embedding requests; want it unchanged", rep, in.emb.requests)
			}
			if got := in.failureIDs(); len(got) != 0 {
				t.Errorf("dead letters = %v, want none", got)
			}
		})
	}
}

// TestDeadLetterOfFolder: a folder the walk could not read stays listed
// while it cannot be read, and leaves once it can.
func TestDeadLetterOfFolder(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text.", "locked/b.md": "Beta text."})
	ctx := context.Background()
	locked := filepath.Join(in.root, "locked")
	if os.Geteuid() != 0 { // root reads any folder
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		if rep := in.run(nil); rep.FilesFailed != 1 {
			t.Fatalf("unreadable folder: %+v", rep)
		}
		if got := in.failureIDs(); !slices.Equal(got, []string{"locked"}) {
			t.Fatalf("dead letters = %v, want [locked]", got)
		}
		if err := os.Chmod(locked, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if err := in.state.Fail(ctx, "locked", "reader: locked: cannot read (directory)", time.Now()); err != nil {
		t.Fatal(err)
	}
	rep := in.run(nil)
	if got := in.failureIDs(); len(got) != 0 {
		t.Errorf("dead letters = %v after the folder became readable, want none", got)
	}
	if rep.FilesFailed != 0 || len(in.store.byDoc()["locked/b.md"]) == 0 {
		t.Errorf("the folder's document was not ingested: %+v", rep)
	}
}

// addLog is a memStore that counts the nodes ever added, by document.
type addLog struct {
	*memStore
	mu    sync.Mutex
	added map[string]int
}

func (s *addLog) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	s.mu.Lock()
	for _, n := range nodes {
		s.added[n.RefDocID]++
	}
	s.mu.Unlock()
	return s.memStore.Add(ctx, nodes)
}

// TestFailedDocumentKeepsWhatItsRecordLists: when a document fails after
// some of its new chunks were written, those chunks are deleted again, so
// that a document the manifest knew keeps exactly its earlier nodes and a
// new one has none; its pending ids go too, and fixing it converges.
func TestFailedDocumentKeepsWhatItsRecordLists(t *testing.T) {
	ctx := context.Background()
	in := newIncr(t, map[string]string{"known.md": paragraphText("known", 30)})
	serial := func(o *Options) { o.BatchSize, o.EmbedConcurrency = 1, 1 }
	in.run(serial)
	before := slices.Sorted(maps.Keys(view(in.store)))

	in.write("known.md", paragraphText("changed", 30)+"The last sentence says REJECTME.")
	in.write("new.md", paragraphText("fresh", 30)+"The last sentence says REJECTME.")
	in.store.reject = "REJECTME"
	log := &addLog{memStore: in.store, added: map[string]int{}}
	rep := in.run(func(o *Options) { serial(o); o.Store = log })
	if rep.FilesFailed != 2 || rep.ChunksDeleted != log.added["known.md"]+log.added["new.md"]-2 {
		t.Fatalf("report %+v, want both documents failed and the chunks they wrote (%v, less the 2 rejected) deleted", rep, log.added)
	}
	if log.added["known.md"] < 2 || log.added["new.md"] < 2 {
		t.Fatalf("nodes added before the failures: %v; the test needs chunks written before the rejected one", log.added)
	}
	if got := slices.Sorted(maps.Keys(view(in.store))); !slices.Equal(got, before) {
		t.Errorf("store holds %d nodes after the failures, want known.md's %d earlier ones exactly", len(got), len(before))
	}
	for _, doc := range []string{"known.md", "new.md"} {
		acked, intended, err := in.state.Pending(ctx, doc)
		if err != nil || len(acked)+len(intended) != 0 {
			t.Errorf("pending ids of %s: %d acknowledged, %d intended, %v; want none", doc, len(acked), len(intended), err)
		}
	}
	if got := in.failureIDs(); !slices.Equal(got, []string{"known.md", "new.md"}) {
		t.Errorf("dead letters = %v", got)
	}

	in.store.reject = ""
	rep = in.run(serial)
	if rep.FilesFailed != 0 || rep.FilesIngested != 2 {
		t.Errorf("run after the fix: %+v", rep)
	}
	in.assertEqualsCleanRun()
}

// killedAfterDelete deletes, then fails, as a process killed between the
// store's delete and the manifest's next step.
type killedAfterDelete struct{ *memStore }

func (s killedAfterDelete) DeleteNodes(ctx context.Context, ids []string) error {
	if err := s.memStore.DeleteNodes(ctx, ids); err != nil {
		return err
	}
	return errors.New("killed")
}

// strictUpdates is a memStore whose UpdateMetadata refuses nodes it does
// not hold, as sink/local and sink/cloudsearch do.
type strictUpdates struct{ *memStore }

func (s strictUpdates) UpdateMetadata(ctx context.Context, nodes []sink.Node) error {
	s.mu.Lock()
	missing := map[string]error{}
	for _, n := range nodes {
		if _, ok := s.nodes[n.ID]; !ok {
			missing[n.ID] = errors.New("not stored")
		}
	}
	s.mu.Unlock()
	if len(missing) > 0 {
		return &sink.WriteError{Failed: missing}
	}
	return s.memStore.UpdateMetadata(ctx, nodes)
}

// TestRunKilledDuringRollbackConverges: the nodes a rollback deleted before
// the run died are not taken for stored by the next run, which writes them
// again instead of rewriting the metadata of nodes that are gone.
func TestRunKilledDuringRollbackConverges(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": paragraphText("a", 30)})
	serial := func(o *Options) { o.BatchSize, o.EmbedConcurrency = 1, 1 }
	in.run(serial)
	in.write("a.md", paragraphText("b", 30)+"The last sentence says REJECTME.")
	in.store.reject = "REJECTME"
	o := in.options()
	serial(&o)
	o.Store = killedAfterDelete{in.store}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Run = %v, want it killed during the rollback", err)
	}
	in.store.reject = ""
	in.write("a.md", paragraphText("b", 30)+"The last sentence is fine now.")
	if rep := in.run(func(o *Options) { serial(o); o.Store = strictUpdates{in.store} }); rep.FilesFailed != 0 {
		t.Errorf("run after the fix failed: %+v", rep.Failures)
	}
	in.assertEqualsCleanRun()
}

// TestRefusedRewriteOfDeadRunNodeIsDeleted: a dead run stored a document's
// new chunks without acknowledging them; this run's write of one of them is
// refused and the document fails. The rollback deletes that node too, so the
// store never holds a node the manifest does not list.
func TestRefusedRewriteOfDeadRunNodeIsDeleted(t *testing.T) {
	ctx := context.Background()
	in := newIncr(t, map[string]string{"a.md": paragraphText("a", 30)})
	serial := func(o *Options) { o.BatchSize, o.EmbedConcurrency = 1, 1 }
	in.run(serial)
	in.write("a.md", paragraphText("b", 30)+"The last sentence says REJECTME.")
	written := newIncr(t, nil) // what the dead run wrote: every new chunk
	written.root = in.root
	written.run(nil)
	dead, err := in.state.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ns []state.Node
	for id, n := range written.store.nodes {
		in.store.nodes[id] = n
		ns = append(ns, state.Node{ID: id})
	}
	if err := dead.Intend(ctx, map[string][]state.Node{"a.md": ns}); err != nil {
		t.Fatal(err)
	}
	in.store.reject = "REJECTME"
	if rep := in.run(serial); rep.FilesFailed != 1 {
		t.Fatalf("report %+v, want a.md failed", rep)
	}
	doc, _, err := in.state.Doc(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(in.store.nodes)); !slices.Equal(got, doc.NodeIDs) {
		t.Errorf("store holds %d nodes after the failure, want exactly the %d of a.md's record", len(got), len(doc.NodeIDs))
	}
	in.store.reject = ""
	in.write("a.md", paragraphText("c", 30))
	in.run(serial)
	in.assertEqualsCleanRun()
}

// TestFailedDocumentRestoredGetsItsMetadataBack: a failing run rewrote the
// metadata of the document's reused chunks (its size changed); once the file
// is back as recorded, the next run rewrites them again, so the store holds
// what a clean run does.
func TestFailedDocumentRestoredGetsItsMetadataBack(t *testing.T) {
	body := paragraphText("known", 30)
	in := newIncr(t, map[string]string{"known.md": body})
	serial := func(o *Options) { o.BatchSize, o.EmbedConcurrency = 1, 1 }
	in.run(serial)
	in.write("known.md", body+"The last sentence says REJECTME.")
	in.store.reject = "REJECTME"
	if rep := in.run(serial); rep.FilesFailed != 1 || in.store.updates == 0 {
		t.Fatalf("report %+v after %d metadata updates, want known.md failed after rewriting metadata", rep, in.store.updates)
	}
	in.store.reject = ""
	in.write("known.md", body)
	in.run(serial)
	in.assertEqualsCleanRun()
}

// TestFailedDocumentKeepsNodesFoundInTheStore: a document whose nodes the
// manifest does not list (it was lost) or does not trust (--full) fails
// after the run wrote some of those nodes again. They were in the store
// before the run, so the rollback leaves them: the store holds exactly what
// it held before, and the next run converges.
func TestFailedDocumentKeepsNodesFoundInTheStore(t *testing.T) {
	for _, tt := range []struct {
		name string
		lose bool
		full bool
	}{
		{"lost manifest", true, false},
		{"full", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": paragraphText("a", 30)})
			opts := func(o *Options) {
				o.BatchSize, o.EmbedConcurrency = 1, 1
				o.Store = nodeListingStore{in.store}
			}
			in.run(opts)
			before := slices.Sorted(maps.Keys(view(in.store)))
			if tt.lose {
				in.loseManifest()
			}
			in.write("a.md", paragraphText("a", 30)+"The last sentence says REJECTME.")
			in.store.reject = "REJECTME"
			log := listingAddLog{&addLog{memStore: in.store, added: map[string]int{}}}
			rep := in.run(func(o *Options) {
				opts(o)
				o.Full = tt.full
				o.Store = log
			})
			if rep.FilesFailed != 1 {
				t.Fatalf("report %+v, want a.md failed", rep)
			}
			if log.added["a.md"] < 2 {
				t.Fatalf("nodes added before the failure: %v; the test needs chunks written again before the rejected one", log.added)
			}
			if got := slices.Sorted(maps.Keys(view(in.store))); !slices.Equal(got, before) {
				t.Errorf("store holds %d nodes after the failure, want the %d it held before exactly", len(got), len(before))
			}
			if rep.ChunksDeleted != 0 {
				t.Errorf("ChunksDeleted = %d, want 0: every chunk the run wrote was in the store before", rep.ChunksDeleted)
			}
			in.store.reject = ""
			in.write("a.md", paragraphText("a", 30)+"The last sentence is fine now.")
			if rep := in.run(opts); rep.FilesFailed != 0 {
				t.Errorf("run after the fix: %+v", rep.Failures)
			}
			in.assertEqualsCleanRun()
		})
	}
}

// listingAddLog is an addLog that lists a document's nodes (NodeLister).
type listingAddLog struct{ *addLog }

func (s listingAddLog) NodeIDs(ctx context.Context, refDocID string, fn func([]string) error) error {
	return nodeListingStore{s.memStore}.NodeIDs(ctx, refDocID, fn)
}
