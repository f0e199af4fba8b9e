package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/sink"
)

// The store offers the pipeline's optional capabilities.
var (
	_ pipeline.EmptyReporter    = (*Store)(nil)
	_ pipeline.NodeScanner      = (*Store)(nil)
	_ pipeline.DimensionChecker = (*Store)(nil)
)

// TestEmptyAndScanNodes: Empty and ScanNodes follow adds and deletes.
func TestEmptyAndScanNodes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	check := func(wantEmpty bool, want ...sink.NodeRef) {
		t.Helper()
		empty, err := s.Empty(ctx)
		if err != nil || empty != wantEmpty {
			t.Errorf("Empty = %v, %v; want %v", empty, err, wantEmpty)
		}
		if got := scanAll(t, s); !slices.Equal(got, want) {
			t.Errorf("ScanNodes = %v, want %v", got, want)
		}
	}
	check(true)
	mustAdd(t, s, node("b1", "b.md", "t", 1, 0), node("a1", "a.md", "t", 0, 1), node("b2", "b.md", "u", 1, 1))
	check(false, sink.NodeRef{ID: "a1", RefDocID: "a.md"}, sink.NodeRef{ID: "b1", RefDocID: "b.md"}, sink.NodeRef{ID: "b2", RefDocID: "b.md"})
	if err := s.Delete(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	check(false, sink.NodeRef{ID: "a1", RefDocID: "a.md"})
	if err := s.DeleteNodes(ctx, []string{"a1"}); err != nil {
		t.Fatal(err)
	}
	check(true)
	s.Close()
	if _, err := s.Empty(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Empty after Close = %v, want ErrClosed", err)
	}
	if err := s.ScanNodes(ctx, func([]sink.NodeRef) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("ScanNodes after Close = %v, want ErrClosed", err)
	}
}

// TestScanNodesPages: ScanNodes passes every node once, in pages of at
// most 1000, across documents and chunk positions that repeat; the
// function may change the page and use the store; its error stops the
// scan.
func TestScanNodesPages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	var nodes []sink.Node
	want := map[sink.NodeRef]bool{}
	for i := range 2345 {
		n := node(fmt.Sprintf("n%04d", i), fmt.Sprintf("doc%d.md", i%7), "t", 1, 0)
		n.StartChar = i % 3 // positions repeat within a document
		nodes = append(nodes, n)
		want[sink.NodeRef{ID: n.ID, RefDocID: n.RefDocID}] = true
	}
	mustAdd(t, s, nodes...)
	got := map[sink.NodeRef]bool{}
	pages := 0
	err := s.ScanNodes(ctx, func(page []sink.NodeRef) error {
		pages++
		if len(page) > 1000 {
			t.Errorf("page of %d nodes, want at most 1000", len(page))
		}
		for i, n := range page {
			if got[n] {
				t.Errorf("%v passed twice", n)
			}
			got[n] = true
			page[i] = sink.NodeRef{} // the scan must not read the page back
		}
		_, err := s.Count(ctx) // the store is usable meanwhile
		return err
	})
	if err != nil || pages != 3 || !maps.Equal(got, want) {
		t.Errorf("ScanNodes = %v after %d pages, %d of %d nodes; want 3 pages and every node", err, pages, len(got), len(want))
	}
	stop := errors.New("stop")
	calls := 0
	err = s.ScanNodes(ctx, func([]sink.NodeRef) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ScanNodes = %v after %d calls, want fn's error after 1", err, calls)
	}
}

// scanAll returns every node ScanNodes passes, in its order.
func scanAll(t *testing.T, s *Store) []sink.NodeRef {
	t.Helper()
	var out []sink.NodeRef
	if err := s.ScanNodes(context.Background(), func(page []sink.NodeRef) error {
		out = append(out, page...)
		return nil
	}); err != nil {
		t.Fatalf("ScanNodes: %v", err)
	}
	return out
}

// TestDimensionsRemedy: a store that holds vectors of other dimensions says
// how to fix it for the local store (its setting, `sluice index delete`,
// and that --full alone cannot), without naming Cloud AI Search's setting,
// whether the check comes before a run, from Add or from a query.
func TestDimensionsRemedy(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CheckDimensions(ctx, 3); err != nil {
		t.Errorf("an empty store takes any dimensions: %v", err)
	}
	mustAdd(t, s, node("a", "a.md", "t", 1, 2))
	if err := s.CheckDimensions(ctx, 2); err != nil {
		t.Errorf("same dimensions: %v", err)
	}
	_, addErr := s.Add(ctx, []sink.Node{node("b", "b.md", "t", 1, 2, 3)})
	_, queryErr := s.Query(ctx, sink.Query{Embedding: []float32{1, 2, 3}})
	for name, err := range map[string]error{
		"CheckDimensions": s.CheckDimensions(ctx, 3),
		"Add":             addErr,
		"Query":           queryErr,
	} {
		var de *sink.DimensionError
		var le *DimensionsError
		if !errors.Is(err, sink.ErrDimensionMismatch) || !errors.As(err, &de) || !errors.As(err, &le) || le.Dims != 2 || de.Got != 3 {
			t.Errorf("%s = %v, want a *DimensionsError of 2 against 3", name, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{s.Path() + " (sink.local.path) holds 2-dimension vectors, not 3", "embedder.dimensions to 2", "`sluice index delete`", "sink.local.path to a new file", "--full alone cannot"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", name, msg, want)
			}
		}
		if strings.Contains(msg, "embeddingDimensionality") {
			t.Errorf("%s: %q names Cloud AI Search's setting", name, msg)
		}
	}
}
