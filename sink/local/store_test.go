package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means valid
	}{
		{"default", DefaultConfig(), ""},
		{"relative file", Config{Path: "x/y.db"}, ""},
		{"empty", Config{}, "sink.local.path is empty"},
		{"blank", Config{Path: "  "}, "sink.local.path is empty"},
		{"memory", Config{Path: ":memory:"}, "sink.local.path is \":memory:\""},
		{"uri", Config{Path: "file:x.db"}, "SQLite URI"},
		{"trailing slash", Config{Path: "idx/"}, "names a directory"},
		{"existing dir", Config{Path: dir}, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != "sink.local.path" || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %#v, want *ConfigError for sink.local.path", err)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	if got := (Config{}).WithDefaults(); got != DefaultConfig() {
		t.Errorf("Config{}.WithDefaults() = %+v, want %+v", got, DefaultConfig())
	}
	if got := (Config{Path: "a.db"}).WithDefaults(); got.Path != "a.db" {
		t.Errorf("WithDefaults overwrote Path: %q", got.Path)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	fileAsDir := filepath.Join(dir, "plain")
	if err := os.WriteFile(fileAsDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		hint string
	}{
		{"not a database", notDB, "(sink.local.path) is damaged or not a SQLite database"},
		{"parent is a file", filepath.Join(fileAsDir, "index.db"), "sink.local.path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), Config{Path: tt.path})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded, want error")
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %q does not name the path %s and say %q", err, tt.path, tt.hint)
			}
		})
	}
}

func TestOpenCreatesParentsAndOddPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a b", "q?#%x", "index.db")
	s, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created at %s: %v", path, err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestAddGetDelete(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s,
		sink.Node{ID: "b2", RefDocID: "doc-b", Text: "b two", Embedding: []float32{0, 1}, StartChar: 10, EndChar: 15},
		sink.Node{ID: "a1", RefDocID: "doc-a", Text: "a one", Embedding: []float32{1, 0}, StartChar: 0, EndChar: 5},
		sink.Node{ID: "b1", RefDocID: "doc-b", Text: "b one", Embedding: []float32{1, 1}, StartChar: 0, EndChar: 5},
		sink.Node{ID: "c1", RefDocID: "doc-c", Text: "c one", Embedding: []float32{1, 2}},
	)
	tests := []struct {
		name  string
		ids   []string
		limit int
		want  []string
	}{
		{"all ordered by doc, start, id", nil, 0, []string{"a1", "b1", "b2", "c1"}},
		{"limit", nil, 2, []string{"a1", "b1"}},
		{"by ids, unknown ignored", []string{"c1", "nope", "b2"}, 0, []string{"b2", "c1"}},
		{"empty ids means none", []string{}, 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GetNodes(ctx, tt.ids, nil, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(nodeIDs(got), tt.want) {
				t.Errorf("GetNodes ids = %v, want %v", nodeIDs(got), tt.want)
			}
		})
	}

	got, err := s.GetNodes(ctx, []string{"b2"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := sink.Node{ID: "b2", RefDocID: "doc-b", Text: "b two", Embedding: []float32{0, 1}, StartChar: 10, EndChar: 15}
	if len(got) != 1 || !nodesEqual(got[0], want) {
		t.Fatalf("GetNodes(b2) = %+v, want %+v", got, want)
	}

	if err := s.Delete(ctx, "doc-b"); err != nil {
		t.Fatal(err)
	}
	assertIDs(t, s, "a1", "c1")
	if err := s.DeleteNodes(ctx, []string{"c1", "unknown"}); err != nil {
		t.Fatal(err)
	}
	assertIDs(t, s, "a1")
	if err := s.Delete(ctx, "no-such-doc"); err != nil {
		t.Errorf("Delete of an unknown document: %v", err)
	}
	if n, err := s.Count(ctx); err != nil || n != 1 {
		t.Errorf("Count() = %d, %v; want 1", n, err)
	}
	// A deleted node's text must be gone from the full-text index too.
	res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "two", TopK: 5})
	if err != nil || len(res) != 0 {
		t.Errorf("sparse query for a deleted node's text = %v, %v; want no results", scoredIDs(res), err)
	}
}

