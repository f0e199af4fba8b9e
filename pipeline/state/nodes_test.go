package state

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestNodesPages reads every committed node a page at a time: in document
// then node order, each once, without pending ids of an unfinished run and
// without another scope's nodes.
func TestNodesPages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path, "local:a")
	other := open(t, path, "local:b")

	run := begin(t, s)
	ackCommit(t, run, "b.md", "h", "n3", "n1")
	ackCommit(t, run, "a.md", "h", "n9", "n2", "n5")
	ackCommit(t, run, "c.md", "h", "n1")
	if err := run.Ack(ctx, nodes("d.md", "p1")); err != nil { // not committed
		t.Fatal(err)
	}
	ackCommit(t, begin(t, other), "a.md", "h", "x1")

	want := []NodeRef{{"a.md", "n2"}, {"a.md", "n5"}, {"a.md", "n9"}, {"b.md", "n1"}, {"b.md", "n3"}, {"c.md", "n1"}}
	for _, limit := range []int{1, 2, 4, 6, 100} {
		var got []NodeRef
		var after NodeRef
		for pages := 0; ; pages++ {
			page, err := s.Nodes(ctx, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page))
			}
			if len(page) == 0 {
				break
			}
			if pages > len(want) {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			got = append(got, page...)
			after = page[len(page)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: Nodes = %v, want %v", limit, got, want)
		}
	}
}
