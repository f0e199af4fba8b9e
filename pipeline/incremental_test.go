package pipeline

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// incr is an incremental setup: a folder, a store and a manifest.
type incr struct {
	t         *testing.T
	root      string
	store     *memStore
	state     *state.Store
	statePath string // state's file
	emb       *fakeEmbedder
}

// openState opens the manifest at path (a new one if there is no file),
// scope "test", and closes it when the test ends.
func openState(t *testing.T, path string) *state.Store {
	t.Helper()
	st, err := state.Open(context.Background(), path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newIncr(t *testing.T, files map[string]string) *incr {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	return &incr{t: t, root: writeTree(t, files), store: newMemStore(), state: openState(t, path), statePath: path, emb: &fakeEmbedder{dims: 8}}
}

func (in *incr) options() Options {
	o := baseOptions(in.t, in.root, in.emb, in.store)
	o.State = in.state
	o.EmbedderInfo = state.Embedder{Provider: "fake", Dimensions: 8}
	return o
}

func (in *incr) run(mod func(*Options)) *Report {
	in.t.Helper()
	o := in.options()
	if mod != nil {
		mod(&o)
	}
	rep, err := Run(context.Background(), o)
	if err != nil {
		in.t.Fatalf("Run: %v", err)
	}
	return rep
}

// runInterrupted runs o and cancels it once it has sent batches embedding
// batches, as when the process is killed; an error other than the
// cancellation fails the test.
func (in *incr) runInterrupted(o Options, batches int64) *Report {
	in.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Stats = new(Stats)
	o.OnDocument = func(context.Context, DocumentResult) error {
		if o.Stats.Batches.Load() >= batches {
			cancel()
		}
		return nil
	}
	rep, err := Run(ctx, o)
	if err != nil && !errors.Is(err, context.Canceled) {
		in.t.Fatalf("run interrupted after %d batches: %v", batches, err)
	}
	return rep
}

func (in *incr) write(name, body string) {
	in.t.Helper()
	p := filepath.Join(in.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		in.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		in.t.Fatal(err)
	}
	// Make the change visible to the size/mtime fast path even within one
	// clock tick.
	future := time.Now().Add(time.Duration(len(body)) * time.Millisecond)
	if err := os.Chtimes(p, future, future); err != nil {
		in.t.Fatal(err)
	}
}

// nodeView is what must equal between an incremental and a clean run.
type nodeView struct {
	Doc, Text string
	Meta      string
	Start     int
}

func view(s *memStore) map[string]nodeView {
	out := map[string]nodeView{}
	for id, n := range s.nodes {
		out[id] = nodeView{Doc: n.RefDocID, Text: n.Text, Meta: fmt.Sprint(n.Metadata), Start: n.StartChar}
	}
	return out
}

// assertEqualsCleanRun checks the store holds exactly what a fresh run
// over the same folder produces.
func (in *incr) assertEqualsCleanRun() {
	in.t.Helper()
	in.assertEqualsCleanRunWith(nil)
}

// assertEqualsCleanRunWith checks the store holds exactly what a fresh run
// over the same folder with mod applied to its options produces.
func (in *incr) assertEqualsCleanRunWith(mod func(*Options)) {
	in.t.Helper()
	clean := newIncr(in.t, nil)
	clean.root = in.root
	clean.run(mod)
	got, want := view(in.store), view(clean.store)
	if !reflect.DeepEqual(got, want) {
		var missing, extra []string
		for id, v := range want {
			if g, ok := got[id]; !ok || g != v {
				missing = append(missing, v.Doc)
			}
		}
		for id, v := range got {
			if _, ok := want[id]; !ok {
				extra = append(extra, v.Doc)
			}
		}
		in.t.Fatalf("store differs from a clean run: %d nodes vs %d; missing or different in %v; extra in %v", len(got), len(want), missing, extra)
	}
}

func corpus(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%02d/f%02d.md", i%3, i)] = paragraphText(fmt.Sprint("topic", i), 30)
	}
	return files
}

func TestSecondRunIsFree(t *testing.T) {
	in := newIncr(t, corpus(12))
	first := in.run(nil)
	if first.FilesAdded != 12 || first.ChunksWritten == 0 {
		t.Fatalf("first run: %+v", first)
	}
	in.emb.requests, in.store.adds = 0, 0
	second := in.run(nil)
	if second.FilesUnchanged != 12 || second.FilesIngested != 0 || second.TokensEmbedded != 0 || second.ChunksWritten != 0 {
		t.Errorf("second run: %+v", second)
	}
	if in.emb.requests != 0 || in.store.adds != 0 || second.BytesRead != 0 {
		t.Errorf("second run embedded %d times, wrote %d times, read %d bytes", in.emb.requests, in.store.adds, second.BytesRead)
	}
}

func TestTouchedFileIsUnchangedByHash(t *testing.T) {
	in := newIncr(t, corpus(3))
	in.run(nil)
	p := filepath.Join(in.root, "d00/f00.md")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	in.emb.requests = 0
	rep := in.run(nil)
	// The date in the metadata may change with the hour: then the chunks'
	// metadata is rewritten, but nothing is embedded either way.
	if in.emb.requests != 0 || rep.TokensEmbedded != 0 {
		t.Errorf("touch re-embedded: %+v", rep)
	}
	in.assertEqualsCleanRun()
}

func TestEditEmbedsOnlyChangedChunks(t *testing.T) {
	files := corpus(4)
	in := newIncr(t, files)
	full := in.run(nil)
	body := files["d01/f01.md"]
	i := strings.Index(body, "Sentence 12 ")
	edited := body[:i] + "An entirely new sentence replaces the old one here. " + body[i+len("Sentence 12 "):]
	in.write("d01/f01.md", edited)
	rep := in.run(nil)
	if rep.FilesUpdated != 1 || rep.FilesUnchanged != 3 {
		t.Fatalf("after edit: %+v", rep)
	}
	if rep.ChunksReused == 0 || rep.ChunksDeleted == 0 {
		t.Errorf("edit reused %d and deleted %d chunks; want both > 0", rep.ChunksReused, rep.ChunksDeleted)
	}
	if rep.TokensEmbedded*4 > full.TokensEmbedded/4 {
		t.Errorf("edit embedded %d tokens, full run %d: not proportional to the change", rep.TokensEmbedded, full.TokensEmbedded)
	}
	if in.store.updates == 0 {
		t.Error("metadata of reused chunks was not rewritten after the file changed")
	}
	in.assertEqualsCleanRun()
}

func TestRenameAndDeleteMoveChunks(t *testing.T) {
	files := corpus(4)
	in := newIncr(t, files)
	in.run(nil)
	if err := os.Rename(filepath.Join(in.root, "d00/f00.md"), filepath.Join(in.root, "d00/renamed.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(in.root, "d02/f02.md")); err != nil {
		t.Fatal(err)
	}
	rep := in.run(nil)
	if rep.FilesDeleted != 2 || rep.FilesAdded != 1 || rep.ChunksDeleted == 0 {
		t.Errorf("after rename and delete: %+v", rep)
	}
	docs := in.store.byDoc()
	if _, ok := docs["d00/f00.md"]; ok {
		t.Error("renamed file's old chunks remain")
	}
	if _, ok := docs["d02/f02.md"]; ok {
		t.Error("deleted file's chunks remain")
	}
	if len(docs["d00/renamed.md"]) == 0 {
		t.Error("renamed file has no chunks")
	}
	in.assertEqualsCleanRun()
}

func TestDeletionOnlyWithinIncludes(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": "Alpha text.", "b.txt": "Beta text."})
	in.run(nil)
	// A run limited to *.md is not responsible for b.txt: it must stay.
	rep := in.run(func(o *Options) { o.Reader.Include = []string{"*.md"} })
	if rep.FilesDeleted != 0 {
		t.Fatalf("a narrower include deleted %d documents", rep.FilesDeleted)
	}
	if len(in.store.byDoc()["b.txt"]) == 0 {
		t.Error("b.txt was removed by a run that does not select it")
	}
}

func TestModelChangeIsRefused(t *testing.T) {
	in := newIncr(t, corpus(2))
	in.run(nil)
	o := in.options()
	o.EmbedderInfo = state.Embedder{Provider: "openai", Model: "text-embedding-3-small", Dimensions: 8}
	_, err := Run(context.Background(), o)
	if !errors.Is(err, state.ErrModelChanged) || !strings.Contains(err.Error(), "--full") {
		t.Fatalf("Run with another model = %v, want ErrModelChanged saying --full", err)
	}
	o.Full = true
	in.emb.requests = 0
	rep, err := Run(context.Background(), o)
	if err != nil || rep.TokensEmbedded == 0 || rep.ChunksReused != 0 {
		t.Fatalf("--full run: %v %+v", err, rep)
	}
	o.Full = false
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("after --full the new model is recorded, got %v", err)
	}
}

func TestDryRunPlansWithoutChanging(t *testing.T) {
	files := corpus(5)
	in := newIncr(t, files)
	in.run(nil)
	in.write("new.md", "A brand new document with some words.")
	in.write("d01/f01.md", files["d01/f01.md"]+" One more sentence at the end.")
	if err := os.Remove(filepath.Join(in.root, "d02/f02.md")); err != nil {
		t.Fatal(err)
	}
	before := maps.Clone(in.store.nodes)
	in.emb.requests = 0
	rep := in.run(func(o *Options) { o.DryRun = true; o.PricePerMillionTokens = 0.02 })
	// The command line plans without opening the store.
	noStore := in.run(func(o *Options) { o.DryRun = true; o.PricePerMillionTokens = 0.02; o.Store = nil })
	if rep.FilesAdded != 1 || rep.FilesUpdated != 1 || rep.FilesDeleted != 1 || rep.FilesUnchanged != 3 {
		t.Errorf("plan: %+v", rep)
	}
	if rep.ChunksPlanned == 0 || rep.TokensPlanned == 0 || rep.EstimatedCost <= 0 {
		t.Errorf("plan has no chunks, tokens or cost: %+v", rep)
	}
	rep.Seconds, noStore.Seconds = 0, 0
	if !reflect.DeepEqual(noStore, rep) {
		t.Errorf("plan without the store %+v differs from the plan with it %+v", noStore, rep)
	}
	if in.emb.requests != 0 || !reflect.DeepEqual(before, in.store.nodes) {
		t.Error("dry run embedded or changed the store")
	}
	// The real run does what the plan said: the edited document's
	// unchanged chunks (whose file_size changed) are reused, not embedded.
	real := in.run(nil)
	if real.FilesAdded != 1 || real.FilesUpdated != 1 || real.FilesDeleted != 1 || real.TokensEmbedded != rep.TokensPlanned ||
		real.ChunksReused == 0 || real.ChunksReused != rep.ChunksReused {
		t.Errorf("real run %+v differs from plan %+v", real, rep)
	}
	in.assertEqualsCleanRun()
}

func TestFailuresAreDeadLettered(t *testing.T) {
	in := newIncr(t, map[string]string{"good.md": "Good text.", "bad.md": "Text with POISON inside."})
	in.emb.poison = "POISON"
	rep := in.run(nil)
	if rep.FilesFailed != 1 {
		t.Fatalf("report: %+v", rep)
	}
	fails, err := in.state.Failures(context.Background())
	if err != nil || len(fails) != 1 || fails[0].ID != "bad.md" || fails[0].Attempts != 1 {
		t.Fatalf("dead letters = %+v, %v", fails, err)
	}
	in.run(nil)
	fails, _ = in.state.Failures(context.Background())
	if len(fails) != 1 || fails[0].Attempts != 2 {
		t.Errorf("a failed document must be retried and counted: %+v", fails)
	}
	in.emb.poison = ""
	rep = in.run(nil)
	fails, _ = in.state.Failures(context.Background())
	if rep.FilesAdded != 1 || len(fails) != 0 {
		t.Errorf("after the cause is fixed: %+v, dead letters %v", rep, fails)
	}
}

// TestInterruptedRunsConverge cancels runs at many points and checks that
// a final run leaves exactly what a clean run does, without embedding
// chunks that were already stored.
func TestInterruptedRunsConverge(t *testing.T) {
	files := corpus(20)
	in := newIncr(t, files)
	clean := newIncr(t, nil)
	clean.root = in.root
	cleanRep := clean.run(nil)

	const interruptions, conc, batch, chunkSize = 12, 2, 3, 64
	total := int64(0)
	for i := range interruptions {
		o := in.options()
		o.BatchSize, o.EmbedConcurrency = batch, conc
		rep := in.runInterrupted(o, int64(i*2+1))
		total += rep.TokensEmbedded
		if i == 5 { // change the folder between interruptions too
			in.write("d00/f00.md", files["d00/f00.md"]+" Appended sentence.")
		}
	}
	rep := in.run(nil)
	total += rep.TokensEmbedded
	in.assertEqualsCleanRun()
	// Chunks acknowledged by the store are never embedded again: the only
	// waste an interruption may cause is the requests in flight, plus the
	// chunks of the edited document.
	bound := cleanRep.TokensEmbedded + interruptions*conc*batch*chunkSize + 2*chunkSize*3
	if total > bound {
		t.Errorf("interrupted runs embedded %d tokens in all; a clean run %d, bound %d", total, cleanRep.TokensEmbedded, bound)
	}
}

// TestEditOfHugeDocumentKeepsItsChunks edits one word of a document of
// hundreds of chunks without changing its size or metadata: the chunks
// around the edit stay in the store as they are (acknowledged to the
// manifest in several batches), only the edited ones are replaced, and a
// third run finds nothing to do.
func TestEditOfHugeDocumentKeepsItsChunks(t *testing.T) {
	body := paragraphText("huge", 3000)
	in := newIncr(t, map[string]string{"huge.md": body})
	full := in.run(nil)
	if full.ChunksWritten <= 2*keptBatch {
		t.Fatalf("the document has %d chunks; the test needs more than %d", full.ChunksWritten, 2*keptBatch)
	}
	i := strings.Index(body, "Sentence 1500 ")
	if i < 0 {
		t.Fatal("marker sentence not found")
	}
	edited := body[:i] + "Sentence 9999 " + body[i+len("Sentence 1500 "):]
	p := filepath.Join(in.root, "huge.md")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	in.store.updates = 0
	rep := in.run(nil)
	if rep.FilesUpdated != 1 || rep.ChunksWritten == 0 || rep.ChunksWritten > 4 || rep.ChunksDeleted != rep.ChunksWritten {
		t.Errorf("after a one-word edit: %+v; want a few chunks written and as many deleted", rep)
	}
	if rep.ChunksReused != full.ChunksWritten-rep.ChunksWritten || in.store.updates != 0 {
		t.Errorf("reused %d chunks with %d metadata updates; want %d reused as they are", rep.ChunksReused, in.store.updates, full.ChunksWritten-rep.ChunksWritten)
	}
	d, _, err := in.state.Doc(context.Background(), "huge.md")
	if err != nil || len(d.NodeIDs) != full.ChunksWritten {
		t.Errorf("the manifest records %d nodes, %v; want %d", len(d.NodeIDs), err, full.ChunksWritten)
	}
	if third := in.run(nil); third.FilesUnchanged != 1 || third.ChunksWritten != 0 {
		t.Errorf("third run: %+v", third)
	}
	in.assertEqualsCleanRun()
}

// localFake is fakeEmbedder declaring itself local, like embedder.Hash.
type localFake struct{ *fakeEmbedder }

func (localFake) Local() bool { return true }

// TestJournalOnlyForRemoteEmbedders makes the store reject a document's
// chunks after they were embedded: a remote embedder's vectors stay in the
// journal for the next run, a local embedder's are never written there.
func TestJournalOnlyForRemoteEmbedders(t *testing.T) {
	body := paragraphText("journal", 20)
	for _, tc := range []struct {
		name    string
		local   bool
		wantAny bool
	}{{"remote", false, true}, {"local", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": body})
			in.store.reject = "Sentence 3 "
			rep := in.run(func(o *Options) {
				if tc.local {
					o.Embedder = localFake{in.emb}
				}
			})
			if rep.FilesFailed != 1 || rep.TokensEmbedded == 0 {
				t.Fatalf("report %+v, want the document embedded and failed", rep)
			}
			var keys []string
			for _, c := range newSplitter(t, 64, 8).Split(body) {
				keys = append(keys, textKey(c.Text))
			}
			saved, err := in.state.LoadVectors(context.Background(), state.Embedder{Provider: "fake", Dimensions: 8}.Key(), keys)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(saved) > 0; got != tc.wantAny {
				t.Errorf("journal holds %d of the document's %d vectors; want some: %v", len(saved), len(keys), tc.wantAny)
			}
		})
	}
}