func TestExistingIDs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, node("x", "d1", "x", 1), node("y", "d1", "y", 1), node("z", "d2", "z", 1))
	got, err := s.ExistingIDs(ctx, []string{"x", "z", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["x"] || !got["z"] {
		t.Errorf("ExistingIDs = %v, want x and z", got)
	}
}

func TestNodeIDsPages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	want := map[string]bool{}
	var nodes []sink.Node
	for i := range nodeIDsPage + 1 {
		id := fmt.Sprintf("n%04d", i)
		want[id] = true
		nodes = append(nodes, node(id, "big", "text "+id, 1))
	}
	nodes = append(nodes, node("other", "small", "other text", 1))
	mustAdd(t, s, nodes...)

	got := map[string]bool{}
	var sizes []int
	err := s.NodeIDs(ctx, "big", func(ids []string) error {
		sizes = append(sizes, len(ids))
		for _, id := range ids {
			got[id] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) || !slices.Equal(sizes, []int{nodeIDsPage, 1}) {
		t.Errorf("NodeIDs(big) gave %d ids in pages %v, want the %d ids of big in pages of %d and 1", len(got), sizes, len(want), nodeIDsPage)
	}

	stop := errors.New("stop")
	calls := 0
	if err := s.NodeIDs(ctx, "big", func([]string) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("NodeIDs with fn failing = %v after %d calls, want fn's error after 1", err, calls)
	}
	if err := s.NodeIDs(ctx, "none", func([]string) error { t.Error("fn called for a document without nodes"); return nil }); err != nil {
		t.Errorf("NodeIDs(none) = %v", err)
	}
}

func TestUpsertOverwrites(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, sink.Node{ID: "n", RefDocID: "d", Text: "old walrus text", Embedding: []float32{1, 0}, Metadata: map[string]any{"v": 1}})
	updated := sink.Node{ID: "n", RefDocID: "d2", Text: "new pelican text", Embedding: []float32{0, 1}, Metadata: map[string]any{"v": "two"}, StartChar: 3, EndChar: 19}
	mustAdd(t, s, updated)

	if n, _ := s.Count(ctx); n != 1 {
		t.Fatalf("Count after upsert = %d, want 1", n)
	}
	got, err := s.GetNodes(ctx, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !nodesEqual(got[0], updated) {
		t.Fatalf("after upsert GetNodes = %+v, want %+v", got, updated)
	}
	for word, want := range map[string]int{"walrus": 0, "pelican": 1} {
		res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: word, TopK: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != want {
			t.Errorf("sparse %q after upsert: %d results, want %d", word, len(res), want)
		}
	}
}

func TestAddRejectsAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	good := node("ok", "d", "fine", 1, 2, 3)
	tests := []struct {
		name   string
		seed   []sink.Node // added first
		add    []sink.Node
		target error // errors.Is target
		as     any   // errors.As target type
	}{
		{"empty id", nil, []sink.Node{good, node("", "d", "t", 1, 2, 3)}, ErrInvalidNode, new(*NodeError)},
		{"no embedding", nil, []sink.Node{good, node("e", "d", "t")}, ErrInvalidNode, new(*NodeError)},
		{"map metadata", nil, []sink.Node{good, {ID: "m", Embedding: []float32{1, 2, 3}, Metadata: map[string]any{"k": map[string]any{"a": 1}}}}, ErrInvalidNode, new(*NodeError)},
		{"NaN metadata", nil, []sink.Node{good, {ID: "m", Embedding: []float32{1, 2, 3}, Metadata: map[string]any{"k": math.NaN()}}}, ErrInvalidNode, new(*NodeError)},
		{"nested list", nil, []sink.Node{good, {ID: "m", Embedding: []float32{1, 2, 3}, Metadata: map[string]any{"k": []any{[]string{"a"}}}}}, ErrInvalidNode, new(*NodeError)},
		{"mismatch within first batch", nil, []sink.Node{good, node("short", "d", "t", 1, 2)}, sink.ErrDimensionMismatch, new(*sink.DimensionError)},
		{"mismatch with recorded dims", []sink.Node{node("seed", "d", "t", 1, 1, 1)}, []sink.Node{good, node("long", "d", "t", 1, 2, 3, 4)}, sink.ErrDimensionMismatch, new(*sink.DimensionError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t)
			if tt.seed != nil {
				mustAdd(t, s, tt.seed...)
			}
			ids, err := s.Add(ctx, tt.add)
			if !errors.Is(err, tt.target) {
				t.Fatalf("Add error = %v, want errors.Is %v", err, tt.target)
			}
			if !errors.As(err, tt.as) {
				t.Fatalf("Add error = %T, want %T", err, tt.as)
			}
			if ids != nil {
				t.Errorf("Add returned ids %v on error", ids)
			}
			if n, _ := s.Count(ctx); n != len(tt.seed) {
				t.Errorf("Count = %d after rejected Add, want %d (nothing written)", n, len(tt.seed))
			}
			wantDims := 0
			if tt.seed != nil {
				wantDims = len(tt.seed[0].Embedding)
			}
			if s.Dimensions() != wantDims {
				t.Errorf("Dimensions() = %d, want %d", s.Dimensions(), wantDims)
			}
		})
	}
}

