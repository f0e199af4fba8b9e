package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/splitter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeEmbedder returns a deterministic vector per text. Texts containing
// poison are rejected as bad input, like a provider's 400.
type fakeEmbedder struct {
	dims     int
	badDims  int // if > 0, return vectors of this length
	poison   string
	mu       sync.Mutex
	requests int
	block    chan struct{} // if set, Embed waits on it or ctx
	entered  chan struct{} // if set, closed when Embed is first called
	once     sync.Once
}

var errBadInput = fmt.Errorf("provider: 400 input rejected: %w", embedder.ErrBadRequest)

func (e *fakeEmbedder) Dimensions() int { return e.dims }

func (e *fakeEmbedder) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	e.mu.Lock()
	e.requests++
	e.mu.Unlock()
	if e.entered != nil {
		e.once.Do(func() { close(e.entered) })
	}
	if e.block != nil {
		select {
		case <-e.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([][]float32, len(in))
	for i, t := range in {
		if e.poison != "" && strings.Contains(t.Text, e.poison) {
			return nil, errBadInput
		}
		n := e.dims
		if e.badDims > 0 {
			n = e.badDims
		}
		v := make([]float32, n)
		v[len(t.Text)%n] = 1
		out[i] = v
	}
	return out, nil
}

// memStore is an in-memory Writer. Nodes whose text contains reject are
// refused with a *sink.WriteError.
type memStore struct {
	mu         sync.Mutex
	nodes      map[string]sink.Node
	adds       int
	deletes    int // calls of Delete and DeleteNodes
	docDeletes int // calls of Delete
	updates    int
	reject     string
	down       error // when set, Add rejects every node and joins down, as a store that cannot be written does
}

func newMemStore() *memStore { return &memStore{nodes: map[string]sink.Node{}} }

func (s *memStore) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adds++
	werr := &sink.WriteError{Failed: map[string]error{}}
	var ids []string
	for _, n := range nodes {
		if s.reject != "" && strings.Contains(n.Text, s.reject) {
			werr.Failed[n.ID] = errors.New("rejected by test store")
			continue
		}
		s.nodes[n.ID] = n
		ids = append(ids, n.ID)
	}
	if s.down != nil {
		for _, n := range nodes {
			werr.Failed[n.ID] = s.down
		}
		return nil, errors.Join(werr, s.down)
	}
	if len(werr.Failed) > 0 {
		return ids, werr
	}
	return ids, nil
}

func (s *memStore) DeleteNodes(_ context.Context, ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	for _, id := range ids {
		delete(s.nodes, id)
	}
	return nil
}

func (s *memStore) Delete(_ context.Context, refDocID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	s.docDeletes++
	for id, n := range s.nodes {
		if n.RefDocID == refDocID {
			delete(s.nodes, id)
		}
	}
	return nil
}

// UpdateMetadata makes memStore a sink.MetadataUpdater.
func (s *memStore) UpdateMetadata(_ context.Context, nodes []sink.Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates += len(nodes)
	for _, n := range nodes {
		old, ok := s.nodes[n.ID]
		if !ok {
			return fmt.Errorf("update of unknown node %s", n.ID)
		}
		old.Metadata, old.StartChar, old.EndChar = n.Metadata, n.StartChar, n.EndChar
		s.nodes[n.ID] = old
	}
	return nil
}

func (s *memStore) byDoc() map[string][]sink.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]sink.Node{}
	for _, n := range s.nodes {
		out[n.RefDocID] = append(out[n.RefDocID], n)
	}
	for _, ns := range out {
		slices.SortFunc(ns, func(a, b sink.Node) int { return a.StartChar - b.StartChar })
	}
	return out
}