// TestManifestFailureWhileKeepingStopsTheRun makes the manifest refuse to
// acknowledge nodes (a trigger on its pending table) during a run in which
// a changed document keeps every one of its chunks as they are. That is an
// error of the manifest, not of the document: the run stops with it, as it
// does when acknowledging written nodes fails, instead of failing the
// document or, when the acknowledgement comes mid-document, leaving the
// document never completed, its chunks neither written nor skipped.
func TestManifestFailureWhileKeepingStopsTheRun(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sentences int // of the document: keptBatch chunks or more are acknowledged mid-document
	}{
		{"acknowledged at the end of the document", 20},
		{"acknowledged mid-document", 900},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			body := paragraphText("alpha", tt.sentences)
			in := newIncr(t, map[string]string{"a.md": body})
			stable := func(o *Options) { o.Source = stableMetadata(o.Reader) }
			first := in.run(stable)
			if first.ChunksWritten < 2 || (tt.sentences > 100 && first.ChunksWritten < keptBatch) {
				t.Fatalf("first run wrote %d chunks", first.ChunksWritten)
			}
			// A changed size, the same chunks and metadata: every chunk is
			// kept as it is.
			in.write("a.md", body+"\n\n")

			db, err := sql.Open("sqlite", in.statePath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, `CREATE TRIGGER refuse_ack BEFORE INSERT ON pending WHEN NEW.acked
				BEGIN SELECT RAISE(ABORT, 'manifest refuses acknowledgements'); END`); err != nil {
				t.Fatal(err)
			}
			stats := new(Stats)
			o := in.options()
			stable(&o)
			o.Stats = stats
			rep, err := Run(ctx, o)
			if err == nil || !strings.Contains(err.Error(), "manifest refuses acknowledgements") {
				t.Fatalf("Run = %v (report %+v), want the manifest's error", err, rep)
			}
			if s := stats.Snapshot(); s.ChunksDone != 0 || s.FilesFailed != 0 {
				t.Errorf("%d chunks written, %d documents failed; want none: only the manifest failed", s.ChunksDone, s.FilesFailed)
			}
		})
	}
}

