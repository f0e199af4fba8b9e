package state

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// twoScopes opens one manifest file as two scopes, local:a and local:b.
func twoScopes(t *testing.T) (s, other *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	return open(t, path, "local:a"), open(t, path, "local:b")
}

// TestNodesPages reads every committed node a page at a time: in document
// then node order, each once, without pending ids of an unfinished run and
// without another scope's nodes.
func TestNodesPages(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)

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

// TestLost drops missing nodes from their documents' records and marks
// those documents with LostSize; other documents and scopes are untouched.
func TestLost(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n1", "n2", "n3")
	ackCommit(t, run, "b.md", "h", "n4")
	ackCommit(t, run, "c.md", "h", "n5")
	ackCommit(t, begin(t, other), "a.md", "h", "n1")

	if err := s.Lost(ctx, []NodeRef{{"a.md", "n2"}, {"a.md", "n3"}, {"b.md", "n4"}, {"c.md", "n1"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		doc  string
		ids  []string
		size int64
	}{
		{"a.md", []string{"n1"}, LostSize},
		{"b.md", nil, LostSize},
		{"c.md", []string{"n5"}, LostSize}, // n1 is a.md's: not c.md's to lose, but c.md is marked
	} {
		d, ok, err := s.Doc(ctx, tt.doc)
		if err != nil || !ok || !slices.Equal(d.NodeIDs, tt.ids) || d.Size != tt.size {
			t.Errorf("%s: %+v, %v, %v; want nodes %v and size %d", tt.doc, d, ok, err, tt.ids, tt.size)
		}
	}
	if d, _, _ := other.Doc(ctx, "a.md"); !slices.Equal(d.NodeIDs, []string{"n1"}) || d.Size == LostSize {
		t.Errorf("the other scope's a.md changed: %+v", d)
	}
	if err := s.Lost(ctx, nil); err != nil {
		t.Errorf("Lost(nil) = %v", err)
	}
}

// TestLostAll drops every node of the scope from its documents' records,
// marks them with LostSize and makes a dead run's acknowledged node ids
// intended ones (maybe stored, to be written again); the other scope is
// untouched.
func TestLostAll(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n1", "n2")
	ackCommit(t, run, "b.md", "h", "n3")
	if err := begin(t, s).Ack(ctx, nodes("c.md", "n4")); err != nil { // a run that died before committing c.md
		t.Fatal(err)
	}
	ackCommit(t, begin(t, other), "a.md", "h", "n1")

	if err := s.LostAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"a.md", "b.md"} {
		if d, ok, err := s.Doc(ctx, doc); err != nil || !ok || len(d.NodeIDs) != 0 || d.Size != LostSize {
			t.Errorf("%s: %+v, %v, %v; want no nodes and size %d", doc, d, ok, err, LostSize)
		}
	}
	if acked, intended, err := s.Pending(ctx, "c.md"); err != nil || len(acked) != 0 || !slices.Equal(intended, []string{"n4"}) {
		t.Errorf("c.md pending: acked %v, intended %v, %v; want n4 intended", acked, intended, err)
	}
	if has, err := s.HasNodes(ctx); err != nil || !has {
		t.Errorf("HasNodes = %v, %v; the intended n4 may still be stored", has, err)
	}
	if has, err := s.HasStoredNodes(ctx); err != nil || has {
		t.Errorf("HasStoredNodes = %v, %v; after LostAll no node is known to be stored", has, err)
	}
	if d, _, _ := other.Doc(ctx, "a.md"); !slices.Equal(d.NodeIDs, []string{"n1"}) || d.Size == LostSize {
		t.Errorf("the other scope's a.md changed: %+v", d)
	}
}

// TestUnlistedAndFound: Unlisted picks the scanned nodes the manifest does
// not list for their documents (committed, or pending in a run, ids Found
// recorded aside), and Found records them, of many documents at once,
// marking the records of those documents with LostSize; nodes the manifest
// lists change nothing, and neither scope sees the other's.
func TestUnlistedAndFound(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n1", "n2")
	ackCommit(t, run, "b.md", "h", "n3")
	ackCommit(t, run, "d.md", "h", "n7")
	dead := begin(t, s)
	if err := dead.Intend(ctx, nodes("c.md", "w1")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Ack(ctx, nodes("a.md", "p1")); err != nil {
		t.Fatal(err)
	}
	ackCommit(t, begin(t, other), "e.md", "h", "x1")

	scanned := []NodeRef{{"a.md", "n1"}, {"a.md", "x1"}, {"a.md", "p1"}, {"b.md", "n1"}, {"c.md", "w1"}, {"c.md", "w2"}, {"d.md", "n7"}, {"e.md", "x1"}}
	want := []NodeRef{{"a.md", "x1"}, {"b.md", "n1"}, {"c.md", "w2"}, {"e.md", "x1"}} // n1 is a.md's, not b.md's; e.md is the other scope's
	got, err := s.Unlisted(ctx, scanned)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Unlisted = %v, %v; want %v", got, err, want)
	}
	now := begin(t, s)
	for range 2 { // recording them twice changes nothing
		if err := now.Found(ctx, scanned); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Unlisted(ctx, scanned); err != nil || !slices.Equal(got, want) {
			t.Errorf("Unlisted after Found = %v, %v; want the found ids still unlisted: %v", got, err, want)
		}
	}
	for _, tt := range []struct {
		doc      string
		intended []string
		size     int64
	}{
		{"a.md", []string{"x1"}, LostSize},
		{"b.md", []string{"n1"}, LostSize},
		{"c.md", []string{"w1", "w2"}, 0}, // no record to mark
		{"d.md", nil, 0},
		{"e.md", []string{"x1"}, 0},
	} {
		_, intended, err := s.Pending(ctx, tt.doc)
		d, _, derr := s.Doc(ctx, tt.doc)
		if err != nil || derr != nil || !slices.Equal(intended, tt.intended) || d.Size != tt.size {
			t.Errorf("%s: intended %v, size %d (%v, %v); want %v and %d", tt.doc, intended, d.Size, err, derr, tt.intended, tt.size)
		}
	}
	if d, _, _ := other.Doc(ctx, "e.md"); !slices.Equal(d.NodeIDs, []string{"x1"}) || d.Size == LostSize {
		t.Errorf("the other scope's e.md changed: %+v", d)
	}
	if acked, intended, _ := other.Pending(ctx, "e.md"); len(acked)+len(intended) != 0 {
		t.Errorf("the other scope got pending ids: %v %v", acked, intended)
	}
	if got, err := s.Unlisted(ctx, nil); err != nil || got != nil {
		t.Errorf("Unlisted(nil) = %v, %v", got, err)
	}
	if err := now.Found(ctx, nil); err != nil {
		t.Errorf("Found(nil) = %v", err)
	}
}

// BenchmarkUnlisted looks up a page of 1000 scanned nodes, as a Full or
// Verify run does per page of its store's listing, in a manifest of 20,000
// nodes; the cost of a page must not grow with its square (as a join of two
// JSON arrays on their positions did).
func BenchmarkUnlisted(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "state.db"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	run, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var page []NodeRef
	for d := range 50 {
		doc := fmt.Sprintf("dir/doc%03d.md", d)
		ids := make([]string, 400)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-node-%04d", doc, i)
		}
		if err := run.Ack(ctx, nodes(doc, ids...)); err != nil {
			b.Fatal(err)
		}
		if err := run.Commit(ctx, doc, Stamp{Hash: "h"}, ""); err != nil {
			b.Fatal(err)
		}
		if d < 3 {
			page = append(page, refs(doc, ids...)...)
		}
	}
	page = page[:1000]
	b.ResetTimer()
	for b.Loop() {
		if got, err := s.Unlisted(ctx, page); err != nil || len(got) != 0 {
			b.Fatalf("Unlisted = %d nodes, %v; want none", len(got), err)
		}
	}
}