// writeTree writes files under a new folder and dates them an hour back,
// as the files of a folder that is not being written: a run records their
// times as they are, not as racy (see racyModTime).
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	settled := time.Now().Add(-time.Hour)
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, settled, settled); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func paragraphText(seed string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Sentence %d about %s goes here, with a few more words to count. ", i, seed)
		if i%7 == 6 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

func newSplitter(t *testing.T, size, overlap int) *splitter.Splitter {
	t.Helper()
	sp, err := splitter.New(splitter.Config{ChunkSize: size, ChunkOverlap: overlap})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func baseOptions(t *testing.T, root string, emb embedder.Embedder, store Writer) Options {
	cfg := reader.DefaultConfig()
	cfg.Dir = root
	cfg.Include = []string{"**/*.md", "**/*.txt", "**/*.rst"} // the default reads *.md only
	return Options{Reader: cfg, Splitter: newSplitter(t, 64, 8), Embedder: emb, Store: store, BatchSize: 7}
}

func TestRunIngestsAndReportsFailures(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.md":            paragraphText("alpha", 40),
		"sub/b.txt":       paragraphText("beta", 25),
		"sub/deep/c.rst":  "A single short sentence.",
		"empty.md":        "",
		"binary.txt":      "abc\x00def",
		"invalid.md":      "valid start \xff\xfe then garbage",
		"ignored.go":      "package x",
		".hidden/skip.md": "hidden",
	})
	store := newMemStore()
	emb := &fakeEmbedder{dims: 16}
	var mu sync.Mutex
	var results []DocumentResult
	opts := baseOptions(t, root, emb, store)
	opts.OnDocument = func(_ context.Context, d DocumentResult) error {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, d)
		return nil
	}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FilesSeen != 6 || rep.FilesIngested != 3 || rep.FilesFailed != 3 {
		t.Errorf("seen/ingested/failed = %d/%d/%d, want 6/3/3", rep.FilesSeen, rep.FilesIngested, rep.FilesFailed)
	}
	var failed []string
	for _, f := range rep.Failures {
		failed = append(failed, f.Path)
		if f.Error == "" {
			t.Errorf("failure %s has no reason", f.Path)
		}
	}
	if want := []string{"binary.txt", "empty.md", "invalid.md"}; !slices.Equal(failed, want) {
		t.Errorf("failures = %v, want %v", failed, want)
	}
	docs := store.byDoc()
	if len(docs) != 3 {
		t.Fatalf("store has documents %v, want a.md, sub/b.txt, sub/deep/c.rst", keys(docs))
	}
	sp := newSplitter(t, 64, 8)
	for id, body := range map[string]string{"a.md": paragraphText("alpha", 40), "sub/b.txt": paragraphText("beta", 25), "sub/deep/c.rst": "A single short sentence."} {
		want := sp.Split(body)
		got := docs[id]
		if len(got) != len(want) {
			t.Errorf("%s: %d nodes, want %d chunks", id, len(got), len(want))
			continue
		}
		for i, n := range got {
			if n.Text != want[i].Text || n.StartChar != want[i].Start || n.EndChar != want[i].End {
				t.Errorf("%s chunk %d differs from the splitter's", id, i)
			}
			if n.Metadata["file_name"] == nil || len(n.Embedding) != 16 {
				t.Errorf("%s chunk %d: metadata %v, %d dims", id, i, n.Metadata, len(n.Embedding))
			}
		}
	}
	if rep.ChunksWritten != len(store.nodes) {
		t.Errorf("ChunksWritten = %d, store holds %d", rep.ChunksWritten, len(store.nodes))
	}
	if rep.TokensEmbedded == 0 || rep.BytesRead == 0 {
		t.Errorf("TokensEmbedded = %d, BytesRead = %d; want both > 0", rep.TokensEmbedded, rep.BytesRead)
	}
	if len(results) != 6 {
		t.Errorf("OnDocument called %d times, want 6", len(results))
	}
	for _, r := range results {
		if r.Err == nil && len(r.Hash) != 64 {
			t.Errorf("%s: hash %q, want hex SHA-256", r.File.ID, r.Hash)
		}
	}

	// A second run writes the same node ids: nothing is duplicated.
	before := len(store.nodes)
	if _, err := Run(context.Background(), baseOptions(t, root, emb, store)); err != nil {
		t.Fatal(err)
	}
	if len(store.nodes) != before {
		t.Errorf("re-run changed the node count from %d to %d", before, len(store.nodes))
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestBadInputFailsOnlyItsDocument(t *testing.T) {
	files := map[string]string{"poison.md": "Some text. POISON here. More text."}
	for i := range 10 {
		files[fmt.Sprintf("ok%02d.md", i)] = paragraphText(fmt.Sprint("doc", i), 12)
	}
	root := writeTree(t, files)
	store := newMemStore()
	rep, err := Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 8, poison: "POISON"}, store))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FilesFailed != 1 || rep.Failures[0].Path != "poison.md" || !strings.Contains(rep.Failures[0].Error, "400") {
		t.Fatalf("failures = %+v, want only poison.md with the provider's message", rep.Failures)
	}
	if rep.FilesIngested != 10 || len(store.byDoc()) != 10 {
		t.Errorf("ingested %d, store has %d documents; want 10", rep.FilesIngested, len(store.byDoc()))
	}
}

