package local

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/sink"
)

// The store offers the pipeline's optional capabilities.
var (
	_ pipeline.EmptyReporter    = (*Store)(nil)
	_ pipeline.DocLister        = (*Store)(nil)
	_ pipeline.DimensionChecker = (*Store)(nil)
)

func TestEmptyAndRefDocIDs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	check := func(wantEmpty bool, wantDocs ...string) {
		t.Helper()
		empty, err := s.Empty(ctx)
		if err != nil || empty != wantEmpty {
			t.Errorf("Empty = %v, %v; want %v", empty, err, wantEmpty)
		}
		docs, err := s.RefDocIDs(ctx)
		if err != nil || !slices.Equal(docs, append([]string{}, wantDocs...)) {
			t.Errorf("RefDocIDs = %q, %v; want %q", docs, err, wantDocs)
		}
	}
	check(true)
	mustAdd(t, s, node("b1", "b.md", "t", 1, 0), node("a1", "a.md", "t", 0, 1), node("b2", "b.md", "u", 1, 1))
	check(false, "a.md", "b.md")
	if err := s.Delete(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	check(false, "a.md")
	if err := s.DeleteNodes(ctx, []string{"a1"}); err != nil {
		t.Fatal(err)
	}
	check(true)
	s.Close()
	if _, err := s.Empty(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Empty after Close = %v, want ErrClosed", err)
	}
	if _, err := s.RefDocIDs(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("RefDocIDs after Close = %v, want ErrClosed", err)
	}
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