// TestStreamedNodeIDs reads a document's node ids one at a time, as plan
// does: Stamp without the ids, NodeCounts, the committed ids in order
// (EachNodeID) and the pending ones with whether they are acknowledged
// (EachPending), as Doc and Pending return them; none of another document
// or scope.
func TestStreamedNodeIDs(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n3", "n1", "n2")
	ackCommit(t, run, "b.md", "h", "n9")
	ackCommit(t, begin(t, other), "a.md", "h", "x1")
	dead := begin(t, s)
	if err := dead.Ack(ctx, nodes("a.md", "p2", "n1")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Intend(ctx, nodes("a.md", "p1")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Intend(ctx, nodes("c.md", "q1")); err != nil { // no record
		t.Fatal(err)
	}

	type pending struct {
		id    string
		acked bool
	}
	for _, tt := range []struct {
		doc       string
		recorded  bool
		committed []string
		pending   []pending
	}{
		{"a.md", true, []string{"n1", "n2", "n3"}, []pending{{"n1", true}, {"p1", false}, {"p2", true}}},
		{"b.md", true, []string{"n9"}, nil},
		{"c.md", false, nil, []pending{{"q1", false}}},
		{"d.md", false, nil, nil},
	} {
		st, ok, err := s.Stamp(ctx, tt.doc)
		if err != nil || ok != tt.recorded || (ok && st.Hash != "h") {
			t.Errorf("Stamp(%s) = %+v, %v, %v; want recorded %v with hash h", tt.doc, st, ok, err, tt.recorded)
		}
		committed, npending, err := s.NodeCounts(ctx, tt.doc)
		if err != nil || committed != len(tt.committed) || npending != len(tt.pending) {
			t.Errorf("NodeCounts(%s) = %d, %d, %v; want %d, %d", tt.doc, committed, npending, err, len(tt.committed), len(tt.pending))
		}
		var ids []string
		if err := s.EachNodeID(ctx, tt.doc, func(id string) { ids = append(ids, id) }); err != nil || !slices.Equal(ids, tt.committed) {
			t.Errorf("EachNodeID(%s) gave %v, %v; want %v", tt.doc, ids, err, tt.committed)
		}
		if rec, _, err := s.Doc(ctx, tt.doc); err != nil || !slices.Equal(rec.NodeIDs, tt.committed) {
			t.Errorf("Doc(%s).NodeIDs = %v, %v; want %v", tt.doc, rec.NodeIDs, err, tt.committed)
		}
		var got []pending
		if err := s.EachPending(ctx, tt.doc, func(id string, acked bool) { got = append(got, pending{id, acked}) }); err != nil || !slices.Equal(got, tt.pending) {
			t.Errorf("EachPending(%s) gave %v, %v; want %v", tt.doc, got, err, tt.pending)
		}
	}
}

// TestRecordedIDsAndStoredCount pages through the node ids a removal of a
// document deletes (committed, acknowledged, intended and found, each
// once, no other scope's) and counts those the store holds for sure, as
// Doc and PendingFound tell them.
func TestRecordedIDsAndStoredCount(t *testing.T) {
	ctx := context.Background()
	s, other := twoScopes(t)
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n3", "n1", "n2")
	ackCommit(t, run, "b.md", "h", "n9")
	ackCommit(t, begin(t, other), "a.md", "h", "x1", "p1")
	dead := begin(t, s)
	if err := dead.Found(ctx, refs("a.md", "f1", "f2", "n2")); err != nil { // n2 is committed
		t.Fatal(err)
	}
	if err := dead.Ack(ctx, nodes("a.md", "p2", "n1", "f2")); err != nil { // n1 reused, f2 found then written
		t.Fatal(err)
	}
	if err := dead.Intend(ctx, nodes("a.md", "p1")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Intend(ctx, nodes("c.md", "q1")); err != nil { // no record
		t.Fatal(err)
	}

	for _, tt := range []struct {
		doc    string
		ids    []string
		stored int
	}{
		{"a.md", []string{"f1", "f2", "n1", "n2", "n3", "p1", "p2"}, 6}, // n1-n3, p2, f2 and the found f1
		{"b.md", []string{"n9"}, 1},
		{"c.md", []string{"q1"}, 0},
		{"d.md", nil, 0},
	} {
		for _, limit := range []int{1, 2, 3, 100} {
			var got []string
			after := ""
			for pages := 0; ; pages++ {
				page, err := s.RecordedIDs(ctx, tt.doc, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit {
					t.Fatalf("%s, limit %d: a page of %d", tt.doc, limit, len(page))
				}
				if len(page) == 0 {
					break
				}
				if pages > len(tt.ids) {
					t.Fatalf("%s, limit %d: paging does not end", tt.doc, limit)
				}
				got = append(got, page...)
				after = page[len(page)-1]
			}
			if !slices.Equal(got, tt.ids) {
				t.Errorf("RecordedIDs(%s), limit %d, gave %v; want %v", tt.doc, limit, got, tt.ids)
			}
		}
		n, err := s.StoredCount(ctx, tt.doc)
		if err != nil || n != tt.stored {
			t.Errorf("StoredCount(%s) = %d, %v; want %d", tt.doc, n, err, tt.stored)
		}
		// The count as a removal made it from the lists it held.
		rec, _, err := s.Doc(ctx, tt.doc)
		if err != nil {
			t.Fatal(err)
		}
		acked, _, found, err := s.PendingFound(ctx, tt.doc)
		if err != nil {
			t.Fatal(err)
		}
		if listed := len(slices.Compact(slices.Sorted(slices.Values(slices.Concat(rec.NodeIDs, acked))))) + found; listed != n {
			t.Errorf("StoredCount(%s) = %d, but the record, the acknowledged and the found ids make %d", tt.doc, n, listed)
		}
	}
}
