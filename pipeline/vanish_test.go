package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/reader"
)

// removingAfterListing is a walk of cfg that removes the file of each id in
// gone once the walk has listed it and before the pipeline reads it, as an
// rm -rf or a branch switch running during the walk does. With walkErr set,
// it passes the file on as the walk reports a file that vanished before it
// could be looked at: with a *reader.FileError wrapping reader.ErrVanished.
func removingAfterListing(t *testing.T, cfg reader.Config, walkErr bool, gone ...string) FileSource {
	return changingAfterListing(t, cfg, walkErr, os.Remove, gone...)
}

// changingAfterListing is removingAfterListing with the change made to the
// path of each id in gone given by change.
func changingAfterListing(t *testing.T, cfg reader.Config, walkErr bool, change func(path string) error, gone ...string) FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		return reader.Walk(ctx, cfg, func(f reader.File, err error) error {
			if err == nil && slices.Contains(gone, f.ID) {
				if cerr := change(f.Path); cerr != nil {
					t.Error(cerr)
				}
				if walkErr {
					f, err = reader.File{ID: f.ID}, &reader.FileError{Path: f.ID, Err: reader.ErrVanished, Detail: "removed before it could be read"}
				}
			}
			return fn(f, err)
		})
	}
}

// TestVanishedFileIsDeleted: a file that vanishes after the walk listed it
// and before it was read is deleted, as a walk that did not list it would
// delete it, not failed: its nodes leave the store, the manifest and the
// dead-letter table forget it, and the report counts it as deleted. Before,
// it was a failure that kept its nodes until the next run, so a branch
// switch during a watch round raised the failure count. It stays a failure
// where the run cannot tell that the file is gone for good.
func TestVanishedFileIsDeleted(t *testing.T) {
	tests := []struct {
		name    string
		walkErr bool // the walk, not the read, finds it gone
		known   bool // ingested by an earlier run
		mod     func(in *incr, o *Options)
		deleted bool
	}{
		{name: "ingested file, gone at the read", known: true, deleted: true},
		{name: "ingested file, gone at the walk", walkErr: true, known: true, deleted: true},
		{name: "new file, gone at the read", deleted: true},
		{name: "new file, gone at the walk", walkErr: true, deleted: true},
		{name: "KeepVanished", known: true, mod: func(_ *incr, o *Options) { o.KeepVanished = true }},
		{name: "source folder gone", known: true, mod: func(in *incr, o *Options) {
			o.Reader.Dir = filepath.Join(in.root, "elsewhere") // a source that reads from a folder no longer there
		}},
		{name: "no manifest", known: true, mod: func(_ *incr, o *Options) { o.State = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha text stays.", "z.md": "Zulu text stays."})
			if tt.known {
				in.write("b.md", "Bravo text, soon gone.")
				in.run(nil)
				if len(in.texts("b.md")) == 0 {
					t.Fatal("setup: b.md not ingested")
				}
			}
			in.write("b.md", "Bravo text, edited and then removed.")
			o := in.options()
			o.Source = removingAfterListing(t, o.Reader, tt.walkErr, "b.md")
			if tt.mod != nil {
				tt.mod(in, &o)
			}
			var results []DocumentResult
			o.OnDocument = func(_ context.Context, d DocumentResult) error {
				if d.File.ID == "b.md" {
					results = append(results, d)
				}
				return nil
			}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(results) != 1 {
				t.Fatalf("OnDocument called %d times for b.md, want once", len(results))
			}
			if got := results[0]; got.Deleted != tt.deleted || (got.Err == nil) != tt.deleted {
				t.Errorf("OnDocument(b.md): Deleted = %v, Err = %v; want Deleted %v and an error only if not deleted", got.Deleted, got.Err, tt.deleted)
			}
			if !tt.deleted {
				if rep.FilesFailed != 1 || rep.FilesDeleted != 0 {
					t.Errorf("report: %d failed, %d deleted; want b.md failed", rep.FilesFailed, rep.FilesDeleted)
				}
				if tt.known && o.State != nil && len(in.texts("b.md")) == 0 {
					t.Error("the nodes of a failed document were deleted; its record keeps them")
				}
				return
			}
			if rep.FilesFailed != 0 || rep.FilesDeleted != 1 || len(rep.Failures) != 0 {
				t.Errorf("report: %d failed %v, %d deleted; want b.md deleted", rep.FilesFailed, rep.Failures, rep.FilesDeleted)
			}
			if got := rep.FilesIngested + rep.FilesUnchanged + rep.FilesDeleted; got != rep.FilesSeen {
				t.Errorf("report: %d ingested + %d unchanged + %d deleted of %d seen; every seen file is counted once", rep.FilesIngested, rep.FilesUnchanged, rep.FilesDeleted, rep.FilesSeen)
			}
			if n := len(in.texts("b.md")); n != 0 {
				t.Errorf("b.md keeps %d nodes in the store", n)
			}
			if ids := in.failureIDs(); len(ids) != 0 {
				t.Errorf("dead letters = %v, want none", ids)
			}
			if rec, _, err := in.state.Doc(context.Background(), "b.md"); err != nil || len(rec.NodeIDs) != 0 {
				t.Errorf("manifest still records b.md: %d node ids (err %v)", len(rec.NodeIDs), err)
			}
			in.assertEqualsCleanRun()
			if again := in.run(nil); again.FilesUnchanged != 2 || again.FilesDeleted != 0 || again.ChunksWritten != 0 {
				t.Errorf("next run: %d unchanged, %d deleted, %d written; want the 2 others unchanged and nothing else", again.FilesUnchanged, again.FilesDeleted, again.ChunksWritten)
			}
		})
	}
}