func TestStoreRejectionFailsDocument(t *testing.T) {
	root := writeTree(t, map[string]string{"a.md": "Fine text here.", "b.md": "This one is REJECTED by the store."})
	store := newMemStore()
	store.reject = "REJECTED"
	rep, err := Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 4}, store))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FilesFailed != 1 || rep.Failures[0].Path != "b.md" || rep.FilesIngested != 1 || rep.ChunksWritten != 1 {
		t.Errorf("report = %+v", rep)
	}
}

// TestUnavailableStoreStopsRun checks that a store that refuses every
// write (credentials, missing index, unreachable) stops the run with its
// error instead of failing each document in turn.
func TestUnavailableStoreStopsRun(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("d%02d.md", i)] = paragraphText(fmt.Sprint("doc", i), 10)
	}
	root := writeTree(t, files)
	store := newMemStore()
	store.down = fmt.Errorf("403 Forbidden: %w", sink.ErrUnavailable)
	rep, err := Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 4}, store))
	if !errors.Is(err, sink.ErrUnavailable) {
		t.Fatalf("Run error = %v, want one wrapping sink.ErrUnavailable", err)
	}
	if rep.FilesFailed != 0 || rep.FilesIngested != 0 {
		t.Errorf("report = %d ingested, %d failed; a store that is down must not turn into per-document failures", rep.FilesIngested, rep.FilesFailed)
	}
	if store.adds >= len(files) {
		t.Errorf("%d writes were attempted; the run should stop at the first refusal", store.adds)
	}
}

func TestDimensionMismatchStopsBeforeWriting(t *testing.T) {
	root := writeTree(t, map[string]string{"a.md": paragraphText("x", 30)})
	store := newMemStore()
	_, err := Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 8, badDims: 5}, store))
	var de *sink.DimensionError
	if !errors.As(err, &de) || de.Want != 8 || de.Got != 5 {
		t.Fatalf("Run error = %v, want a DimensionError 8 vs 5", err)
	}
	if store.adds != 0 {
		t.Errorf("store was written %d times before the mismatch was caught", store.adds)
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.md", i)] = paragraphText(fmt.Sprint(i), 30)
	}
	root := writeTree(t, files)
	emb := &fakeEmbedder{dims: 4, block: make(chan struct{}), entered: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	opts := baseOptions(t, root, emb, newMemStore())
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(ctx, opts)
		done <- result{rep, err}
	}()
	// Wait until the pipeline is blocked in the embedder.
	select {
	case <-emb.entered:
	case res := <-done:
		t.Fatalf("Run returned before embedding: %v", res.err)
	}
	cancel()
	select {
	case res := <-done:
		if !errors.Is(res.err, context.Canceled) {
			t.Errorf("Run error = %v, want context.Canceled", res.err)
		}
		if rep := res.rep; rep == nil || rep.Complete || !rep.Interrupted || !strings.HasPrefix(rep.Error, "interrupted (context canceled)") || !strings.Contains(rep.Error, "run again to finish") {
			t.Errorf("report of the interrupted run = %+v, want Complete false, Interrupted and the error", rep)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop within 5s of cancellation")
	}
}

// TestReportSaysWhetherTheRunFinished: a run stopped by the store is
// incomplete and says why, without claiming an interruption; a run that
// finishes is complete.
func TestReportSaysWhetherTheRunFinished(t *testing.T) {
	root := writeTree(t, map[string]string{"a.md": "Alpha.", "b.md": "Bravo."})
	store := newMemStore()
	store.down = fmt.Errorf("disk full: %w", sink.ErrUnavailable) // stops the run
	rep, err := Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 4}, store))
	if err == nil || rep == nil || rep.Complete || rep.Interrupted || !strings.Contains(rep.Error, "disk full") {
		t.Errorf("store down: err %v, report %+v; want an incomplete report with the error, not interrupted", err, rep)
	}
	store.down = nil
	rep, err = Run(context.Background(), baseOptions(t, root, &fakeEmbedder{dims: 4}, store))
	if err != nil || !rep.Complete || rep.Error != "" || rep.Interrupted {
		t.Errorf("clean run: err %v, report %+v; want Complete and no error", err, rep)
	}
}