// TestSplitterChangeSplitsAgain: a run with other splitter settings than
// the last complete run recorded splits every document again, so the store
// holds what a clean run with the new settings makes; the next run with
// the same settings finds everything unchanged.
func TestSplitterChangeSplitsAgain(t *testing.T) {
	in := newIncr(t, corpus(6))
	in.run(nil) // baseOptions' splitter: 64 / 8
	other := func(o *Options) { o.Splitter = newSplitter(t, 100, 10) }
	rep := in.run(other)
	if rep.FilesUnchanged != 0 || rep.FilesIngested != 6 || rep.ChunksWritten == 0 {
		t.Errorf("run with chunkSize 100: %+v; want all 6 documents split again", rep)
	}
	in.assertEqualsCleanRunWith(other)
	if rep := in.run(other); rep.FilesUnchanged != 6 || rep.ChunksWritten != 0 {
		t.Errorf("second run with chunkSize 100: %+v; want all unchanged", rep)
	}
	if rep := in.run(nil); rep.FilesUnchanged != 0 || rep.FilesIngested != 6 {
		t.Errorf("back to chunkSize 64: %+v; want all 6 split again", rep)
	}
	in.assertEqualsCleanRun()
}

// TestReplacedFileWithSameSizeAndTimeIsRead: files that trade places, or
// are replaced by a link to another file, keep their sizes and
// modification times; their change stamps (inode, change time) tell the
// run to read them, so the store holds their new contents.
func TestReplacedFileWithSameSizeAndTimeIsRead(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no change stamps on " + runtime.GOOS)
	}
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := newIncr(t, map[string]string{"a.md": "Alpha text here.", "b.md": "Bravo text here.", "c.md": "Charl text here."})
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if err := os.Chtimes(filepath.Join(in.root, name), when, when); err != nil {
			t.Fatal(err)
		}
	}
	in.run(nil)
	p := func(name string) string { return filepath.Join(in.root, name) }
	for _, step := range [][2]string{{"a.md", "tmp"}, {"b.md", "a.md"}, {"tmp", "b.md"}} { // swap a and b
		if err := os.Rename(p(step[0]), p(step[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(p("c.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.md", p("c.md")); err != nil { // c now reads a's (Bravo) text
		t.Fatal(err)
	}
	rep := in.run(nil)
	if rep.FilesUpdated != 3 || rep.FilesUnchanged != 0 {
		t.Errorf("run after the swap: %+v; want 3 documents updated", rep)
	}
	if got := in.texts("a.md"); !slices.Equal(got, []string{"Bravo text here."}) {
		t.Errorf("a.md holds %q, want Bravo's text", got)
	}
	in.assertEqualsCleanRun()
	if rep := in.run(nil); rep.FilesUnchanged != 3 {
		t.Errorf("next run: %+v; want all 3 unchanged", rep)
	}
}

// TestHashFileStopsWithItsContext: hashing a touched file's content stops
// when the run's context is done, within one block, instead of reading the
// whole file; with a live context it is the file's SHA-256.
func TestHashFileStopsWithItsContext(t *testing.T) {
	body := strings.Repeat("A line of text that is hashed, not split.\n", 4*hashBlock/40)
	root := writeTree(t, map[string]string{"big.md": body})
	f := reader.File{ID: "big.md", Path: filepath.Join(root, "big.md"), Size: int64(len(body))}

	hash, n, err := hashFile(context.Background(), f)
	if sum := sha256.Sum256([]byte(body)); err != nil || hash != hex.EncodeToString(sum[:]) || n != int64(len(body)) {
		t.Fatalf("hashFile() = %s, %d, %v; want the file's SHA-256 and %d bytes", hash, n, err, len(body))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hash, n, err = hashFile(ctx, f)
	if !errors.Is(err, context.Canceled) || hash != "" || n > hashBlock {
		t.Errorf("hashFile(cancelled) = %q, %d bytes, %v; want context.Canceled after at most %d bytes", hash, n, err, hashBlock)
	}
}

// TestGrowingFileWithoutVolatileMetadata: a file that grows (a log) is read
// again, its earlier chunks reused, on every run. Its file_size changes
// with each write, so by default every reused chunk gets its metadata
// rewritten; with file_size and last_modified_date left out
// (source.excludeFileMetadata), no chunk is rewritten and the nodes carry
// neither key.
func TestGrowingFileWithoutVolatileMetadata(t *testing.T) {
	tests := []struct {
		name    string
		exclude []string
		rewrite bool // every reused chunk's metadata is rewritten
	}{
		{"every file key", nil, true},
		{"without file_size and last_modified_date", []string{reader.KeyFileSize, reader.KeyLastModifiedDate}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := paragraphText("log", 40)
			in := newIncr(t, map[string]string{"app.md": body})
			exclude := func(o *Options) { o.Reader.ExcludeFileMetadata = tt.exclude }
			in.run(exclude)
			in.write("app.md", body+"\n\nOne more line was logged.")
			in.store.updates = 0
			rep := in.run(exclude)
			if rep.FilesUpdated != 1 || rep.ChunksReused == 0 {
				t.Fatalf("second run: %d updated, %d chunks reused; want the file read again and its earlier chunks reused", rep.FilesUpdated, rep.ChunksReused)
			}
			if got, want := in.store.updates, map[bool]int{true: rep.ChunksReused}[tt.rewrite]; got != want {
				t.Errorf("%d chunks' metadata rewritten, want %d (of %d reused)", got, want, rep.ChunksReused)
			}
			for id, n := range in.store.nodes {
				_, size := n.Metadata[reader.KeyFileSize]
				_, date := n.Metadata[reader.KeyLastModifiedDate]
				if size != tt.rewrite || date != tt.rewrite || n.Metadata[reader.KeyFileName] != "app.md" {
					t.Errorf("node %s metadata %v", id, n.Metadata)
				}
			}
			in.assertEqualsCleanRunWith(exclude)
		})
	}
}

// killedAtUpdate is a memStore whose UpdateMetadata rewrites the nodes and
// then stops the run, as a process killed right after the store took the
// request would: nothing after it runs, in the pipeline or the manifest.
type killedAtUpdate struct {
	*memStore
	kill context.CancelFunc
}

func (s killedAtUpdate) UpdateMetadata(ctx context.Context, nodes []sink.Node) error {
	if err := s.memStore.UpdateMetadata(ctx, nodes); err != nil {
		return err
	}
	s.kill()
	return context.Canceled
}

// TestMetadataRewriteCutShortThenReverted: a run killed while it rewrote the
// metadata of a document's committed chunks (its source.metadata rule
// changed) leaves chunks with the new metadata under a record of the old.
// Should the change be undone before the next run, that run must still
// give every chunk the document's metadata: the record no longer says what
// the store holds.
func TestMetadataRewriteCutShortThenReverted(t *testing.T) {
	in := newIncr(t, map[string]string{"a.md": paragraphText("alpha", 30)})
	tags := func(tag string) func(*Options) {
		return func(o *Options) {
			o.Reader.Metadata = []reader.MetadataRule{{Match: "*.md", Set: map[string]any{"tag": tag}}}
		}
	}
	in.run(tags("old"))
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	o := in.options()
	tags("new")(&o)
	o.Store = killedAtUpdate{in.store, kill}
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want it stopped", err)
	}
	changed := 0
	for _, n := range in.store.nodes {
		if n.Metadata["tag"] == "new" {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no chunk got the new metadata before the run stopped")
	}
	rep := in.run(tags("old"))
	if rep.FilesUpdated != 1 || rep.TokensEmbedded != 0 {
		t.Errorf("next run: %d updated, %d tokens embedded; want the document read again and nothing embedded", rep.FilesUpdated, rep.TokensEmbedded)
	}
	in.assertEqualsCleanRunWith(tags("old"))
}

// TestRacyFilesAreHashedNextRun: a file modified less than racyWindow
// before a run started may be written again within the granularity of its
// times without changing them, so the run records racyModTime instead of
// its time, and the next run compares its content hash (reading it) rather
// than trust its times; once its times have settled they are recorded, and
// the fast path reads nothing again. A file modified long before is
// recorded with its own time from the start.
func TestRacyFilesAreHashedNextRun(t *testing.T) {
	in := newIncr(t, map[string]string{"old.md": "Written long ago.", "new.md": "Written just now."})
	newPath := filepath.Join(in.root, "new.md")
	now := time.Now()
	if err := os.Chtimes(newPath, now, now); err != nil {
		t.Fatal(err)
	}
	in.run(nil)
	ctx := context.Background()
	stamp := func(id string) time.Time {
		t.Helper()
		st, ok, err := in.state.Stamp(ctx, id)
		if err != nil || !ok {
			t.Fatalf("no stamp of %s: %v", id, err)
		}
		return st.ModTime
	}
	old, err := os.Stat(filepath.Join(in.root, "old.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stamp("old.md"); !got.Equal(old.ModTime()) {
		t.Errorf("old.md recorded with %v, want its modification time %v", got, old.ModTime())
	}
	if got := stamp("new.md"); !got.Equal(racyModTime) {
		t.Errorf("new.md, modified as the run started, recorded with %v, want racyModTime", got)
	}
	size := int64(len("Written just now."))
	if rep := in.run(nil); rep.FilesUnchanged != 2 || rep.BytesRead != size || rep.TokensEmbedded != 0 {
		t.Errorf("second run: %d unchanged, %d bytes read, %d tokens embedded; want 2, %d (new.md hashed), 0",
			rep.FilesUnchanged, rep.BytesRead, rep.TokensEmbedded, size)
	}
	settled := now.Add(-time.Hour)
	if err := os.Chtimes(newPath, settled, settled); err != nil {
		t.Fatal(err)
	}
	if rep := in.run(nil); rep.FilesUnchanged != 2 || rep.BytesRead != size {
		t.Errorf("run after new.md settled: %d unchanged, %d bytes read; want 2, %d", rep.FilesUnchanged, rep.BytesRead, size)
	}
	if got := stamp("new.md"); !got.Equal(settled) {
		t.Errorf("new.md, settled, recorded with %v, want %v", got, settled)
	}
	if rep := in.run(nil); rep.FilesUnchanged != 2 || rep.BytesRead != 0 {
		t.Errorf("last run: %d unchanged, %d bytes read; want 2, 0", rep.FilesUnchanged, rep.BytesRead)
	}
}