func TestAddCanceledContext(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Add(ctx, []sink.Node{node("a", "d", "t", 1)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with canceled ctx = %v, want context.Canceled", err)
	}
	var we *sink.WriteError
	if !errors.As(err, &we) || we.Failed["a"] == nil {
		t.Fatalf("Add with canceled ctx = %v, want a *sink.WriteError naming node a", err)
	}
	if n, _ := s.Count(context.Background()); n != 0 {
		t.Errorf("Count = %d, want 0", n)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	in := map[string]any{
		"s": "str", "i": 7, "f": 2.5, "b": true, "nil": nil,
		"tags": []string{"x", "y"}, "nums": []int{1, 2}, "mixed": []any{"a", 1.0}, "empty": []string{},
	}
	mustAdd(t, s, sink.Node{ID: "n", Embedding: []float32{1}, Metadata: in})
	got, err := s.GetNodes(ctx, nil, nil, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("GetNodes = %v, %v", got, err)
	}
	want := map[string]any{
		"s": "str", "i": 7.0, "f": 2.5, "b": true, "nil": nil,
		"tags": []string{"x", "y"}, "nums": []float64{1, 2}, "mixed": []any{"a", 1.0}, "empty": []string{},
	}
	if fmt.Sprintf("%#v", sortedMap(got[0].Metadata)) != fmt.Sprintf("%#v", sortedMap(want)) {
		t.Errorf("metadata round trip:\n got %#v\nwant %#v", got[0].Metadata, want)
	}
}

func sortedMap(m map[string]any) []any {
	var out []any
	for _, k := range sortedKeys(m) {
		out = append(out, k, m[k])
	}
	return out
}

func TestPersistenceAcrossReopen(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Path: filepath.Join(t.TempDir(), "idx", "index.db")}
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dimensions() != 0 {
		t.Errorf("new store Dimensions() = %d, want 0", s.Dimensions())
	}
	mustAdd(t, s, sink.Node{ID: "p", RefDocID: "d", Text: "persistent otter", Embedding: []float32{0.5, 0.25}, Metadata: map[string]any{"k": "v"}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Dimensions() != 2 {
		t.Errorf("reopened Dimensions() = %d, want 2", s.Dimensions())
	}
	got, err := s.GetNodes(ctx, nil, nil, 0)
	if err != nil || len(got) != 1 || got[0].Text != "persistent otter" || got[0].Metadata["k"] != "v" {
		t.Fatalf("reopened GetNodes = %+v, %v", got, err)
	}
	res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "otter"})
	if err != nil || len(res) != 1 {
		t.Errorf("reopened sparse query = %v, %v; want 1 result", res, err)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	calls := map[string]func() error{
		"Add":         func() error { _, err := s.Add(ctx, []sink.Node{node("a", "d", "t", 1)}); return err },
		"Delete":      func() error { return s.Delete(ctx, "d") },
		"DeleteNodes": func() error { return s.DeleteNodes(ctx, []string{"a"}) },
		"GetNodes":    func() error { _, err := s.GetNodes(ctx, nil, nil, 0); return err },
		"Query":       func() error { _, err := s.Query(ctx, sink.Query{Embedding: []float32{1}}); return err },
		"Count":       func() error { _, err := s.Count(ctx); return err },
		"ExistingIDs": func() error { _, err := s.ExistingIDs(ctx, []string{"a"}); return err },
		"NodeIDs":     func() error { return s.NodeIDs(ctx, "d", func([]string) error { return nil }) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestConcurrentAddsAndQueries(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	const writers, batches, perBatch = 4, 5, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches*2)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for b := range batches {
				nodes := make([]sink.Node, perBatch)
				for i := range nodes {
					id := fmt.Sprintf("w%d-b%d-n%d", w, b, i)
					nodes[i] = node(id, fmt.Sprintf("doc%d", w), "concurrent text "+id, float32(w+1), float32(i+1))
				}
				if _, err := s.Add(ctx, nodes); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range batches {
				if _, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "concurrent", TopK: 3}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent call failed: %v", err)
	}
	if n, err := s.Count(ctx); err != nil || n != writers*batches*perBatch {
		t.Errorf("Count = %d, %v; want %d", n, err, writers*batches*perBatch)
	}
}

// nodesEqual compares nodes, treating nil and empty metadata alike.
func nodesEqual(a, b sink.Node) bool {
	if len(a.Metadata) == 0 && len(b.Metadata) == 0 {
		a.Metadata, b.Metadata = nil, nil
	}
	return a.ID == b.ID && a.RefDocID == b.RefDocID && a.Text == b.Text &&
		slices.Equal(a.Embedding, b.Embedding) && a.StartChar == b.StartChar && a.EndChar == b.EndChar &&
		fmt.Sprint(a.Metadata) == fmt.Sprint(b.Metadata)
}

func assertIDs(t *testing.T, s *Store, want ...string) {
	t.Helper()
	got, err := s.GetNodes(context.Background(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nodeIDs(got), want) {
		t.Errorf("stored ids = %v, want %v", nodeIDs(got), want)
	}
}

// TestAddIsAtomic makes the database reject the last node of a batch and
// checks that the transaction left nothing behind: no row, no full-text
// entry, no recorded dimensions.
func TestAddIsAtomic(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER test_fail BEFORE INSERT ON nodes WHEN new.id = 'boom'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	batch := []sink.Node{node("a", "d", "aardvark", 1, 0), node("b", "d", "badger", 0, 1), node("boom", "d", "x", 1, 1)}
	_, err := s.Add(ctx, batch)
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != len(batch) || !errors.Is(err, sink.ErrWrite) {
		t.Fatalf("Add = %v, want a *sink.WriteError listing all %d nodes", err, len(batch))
	}
	if !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("error %q does not name the database", err)
	}
	if n, _ := s.Count(ctx); n != 0 {
		t.Errorf("Count = %d after a failed transaction, want 0", n)
	}
	if res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "aardvark badger"}); err != nil || len(res) != 0 {
		t.Errorf("full-text index after a failed transaction: %v, %v; want empty", scoredIDs(res), err)
	}
	if s.Dimensions() != 0 {
		t.Errorf("Dimensions() = %d after a failed first Add, want 0", s.Dimensions())
	}
	// The store stays usable.
	mustAdd(t, s, batch[:2]...)
	if n, _ := s.Count(ctx); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
}

func TestEmptiedStoreForgetsDimensions(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s, node("a", "d1", "t", 1, 2), node("b", "d2", "t", 3, 4))
	if err := s.Delete(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if s.Dimensions() != 2 {
		t.Fatalf("Dimensions() = %d with a node left, want 2", s.Dimensions())
	}
	if _, err := s.Add(ctx, []sink.Node{node("c", "d3", "t", 1, 2, 3)}); !errors.Is(err, sink.ErrDimensionMismatch) {
		t.Fatalf("Add of 3 dimensions into a 2-dimension store = %v, want ErrDimensionMismatch", err)
	}
	if err := s.DeleteNodes(ctx, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if s.Dimensions() != 0 {
		t.Fatalf("Dimensions() = %d in an emptied store, want 0", s.Dimensions())
	}
	mustAdd(t, s, node("c", "d3", "t", 1, 2, 3))
	if s.Dimensions() != 3 {
		t.Errorf("Dimensions() = %d after refilling, want 3", s.Dimensions())
	}
}

func TestUpdateMetadata(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "index.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := sink.Node{ID: "a", RefDocID: "d", Text: "hello world", Embedding: []float32{1, 0}, Metadata: map[string]any{"v": "1"}, StartChar: 0, EndChar: 11}
	if _, err := s.Add(ctx, []sink.Node{n}); err != nil {
		t.Fatal(err)
	}
	upd := sink.Node{ID: "a", RefDocID: "d", Text: "hello world", Metadata: map[string]any{"v": "2"}, StartChar: 5, EndChar: 16}
	err = s.UpdateMetadata(ctx, []sink.Node{upd, {ID: "missing", Metadata: map[string]any{}}})
	var werr *sink.WriteError
	if !errors.As(err, &werr) || len(werr.Failed) != 1 || werr.Failed["missing"] == nil {
		t.Fatalf("UpdateMetadata = %v, want a WriteError for the missing node only", err)
	}
	got, err := s.GetNodes(ctx, []string{"a"}, nil, 0)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if got[0].Metadata["v"] != "2" || got[0].StartChar != 5 || got[0].EndChar != 16 || got[0].Text != "hello world" {
		t.Errorf("after update: %+v", got[0])
	}
	res, err := s.Query(ctx, sink.Query{Embedding: []float32{1, 0}, TopK: 1})
	if err != nil || len(res) != 1 || res[0].Score < 0.99 {
		t.Errorf("the embedding did not survive the update: %v %v", res, err)
	}
	res, err = s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "hello", TopK: 1})
	if err != nil || len(res) != 1 {
		t.Errorf("the full-text entry did not survive the update: %v %v", res, err)
	}
}

func TestAddBatchesOfManySizes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	// More than one statement's worth, then sizes that cycle the statement
	// cache, then a size seen before.
	sizes := []int{2*maxRowsPerStmt + 3, 1, 2, 3, 4, 5, 2*maxRowsPerStmt + 3}
	total := 0
	for b, n := range sizes {
		nodes := make([]sink.Node, n)
		for i := range nodes {
			nodes[i] = node(fmt.Sprintf("b%d-%d", b, i), fmt.Sprintf("d%d", b), fmt.Sprintf("common tok%dx%d", b, i), float32(i), 1)
		}
		mustAdd(t, s, nodes...)
		total += n
		if len(s.stmts.stmts) > maxCachedStmts {
			t.Fatalf("%d cached statements, want at most %d", len(s.stmts.stmts), maxCachedStmts)
		}
	}
	if n, err := s.Count(ctx); err != nil || n != total {
		t.Fatalf("Count = %d, %v; want %d", n, err, total)
	}
	for _, word := range []string{"tok0x0", "tok0x600", "tok0x1026", "tok6x1026", "tok3x2"} {
		res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: word, TopK: 3})
		if err != nil || len(res) != 1 {
			t.Errorf("sparse %q: %v, %v; want 1 result", word, scoredIDs(res), err)
		}
	}
}