// TestFolderReplacedByFile: a branch switch that puts a file where the
// folder of a listed document was, between the walk and the read, deletes
// the document as one that vanished: its path gives ENOTDIR, not "no such
// file", and the run neither fails it nor keeps its nodes.
func TestFolderReplacedByFile(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text stays.", "sub/b.md": "Bravo text, soon gone."})
	in.run(nil)
	if len(in.texts("sub/b.md")) == 0 {
		t.Fatal("setup: sub/b.md not ingested")
	}
	in.write("sub/b.md", "Bravo text, edited before the switch.")
	o := in.options()
	o.Source = changingAfterListing(t, o.Reader, false, func(p string) error {
		folder := filepath.Dir(p)
		if err := os.RemoveAll(folder); err != nil {
			return err
		}
		return os.WriteFile(folder, []byte("a file where the folder was"), 0o644)
	}, "sub/b.md")
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FilesFailed != 0 || rep.FilesDeleted != 1 || len(rep.Failures) != 0 {
		t.Errorf("report: %d failed %v, %d deleted; want sub/b.md deleted", rep.FilesFailed, rep.Failures, rep.FilesDeleted)
	}
	if n := len(in.texts("sub/b.md")); n != 0 {
		t.Errorf("sub/b.md keeps %d nodes in the store", n)
	}
	in.assertEqualsCleanRun()
}

// TestFileReplacedByFolder: a branch switch that puts a folder where a
// listed document's file was, between the walk and the read, deletes the
// document as one that vanished, rather than failing it as "not a regular
// file (a directory)" with the advice to exclude it, which would exclude the
// folder's files too; the next run ingests those.
func TestFileReplacedByFolder(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text stays.", "b.md": "Bravo text, soon a folder."})
	in.run(nil)
	if len(in.texts("b.md")) == 0 {
		t.Fatal("setup: b.md not ingested")
	}
	in.write("b.md", "Bravo text, edited before the switch.")
	o := in.options()
	o.Source = changingAfterListing(t, o.Reader, false, func(p string) error {
		if err := os.Remove(p); err != nil {
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p, "inner.md"), []byte("India text in the new folder."), 0o644)
	}, "b.md")
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FilesFailed != 0 || rep.FilesDeleted != 1 || len(rep.Failures) != 0 {
		t.Errorf("report: %d failed %v, %d deleted; want b.md deleted", rep.FilesFailed, rep.Failures, rep.FilesDeleted)
	}
	if n := len(in.texts("b.md")); n != 0 {
		t.Errorf("b.md keeps %d nodes in the store", n)
	}
	if ids := in.failureIDs(); len(ids) != 0 {
		t.Errorf("dead letters = %v, want none", ids)
	}
	if again := in.run(nil); again.FilesAdded != 1 || again.FilesUnchanged != 1 || again.FilesFailed != 0 {
		t.Errorf("next run: %d added, %d unchanged, %d failed; want b.md/inner.md added", again.FilesAdded, again.FilesUnchanged, again.FilesFailed)
	}
	in.assertEqualsCleanRun()
}

