package watch

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
	"github.com/sluice-dev/sluice/splitter"
)

// testDebounce keeps the tests fast; the default debounce is measured by
// BenchmarkSaveToQueryable.
const testDebounce = 30 * time.Millisecond

// waitLimit bounds every wait; tests only reach it when something is wrong.
const waitLimit = 15 * time.Second

// testDims is the embedding size of the hash embedder in tests.
const testDims = 16

// env is a watched folder with a real local store and manifest.
type env struct {
	t       testing.TB
	root    string // the watched folder
	outside string // a folder next to it, for moves in and out
	dbDir   string
	cfg     Config
	include []string // source.include; empty: the default
	exclude []string
	own     []string    // reader.Config.Own
	tweak   func(*Loop) // applied by start before Run

	attempts map[string]int // failure counts remembered by a scenario

	store *local.Store
	state *state.Store
	loop  *Loop
	log   *roundLog
	fake  *fakeEvents // the event source of startFake

	cancel context.CancelFunc
	done   chan error
}

func newEnv(t testing.TB) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{
		t: t, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"), dbDir: filepath.Join(base, "db"),
		cfg: Config{Debounce: testDebounce},
	}
	for _, d := range []string{e.root, e.outside, e.dbDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(e.close)
	return e
}

func (e *env) readerConfig() reader.Config {
	return reader.Config{Dir: e.root, Include: e.include, Exclude: e.exclude, Own: e.own}
}

// options are the pipeline settings of the loop and of clean runs.
func (e *env) options(store pipeline.Writer, st *state.Store) pipeline.Options {
	split, err := splitter.New(splitter.Config{ChunkSize: 160, ChunkOverlap: 0})
	if err != nil {
		e.t.Fatal(err)
	}
	return pipeline.Options{
		Reader: e.readerConfig(), Splitter: split, Embedder: embedder.NewHash(testDims), Store: store, State: st,
		EmbedderInfo: state.Embedder{Provider: "hash", Dimensions: testDims}, BatchSize: 16, MaxWait: time.Millisecond,
		SplitConcurrency: 2, EmbedConcurrency: 2,
	}
}

func (e *env) open() {
	e.t.Helper()
	ctx := context.Background()
	var err error
	if e.store, err = local.Open(ctx, local.Config{Path: filepath.Join(e.dbDir, "index.db")}); err != nil {
		e.t.Fatal(err)
	}
	if e.state, err = state.Open(ctx, filepath.Join(e.dbDir, "state.db"), "test"); err != nil {
		e.t.Fatal(err)
	}
}

// start opens the store and manifest and runs a Loop over the folder.
func (e *env) start(mod func(*Options)) {
	e.t.Helper()
	if e.loop != nil {
		e.t.Fatal("start: the loop is already running")
	}
	e.open()
	e.log = &roundLog{notify: make(chan struct{}, 1)}
	opts := Options{Pipeline: e.options(e.store, e.state), Config: e.cfg, OnRound: e.log.add}
	if mod != nil {
		mod(&opts)
	}
	l, err := New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.tweak != nil {
		e.tweak(l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.loop, e.cancel, e.done = l, cancel, make(chan error, 1)
	go func() { e.done <- l.Run(ctx) }()
}

// stop cancels the loop, waits for Run and closes the stores; it returns
// Run's result.
func (e *env) stop() error {
	e.t.Helper()
	if e.loop == nil {
		return nil
	}
	e.cancel()
	var err error
	select {
	case err = <-e.done:
	case <-time.After(waitLimit):
		e.t.Fatal("Run did not return after cancel")
	}
	e.loop = nil
	e.closeStores()
	return err
}

func (e *env) closeStores() {
	if e.store != nil {
		e.store.Close()
		e.store = nil
	}
	if e.state != nil {
		e.state.Close()
		e.state = nil
	}
}

func (e *env) close() {
	if err := e.stop(); err != nil {
		e.t.Errorf("Run = %v, want nil after a graceful stop", err)
	}
	e.closeStores()
}

// roundLog records completed rounds for waits.
type roundLog struct {
	limit  time.Duration // how long await waits; default waitLimit
	mu     sync.Mutex
	rounds []Round
	notify chan struct{}
}

func (l *roundLog) add(r Round) {
	l.mu.Lock()
	l.rounds = append(l.rounds, r)
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// await waits until a round after index from satisfies ok and returns its index.
func (l *roundLog) await(t testing.TB, from int, what string, ok func(Round) bool) int {
	t.Helper()
	limit := cmp.Or(l.limit, waitLimit)
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		for i := from; i < len(l.rounds); i++ {
			if ok(l.rounds[i]) {
				l.mu.Unlock()
				return i
			}
		}
		l.mu.Unlock()
		select {
		case <-l.notify:
		case <-deadline:
			t.Fatalf("no round %s within %v", what, limit)
		}
	}
}

// failed counts the rounds that ended with an error.
func (l *roundLog) failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.rounds {
		if r.Err != nil {
			n++
		}
	}
	return n
}

// since returns a copy of the rounds logged from index from on.
func (l *roundLog) since(from int) []Round {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.rounds[from:])
}