// pragmaValue returns the value of a PRAGMA or of an FTS5 setting of s.
func pragmaValue(t *testing.T, s *Store, query string) string {
	t.Helper()
	var v string
	if err := s.db.QueryRow(query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

func TestNewFileSettings(t *testing.T) {
	s := openTest(t)
	for query, want := range map[string]string{
		`PRAGMA page_size`:          strconv.Itoa(pageSize),
		`PRAGMA journal_mode`:       "wal",
		`PRAGMA synchronous`:        "2", // FULL: see TestCommitsAreDurable
		`PRAGMA journal_size_limit`: strconv.Itoa(walSizeLimit),
		`SELECT v FROM nodes_fts_config WHERE k = 'automerge'`:   "16",
		`SELECT v FROM nodes_fts_config WHERE k = 'crisismerge'`: "32",
	} {
		if got := pragmaValue(t, s, query); got != want {
			t.Errorf("%s = %s, want %s", query, got, want)
		}
	}
}

// TestOpenOlderFile opens a file as earlier versions created it: 4 KiB
// pages and FTS5's default settings. It keeps its page size, gets the
// settings, and its nodes stay searchable.
func TestOpenOlderFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range schema {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO meta (key, value) VALUES ('dimensions', '2')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO nodes (id, doc_id, text, embedding) VALUES ('old', 'd', 'ancient tortoise', ?)`,
		sink.EncodeVector([]float32{1, 0})); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := pragmaValue(t, s, `PRAGMA page_size`); got != "4096" {
		t.Errorf("page_size = %s, want 4096 (an existing file keeps its own)", got)
	}
	if got := pragmaValue(t, s, `SELECT v FROM nodes_fts_config WHERE k = 'automerge'`); got != "16" {
		t.Errorf("automerge = %s, want 16", got)
	}
	mustAdd(t, s, node("new", "d", "young tortoise", 0, 1))
	res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "tortoise", TopK: 5})
	if err != nil || len(res) != 2 {
		t.Errorf("sparse query = %v, %v; want old and new", scoredIDs(res), err)
	}
}

// TestFailedTransactionIsUnavailable checks how a failed write transaction
// classifies: always a *sink.WriteError naming every node; a store-wide
// failure (nodes are checked before the transaction) is also
// sink.ErrUnavailable, so that a pipeline stops, but an ended context is not.
func TestFailedTransactionIsUnavailable(t *testing.T) {
	nodes := []sink.Node{{ID: "a"}, {ID: "b"}}
	tests := []struct {
		cause       error
		unavailable bool
	}{
		{errors.New("database or disk is full (13)"), true},
		{errors.New("attempt to write a readonly database (8)"), true},
		{fmt.Errorf("begin: %w", context.Canceled), false},
		{context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		err := error(newTxError("/tmp/index.db", nodes, tt.cause))
		var we *sink.WriteError
		if !errors.As(err, &we) || len(we.Failed) != len(nodes) || !errors.Is(err, tt.cause) {
			t.Errorf("%v: %v is not a WriteError naming both nodes and wrapping its cause", tt.cause, err)
		}
		if got := errors.Is(err, sink.ErrUnavailable); got != tt.unavailable {
			t.Errorf("%v: errors.Is(err, sink.ErrUnavailable) = %v, want %v", tt.cause, got, tt.unavailable)
		}
	}
}

// TestCommitsAreDurable: every connection of the store commits with
// synchronous=FULL (2), so a commit survives a power failure, as Add
// promises; with NORMAL the manifest could outlive the nodes it records.
func TestCommitsAreDurable(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	// Two connections at once: the setting must be every connection's.
	var conns []*sql.Conn
	for range 2 {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode int
		if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 {
			t.Errorf("connection %d: synchronous = %d, want 2 (FULL)", i, mode)
		}
	}
}

// TestDeleteDocs: DeleteDocs removes the nodes of every listed document,
// from the full-text index too, and nothing else; unknown ids, ids that
// need quoting and an empty list are fine; a store it empties forgets its
// dimensions, as Delete's does.
func TestDeleteDocs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustAdd(t, s,
		sink.Node{ID: "a1", RefDocID: "doc-a", Text: "alpha one", Embedding: []float32{1, 0}},
		sink.Node{ID: "b1", RefDocID: `it's "b", ok`, Text: "bravo one", Embedding: []float32{1, 1}},
		sink.Node{ID: "b2", RefDocID: `it's "b", ok`, Text: "bravo two", Embedding: []float32{0, 1}},
		sink.Node{ID: "c1", RefDocID: "doc-ç", Text: "charlie one", Embedding: []float32{1, 2}},
	)
	if err := s.DeleteDocs(ctx, nil); err != nil {
		t.Fatalf("DeleteDocs(nil): %v", err)
	}
	assertIDs(t, s, "a1", "c1", "b1", "b2") // by doc_id
	if err := s.DeleteDocs(ctx, []string{`it's "b", ok`, "no-such-doc", "doc-ç"}); err != nil {
		t.Fatal(err)
	}
	assertIDs(t, s, "a1")
	res, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "bravo charlie", TopK: 5})
	if err != nil || len(res) != 0 {
		t.Errorf("sparse query for deleted texts = %v, %v; want no results", scoredIDs(res), err)
	}
	if err := s.DeleteDocs(ctx, []string{"doc-a"}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, sink.Node{ID: "d1", RefDocID: "doc-d", Text: "delta", Embedding: []float32{1, 2, 3}})
	assertIDs(t, s, "d1")
}