// TestVanishedFileDryRun: a dry run plans the deletion of a file that
// vanished after it was listed, and deletes nothing.
func TestVanishedFileDryRun(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text stays.", "b.md": "Bravo text, soon gone."})
	in.run(nil)
	before := len(in.texts("b.md"))
	in.write("b.md", "Bravo text, edited and then removed.")
	rep := in.run(func(o *Options) {
		o.DryRun = true
		o.Source = removingAfterListing(t, o.Reader, false, "b.md")
	})
	if rep.FilesDeleted != 1 || rep.FilesFailed != 0 || rep.ChunksDeleted != before {
		t.Errorf("dry run: %d deleted (%d chunks), %d failed; want b.md's deletion of %d chunks planned", rep.FilesDeleted, rep.ChunksDeleted, rep.FilesFailed, before)
	}
	if got := len(in.texts("b.md")); got != before {
		t.Errorf("the dry run changed the store: b.md has %d nodes, had %d", got, before)
	}
}

// TestRootVanishedDuringWalk: a source folder renamed away (or a disk
// unmounted) while the walk runs stops the run with reader.ErrRootVanished
// and deletes nothing; before, the folders the walk had not listed yet
// were taken for removed, and their documents deleted (70 of 100 in a
// trial), to be embedded again once the folder was back. The walk is held
// part-way by an embedder that blocks and a small memory budget.
func TestRootVanishedDuringWalk(t *testing.T) {
	const n = 30
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%02d/doc.md", i)] = fmt.Sprintf("Text of folder %d, first version.", i)
	}
	in := newIncr(t, files)
	if first := in.run(nil); first.FilesIngested != n {
		t.Fatalf("setup: %d ingested, want %d", first.FilesIngested, n)
	}
	for i := range n {
		in.write(fmt.Sprintf("d%02d/doc.md", i), fmt.Sprintf("Text of folder %d, second version.", i))
	}
	before := len(in.store.byDoc())
	block, entered := make(chan struct{}), make(chan struct{})
	in.emb.block, in.emb.entered = block, entered
	o := in.options()
	o.MemoryBudget = 4 << 10 // a few documents in flight: the walk waits for them
	moved := in.root + ".moved"
	go func() {
		<-entered // the walk is held part-way now
		if err := os.Rename(in.root, moved); err != nil {
			t.Error(err)
		}
		close(block)
	}()
	rep, err := Run(context.Background(), o)
	if !errors.Is(err, reader.ErrRootVanished) {
		t.Fatalf("Run = %v, want reader.ErrRootVanished", err)
	}
	if rep != nil && rep.FilesDeleted != 0 {
		t.Errorf("report: %d deleted, want none", rep.FilesDeleted)
	}
	if after := len(in.store.byDoc()); after != before {
		t.Errorf("the store holds %d documents, held %d: the run deleted some", after, before)
	}
	in.emb.block, in.emb.entered = nil, nil
	if err := os.Rename(moved, in.root); err != nil {
		t.Fatal(err)
	}
	if again := in.run(nil); again.FilesIngested+again.FilesUnchanged != n || again.FilesDeleted != 0 || again.FilesFailed != 0 {
		t.Errorf("next run: %d ingested, %d unchanged, %d deleted, %d failed; want all %d there", again.FilesIngested, again.FilesUnchanged, again.FilesDeleted, again.FilesFailed, n)
	}
	in.assertEqualsCleanRun()
}