func (l *roundLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rounds)
}

// waitReady waits for the initial reconciliation.
func (e *env) waitReady() {
	e.t.Helper()
	e.log.await(e.t, 0, "reconciling the folder", func(r Round) bool { return r.Kind == Initial && r.Err == nil })
}

// syncName is the barrier file of wait; it is never left behind.
const syncName = "_sync.md"

// wait returns once every change made before it has been processed: it
// writes a barrier file and waits for the round that ingests it, then
// removes it and waits for the round that deletes it. The watcher reports
// paths in the order of their last change and the loop processes them in
// that order, so every earlier change is in one of these rounds or before.
// The barrier appears by a rename, one event: written in place, a watcher
// without debouncing (NoDebounce) may report it, and the loop read it,
// while it is still empty, which fails it instead of ingesting it.
func (e *env) wait() {
	e.t.Helper()
	covers := func(id string, op func(Round) []string, after time.Time) func(Round) bool {
		return func(r Round) bool {
			return r.Err == nil && (slices.Contains(op(r), id) || (r.Kind != Update && r.Start.After(after)))
		}
	}
	from := e.log.len()
	at := time.Now()
	e.writeFile(syncName+".tmp", "barrier "+at.String()) // an editor's temporary name: ignored
	if err := os.Rename(filepath.Join(e.root, syncName+".tmp"), filepath.Join(e.root, syncName)); err != nil {
		e.t.Fatal(err)
	}
	from = e.log.await(e.t, from, "ingesting the barrier", covers(syncName, func(r Round) []string { return r.Changed }, at))
	at = time.Now()
	if err := os.Remove(filepath.Join(e.root, syncName)); err != nil {
		e.t.Fatal(err)
	}
	e.log.await(e.t, from+1, "deleting the barrier", covers(syncName, func(r Round) []string { return r.Removed }, at))
}

func (e *env) path(name string) string {
	if rest, ok := strings.CutPrefix(name, "@out/"); ok {
		return filepath.Join(e.outside, filepath.FromSlash(rest))
	}
	return filepath.Join(e.root, filepath.FromSlash(name))
}

func (e *env) writeFile(name, body string) {
	e.t.Helper()
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// nodes returns the store's nodes, sorted by document and offset.
func nodesOf(t testing.TB, s sink.VectorStore) []sink.Node {
	t.Helper()
	nodes, err := s.GetNodes(context.Background(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].RefDocID != nodes[j].RefDocID {
			return nodes[i].RefDocID < nodes[j].RefDocID
		}
		return nodes[i].StartChar < nodes[j].StartChar
	})
	return nodes
}

// docsOf returns the sorted document ids of the store's nodes.
func docsOf(nodes []sink.Node) []string {
	var ids []string
	for _, n := range nodes {
		if len(ids) == 0 || ids[len(ids)-1] != n.RefDocID {
			ids = append(ids, n.RefDocID)
		}
	}
	return ids
}

// view renders nodes for comparison: one line per node.
func view(nodes []sink.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = fmt.Sprintf("%s %s [%d:%d] %q", n.RefDocID, n.ID, n.StartChar, n.EndChar, n.Text)
	}
	return out
}

// clean ingests the folder as it is now into a fresh store and manifest
// and returns the nodes: what the watched store must equal.
func (e *env) clean() []sink.Node {
	e.t.Helper()
	ctx := context.Background()
	dir := e.t.TempDir()
	store, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "index.db")})
	if err != nil {
		e.t.Fatal(err)
	}
	defer store.Close()
	st, err := state.Open(ctx, filepath.Join(dir, "state.db"), "test")
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	if _, err := pipeline.Run(ctx, e.options(store, st)); err != nil {
		e.t.Fatal(err)
	}
	return nodesOf(e.t, store)
}

// checkClean fails unless the watched store equals a clean run of the
// folder (no duplicate, stale or missing chunk) and the manifest records
// exactly the stored documents.
func (e *env) checkClean() {
	e.t.Helper()
	got := view(nodesOf(e.t, e.store))
	want := view(e.clean())
	if !slices.Equal(got, want) {
		e.t.Errorf("store differs from a clean run of the folder:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	ids, err := e.state.DocIDs(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	if docs := docsOf(nodesOf(e.t, e.store)); !slices.Equal(ids, docs) {
		e.t.Errorf("manifest records %q, store holds %q", ids, docs)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