func TestDryRunEmbedsAndWritesNothing(t *testing.T) {
	root := writeTree(t, map[string]string{"a.md": paragraphText("a", 20), "b.md": paragraphText("b", 5)})
	cfg := reader.DefaultConfig()
	cfg.Dir = root
	rep, err := Run(context.Background(), Options{Reader: cfg, Splitter: newSplitter(t, 64, 8), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	sp := newSplitter(t, 64, 8)
	want, tokens := 0, 0
	for _, body := range []string{paragraphText("a", 20), paragraphText("b", 5)} {
		for _, c := range sp.Split(body) {
			want++
			tokens += c.Tokens
		}
	}
	if !rep.DryRun || rep.ChunksPlanned != want || rep.TokensPlanned != int64(tokens) || rep.ChunksWritten != 0 || rep.TokensEmbedded != 0 {
		t.Errorf("dry-run report = %+v, want %d chunks / %d tokens planned", rep, want, tokens)
	}
}

func TestLargeFileIsStreamedWithinBudget(t *testing.T) {
	big := paragraphText("streamed 日本 🙂", 3000) // ~250 KB, with 3- and 4-byte characters
	root := writeTree(t, map[string]string{"big.md": big, "small.md": "tiny file."})
	store := newMemStore()
	opts := baseOptions(t, root, &fakeEmbedder{dims: 4}, store)
	opts.MemoryBudget = 64 << 10 // smaller than big.md: it must be streamed
	rep, splits := runSplitLogged(t, opts)
	if rep.FilesIngested != 2 {
		t.Fatalf("report = %+v", rep)
	}
	// Chunks match the splitter's whichever way a file is read: only the
	// log tells that big.md was not read whole.
	splits.check(t, "big.md", true)
	splits.check(t, "small.md", false)
	nodes := store.byDoc()["big.md"]
	if len(nodes) < 100 {
		t.Fatalf("big.md gave %d nodes", len(nodes))
	}
	for _, n := range nodes {
		if utf16Slice(big, n.StartChar, n.EndChar) != n.Text {
			t.Fatalf("node offsets %d:%d do not slice the source in UTF-16 code units", n.StartChar, n.EndChar)
		}
	}
}

// utf16Slice returns s[start:end] in UTF-16 code units, as JavaScript's
// s.slice(start, end).
func utf16Slice(s string, start, end int) string {
	u := utf16.Encode([]rune(s))
	if start < 0 || end > len(u) || start > end {
		return fmt.Sprintf("<offsets %d:%d out of %d units>", start, end, len(u))
	}
	return string(utf16.Decode(u[start:end]))
}

// TestStreamThreshold checks that a document is split as a stream exactly
// when its file is larger than Options.StreamThreshold (by default
// MemoryBudget/32), as the document's debug log reports.
func TestStreamThreshold(t *testing.T) {
	body := paragraphText("threshold Ü 🙂", 40)
	size := int64(len(body))
	tests := []struct {
		name      string
		threshold int64
		budget    int64
		want      bool
	}{
		{name: "one byte above", threshold: size - 1, want: true},
		{name: "equal", threshold: size, want: false},
		{name: "below", threshold: size + 1000, want: false},
		{name: "default above", budget: 32 * (size - 1), want: true},
		{name: "default equal", budget: 32 * size, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"doc.md": body})
			store := newMemStore()
			opts := baseOptions(t, root, &fakeEmbedder{dims: 4}, store)
			opts.StreamThreshold = tt.threshold
			opts.MemoryBudget = tt.budget
			rep, splits := runSplitLogged(t, opts)
			if rep.FilesIngested != 1 {
				t.Fatalf("report = %+v, want doc.md ingested", rep)
			}
			splits.check(t, "doc.md", tt.want)
			want := newSplitter(t, 64, 8).Split(body)
			got := store.byDoc()["doc.md"]
			if len(got) != len(want) {
				t.Fatalf("%d nodes, want the splitter's %d chunks", len(got), len(want))
			}
			for i, n := range got {
				if n.Text != want[i].Text || n.StartChar != want[i].CharStart || n.EndChar != want[i].CharEnd || utf16Slice(body, n.StartChar, n.EndChar) != n.Text {
					t.Errorf("node %d = %d:%d, want the splitter's chunk %d:%d (UTF-16 code units)", i, n.StartChar, n.EndChar, want[i].CharStart, want[i].CharEnd)
				}
			}
		})
	}
}

// splitLog is a slog.Handler that records the "streamed" attribute of each
// "document split" debug log, by document id.
type splitLog struct {
	mu       sync.Mutex
	streamed map[string]slog.Value
}

func newSplitLog() *splitLog { return &splitLog{streamed: map[string]slog.Value{}} }

// runSplitLogged runs opts with a splitLog for its logger and returns the
// report and the log; an error fails t.
func runSplitLogged(t *testing.T, opts Options) (*Report, *splitLog) {
	t.Helper()
	splits := newSplitLog()
	opts.Logger = slog.New(splits)
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, splits
}

