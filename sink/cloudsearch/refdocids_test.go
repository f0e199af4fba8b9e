package cloudsearch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestRefDocIDs lists the reference documents of an index, on both kinds
// of key: every document once, sorted, however its ids are spelt, past one
// page of nodes, with a request per 1000 nodes.
func TestRefDocIDs(t *testing.T) {
	stored := []storedDoc{{"big.md", 1100}, {"a.md,b.md", 2}, {"O'Brien's notes.md", 1}, {"日本語/ファイル.md", 3}, {"a.md", 1}}
	want := slices.Sorted(slices.Values(refsOf(stored)))
	for _, kind := range keyKinds {
		t.Run(kind.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("uploads 1107 nodes")
			}
			s, srv := kind.start(t)
			ctx := context.Background()
			if got, err := s.RefDocIDs(ctx); err != nil || len(got) != 0 {
				t.Fatalf("RefDocIDs of an empty index = %v, %v; want none", got, err)
			}
			addDocs(t, s, stored)
			before := len(srv.Requests())
			got, err := s.RefDocIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("RefDocIDs = %q, want %q", got, want)
			}
			if n := strings.Count(docsTrace(srv, before), "search"); n < 2 || n > 3 {
				t.Errorf("%d search requests for 1107 nodes, want 2 or 3 (1000 nodes a page; a recount without a sortable key)", n)
			}
			assertNoClientErrors(t, srv)
		})
	}
}

// TestRefDocIDsPastScanReach: an index whose key is not sortable and that
// holds more nodes than paging with skip reaches cannot be listed: the
// error is a *ScanLimitError, which wraps sink.ErrUnsupported so that a
// run goes on as with a store that cannot list.
func TestRefDocIDsPastScanReach(t *testing.T) {
	s, _ := startLlamaIndexPython(t, searchtest.Options{SpecDir: noSpec}, ValidateIndex)
	s.maxSkip = 0 // a reach of one page
	addDocs(t, s, []storedDoc{{"big.md", 1001}})
	_, err := s.RefDocIDs(context.Background())
	var sle *ScanLimitError
	if !errors.As(err, &sle) || !errors.Is(err, sink.ErrUnsupported) || sle.Op != "list reference documents" {
		t.Fatalf("RefDocIDs = %v, want a *ScanLimitError for \"list reference documents\" wrapping sink.ErrUnsupported", err)
	}
}

// TestRefDocIDsHiddenDocID: an index whose doc_id field is hidden
// (hiddenFieldKeys) cannot be listed, since the service refuses to select
// a field that is not retrievable: RefDocIDs says so with an error wrapping
// sink.ErrUnsupported, which a run takes as a store that cannot list, and
// sends nothing.
func TestRefDocIDsHiddenDocID(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.HiddenFieldKeys = []string{"doc_id"} })
	before := len(srv.Requests())
	_, err := s.RefDocIDs(context.Background())
	if !errors.Is(err, sink.ErrUnsupported) || !strings.Contains(err.Error(), "hiddenFieldKeys") {
		t.Fatalf("RefDocIDs = %v, want an error wrapping sink.ErrUnsupported naming hiddenFieldKeys", err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
