package cloudsearch

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestScanNodes lists the nodes of an index, on both kinds of key: every
// node once, with its reference document however its id is spelt, past
// one page, at most 1000 nodes a call and with a request per 1000 nodes;
// fn's error stops the scan.
func TestScanNodes(t *testing.T) {
	stored := []storedDoc{{"big.md", 1100}, {"a.md,b.md", 2}, {"O'Brien's notes.md", 1}, {"日本語/ファイル.md", 3}, {"a.md", 1}}
	want := map[sink.NodeRef]bool{}
	for _, d := range stored {
		for _, n := range makeNodes(d.ref, d.nodes) {
			want[sink.NodeRef{ID: n.ID, RefDocID: n.RefDocID}] = true
		}
	}
	for _, kind := range keyKinds {
		t.Run(kind.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("uploads 1107 nodes")
			}
			s, srv := kind.start(t)
			ctx := context.Background()
			if got := scanAll(t, s); len(got) != 0 {
				t.Fatalf("ScanNodes of an empty index = %v; want none", got)
			}
			addDocs(t, s, stored)
			before := len(srv.Requests())
			got := scanAll(t, s)
			if !maps.Equal(got, want) {
				t.Errorf("ScanNodes passed %d nodes, want the %d stored", len(got), len(want))
			}
			if n := strings.Count(docsTrace(srv, before), "search"); n < 2 || n > 3 {
				t.Errorf("%d search requests for 1107 nodes, want 2 or 3 (1000 nodes a page; a recount without a sortable key)", n)
			}
			stop := errors.New("stop")
			calls := 0
			if err := s.ScanNodes(ctx, func([]sink.NodeRef) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
				t.Errorf("ScanNodes = %v after %d calls, want fn's error after 1", err, calls)
			}
			assertNoClientErrors(t, srv)
		})
	}
}

// scanAll returns the nodes ScanNodes passes, failing the test if one is
// passed twice or a page holds more than 1000.
func scanAll(t *testing.T, s *Store) map[sink.NodeRef]bool {
	t.Helper()
	got := map[sink.NodeRef]bool{}
	err := s.ScanNodes(context.Background(), func(page []sink.NodeRef) error {
		if len(page) > maxPageSize {
			t.Errorf("a page of %d nodes", len(page))
		}
		for _, n := range page {
			if got[n] {
				t.Errorf("%v passed twice", n)
			}
			got[n] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ScanNodes: %v", err)
	}
	return got
}

// TestScanNodesPastScanReach: an index whose key is not sortable and that
// holds more nodes than paging with skip reaches cannot be listed: the
// error is a *ScanLimitError, which wraps sink.ErrUnsupported so that a
// run goes on as with a store that cannot list, and comes before any node.
func TestScanNodesPastScanReach(t *testing.T) {
	s, _ := startLlamaIndexPython(t, searchtest.Options{SpecDir: noSpec}, ValidateIndex)
	s.maxSkip = 0 // a reach of one page
	addDocs(t, s, []storedDoc{{"big.md", 1001}})
	calls := 0
	err := s.ScanNodes(context.Background(), func([]sink.NodeRef) error { calls++; return nil })
	var sle *ScanLimitError
	if !errors.As(err, &sle) || !errors.Is(err, sink.ErrUnsupported) || sle.Op != "list nodes" || calls != 0 {
		t.Fatalf("ScanNodes = %v after %d calls, want a *ScanLimitError for \"list nodes\" wrapping sink.ErrUnsupported, before any", err, calls)
	}
	// A listing of every node cannot be narrowed: the advice says what can
	// be done instead.
	if msg := err.Error(); !strings.Contains(msg, "sluice delete --doc-id") || strings.Contains(msg, "narrow the request") {
		t.Errorf("ScanNodes error %q: want the advice for a listing, not for a narrowed read", msg)
	}
}

// TestScanNodesHiddenDocID: an index whose doc_id field is hidden
// (hiddenFieldKeys) cannot be listed, since the service refuses to select
// a field that is not retrievable: ScanNodes says so with an error
// wrapping sink.ErrUnsupported, which a run takes as a store that cannot
// list, and sends nothing.
func TestScanNodesHiddenDocID(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.HiddenFieldKeys = []string{"doc_id"} })
	before := len(srv.Requests())
	err := s.ScanNodes(context.Background(), func([]sink.NodeRef) error { return nil })
	if !errors.Is(err, sink.ErrUnsupported) || !strings.Contains(err.Error(), "hiddenFieldKeys") {
		t.Fatalf("ScanNodes = %v, want an error wrapping sink.ErrUnsupported naming hiddenFieldKeys", err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