func (l *splitLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *splitLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "document split" {
		return nil
	}
	var doc string
	var streamed slog.Value // zero (KindAny, nil) if the attribute is missing
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "doc":
			doc = a.Value.String()
		case "streamed":
			streamed = a.Value
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streamed[doc] = streamed
	return nil
}

// WithAttrs and WithGroup keep recording into l: the pipeline logs with
// neither.
func (l *splitLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *splitLog) WithGroup(string) slog.Handler      { return l }

// check fails t unless doc was logged as split with streamed == want.
func (l *splitLog) check(t *testing.T, doc string, want bool) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.streamed[doc]
	switch {
	case !ok:
		t.Errorf("%s: no \"document split\" log", doc)
	case v.Kind() != slog.KindBool:
		t.Errorf("%s: \"document split\" log has streamed=%v, want a bool", doc, v)
	case v.Bool() != want:
		t.Errorf("%s: streamed = %t, want %t", doc, v.Bool(), want)
	}
}

// listedAs is a FileSource that lists the files ids of root, each with the
// size size, whatever their size on disk: files that grew after they were
// listed.
func listedAs(root string, size int64, ids ...string) FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, id := range ids {
			f := reader.File{ID: id, Path: filepath.Join(root, id), Size: size}
			if err := fn(f, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestFileLargerThanListed checks that a file that holds more than its
// listed size says is split as a stream once its text passes
// Options.StreamThreshold (not read whole, past the memory budget), with
// the chunks the splitter gives its whole text: grown before it was opened,
// and, on Linux, a /proc file whose size says 0 (as one that grows while
// being read does: the switch to a stream after reading the threshold).
func TestFileLargerThanListed(t *testing.T) {
	body := paragraphText("grown Ü 🙂", 200)
	many := map[string]string{}
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("g%02d.md", i)
		many[id], ids = body, append(ids, id)
	}
	tests := []struct {
		name      string
		files     map[string]string
		source    func(root string) FileSource
		threshold int64
		budget    int64
		text      func(t *testing.T) string // the text of a file not in files, "version"
	}{
		{
			name:   "grew before it was opened",
			files:  map[string]string{"doc.md": body},
			source: func(root string) FileSource { return listedAs(root, 13, "doc.md") },
			budget: 32 << 10, // threshold 1 KiB
		},
		{
			// Four at a time each hold 60% of their size, together 96% of
			// the budget, and want the rest, more than is left: none may
			// wait for more while holding some.
			name:   "many grew at once",
			files:  many,
			source: func(root string) FileSource { return listedAs(root, int64(len(body))*6/10, ids...) },
			budget: int64(len(body)) * 25 / 10,
		},
		{
			name:  "a /proc file that says 0 bytes",
			files: map[string]string{},
			source: func(string) FileSource {
				return func(ctx context.Context, fn func(reader.File, error) error) error {
					return fn(reader.File{ID: "version", Path: "/proc/version"}, nil)
				}
			},
			threshold: 32,
			text: func(t *testing.T) string {
				b, err := os.ReadFile("/proc/version")
				if err != nil || len(b) <= 32 {
					t.Skipf("no /proc/version of more than 32 bytes here (%v)", err)
				}
				return string(b)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			store := newMemStore()
			opts := baseOptions(t, root, &fakeEmbedder{dims: 4}, store)
			opts.Source = tt.source(root)
			opts.SplitConcurrency = 4
			opts.MemoryBudget, opts.StreamThreshold = tt.budget, tt.threshold
			want := map[string]string{}
			for id, text := range tt.files {
				want[id] = text
			}
			if tt.text != nil {
				want["version"] = tt.text(t)
			}
			rep, splits := runSplitLogged(t, opts)
			if rep.FilesIngested != len(want) || rep.FilesFailed != 0 {
				t.Fatalf("report = %+v, want %d files ingested", rep, len(want))
			}
			for id, text := range want {
				splits.check(t, id, true)
				chunks := newSplitter(t, 64, 8).Split(text)
				got := store.byDoc()[id]
				if len(got) != len(chunks) {
					t.Fatalf("%s: %d nodes, want the splitter's %d chunks", id, len(got), len(chunks))
				}
				for i, n := range got {
					if n.Text != chunks[i].Text || n.StartChar != chunks[i].CharStart {
						t.Errorf("%s: node %d = %q at %d, want the splitter's chunk %q at %d", id, i, n.Text, n.StartChar, chunks[i].Text, chunks[i].CharStart)
					}
				}
			}
		})
	}
}
