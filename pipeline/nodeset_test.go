package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
)

// TestNodeSet fills a nodeSet as plan does and looks ids up in it: ids
// Sluice writes (64 lowercase hex digits) and ids of other tools, each
// with its kind; an id added with several kinds gets them merged (one of
// the record that a dead run also wrote is nodeRewritten; acknowledged
// comes before intended); ids that differ in one of the digits kept, or
// only in case, or in length, are told apart, and ids that differ only
// beyond them share an entry.
func TestNodeSet(t *testing.T) {
	a := sink.NodeID("doc.md", "alpha", 0)
	b := sink.NodeID("doc.md", "beta", 0)
	c := sink.NodeID("doc.md", "gamma", 0)
	last := 2*idPrefix - 1     // the last digit kept
	near := withDigit(a, last) // a with the last digit kept changed
	twin := withDigit(a, 63)   // a with its last digit changed
	type add struct {
		id   string
		kind nodeKind
	}
	for _, tt := range []struct {
		name string
		adds []add
		want map[string]nodeKind // lookups; ids absent from adds want nodeUnknown
		len  int
	}{
		{name: "empty", want: map[string]nodeKind{a: nodeUnknown, "x": nodeUnknown, "": nodeUnknown}},
		{
			name: "hex ids, each kind",
			adds: []add{{c, nodeRecorded}, {a, nodeAcked}, {b, nodeIntended}},
			want: map[string]nodeKind{a: nodeAcked, b: nodeIntended, c: nodeRecorded, near: nodeUnknown},
			len:  3,
		},
		{
			name: "other ids, each kind",
			adds: []add{{"node-1", nodeRecorded}, {"node-2", nodeAcked}, {"node-3", nodeIntended}},
			want: map[string]nodeKind{"node-1": nodeRecorded, "node-2": nodeAcked, "node-3": nodeIntended, "node-4": nodeUnknown, a: nodeUnknown},
			len:  3,
		},
		{
			name: "recorded and written by a dead run, whatever the order added",
			adds: []add{{a, nodeIntended}, {a, nodeRecorded}, {b, nodeRecorded}, {b, nodeAcked}, {"x", nodeAcked}, {"x", nodeRecorded},
				{c, nodeRecorded}, {c, nodeIntended}, {c, nodeAcked}},
			want: map[string]nodeKind{a: nodeRewritten, b: nodeRewritten, "x": nodeRewritten, c: nodeRewritten},
			len:  4,
		},
		{
			name: "acknowledged before intended",
			adds: []add{{a, nodeIntended}, {a, nodeAcked}, {"x", nodeIntended}, {"x", nodeAcked}, {"y", nodeAcked}, {"y", nodeIntended}},
			want: map[string]nodeKind{a: nodeAcked, "x": nodeAcked, "y": nodeAcked},
			len:  3,
		},
		{
			name: "the same id twice counts once",
			adds: []add{{a, nodeRecorded}, {a, nodeRecorded}, {"x", nodeAcked}, {"x", nodeAcked}},
			want: map[string]nodeKind{a: nodeRecorded, "x": nodeAcked},
			len:  2,
		},
		{
			name: "uppercase hex is another id",
			adds: []add{{a, nodeRecorded}, {strings.ToUpper(b), nodeAcked}},
			want: map[string]nodeKind{a: nodeRecorded, strings.ToUpper(a): nodeUnknown, b: nodeUnknown, strings.ToUpper(b): nodeAcked},
			len:  2,
		},
		{
			name: "hex of another length is another id",
			adds: []add{{a[:62], nodeRecorded}, {b + "00", nodeAcked}, {c, nodeIntended}},
			want: map[string]nodeKind{a[:62]: nodeRecorded, a: nodeUnknown, b + "00": nodeAcked, b: nodeUnknown, c: nodeIntended, c[:62]: nodeUnknown},
			len:  3,
		},
		{
			name: "ids that differ in the last digit kept",
			adds: []add{{a, nodeRecorded}, {near, nodeIntended}},
			want: map[string]nodeKind{a: nodeRecorded, near: nodeIntended},
			len:  2,
		},
		{
			name: "ids that differ only beyond the digits kept share an entry",
			adds: []add{{a, nodeRecorded}, {twin, nodeIntended}},
			want: map[string]nodeKind{a: nodeRewritten, twin: nodeRewritten, near: nodeUnknown},
			len:  1,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeSet(len(tt.adds))
			for _, n := range tt.adds {
				s.add(n.id, n.kind)
			}
			s.freeze()
			for id, want := range tt.want {
				if got := s.kind(id); got != want {
					t.Errorf("kind(%q) = %d, want %d", id, got, want)
				}
			}
			if got := s.len(); got != tt.len {
				t.Errorf("len = %d, want %d", got, tt.len)
			}
		})
	}
}

// withDigit returns the id with its digit i changed.
func withDigit(id string, i int) string {
	d := byte('0')
	if id[i] == d {
		d = '1'
	}
	return id[:i] + string(d) + id[i+1:]
}

// TestNodeSetNil: a document the manifest does not know has no nodeSet.
func TestNodeSetNil(t *testing.T) {
	var s *nodeSet
	if k := s.kind(sink.NodeID("doc.md", "alpha", 0)); k != nodeUnknown {
		t.Errorf("kind = %d on a nil set, want nodeUnknown", k)
	}
	if n := s.len(); n != 0 {
		t.Errorf("len = %d on a nil set, want 0", n)
	}
}

// TestNodeSetMany looks up every id of a large set, added out of order with
// duplicates, and ids next to them.
func TestNodeSetMany(t *testing.T) {
	const n = 5000
	s := newNodeSet(n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = sink.NodeID("doc.md", fmt.Sprint("chunk ", i), 0)
	}
	for i := n - 1; i >= 0; i-- {
		s.add(ids[i], nodeKind(1+i%3))
		if i%7 == 0 {
			s.add(ids[i], nodeIntended)
		}
	}
	s.freeze()
	if s.len() != n {
		t.Fatalf("len = %d, want %d", s.len(), n)
	}
	for i, id := range ids {
		want := nodeKind(1 + i%3)
		if i%7 == 0 {
			want = merge(want, nodeIntended)
		}
		if got := s.kind(id); got != want {
			t.Fatalf("kind(ids[%d]) = %d, want %d", i, got, want)
		}
		if got := s.kind(sink.NodeID("doc.md", fmt.Sprint("chunk ", i), 1)); got != nodeUnknown {
			t.Fatalf("kind of another ordinal of chunk %d = %d, want nodeUnknown", i, got)
		}
	}
}

// TestDecodeNodeID decodes the ids sink.NodeID writes, and nothing else:
// each digit must be lowercase hex, those beyond the bytes kept too.
func TestDecodeNodeID(t *testing.T) {
	id := sink.NodeID("doc.md", "alpha", 0)
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{id, true},
		{strings.Repeat("0", 64), true},
		{strings.Repeat("f", 64), true},
		{strings.Repeat("9a", 32), true},
		{"", false},
		{id[:63], false},
		{id + "0", false},
		{strings.Repeat("F", 64), false},
		{strings.Repeat("g", 64), false},
		{strings.Repeat("0", 2*idPrefix-1) + "g" + strings.Repeat("0", 64-2*idPrefix), false},
		{strings.Repeat("0", 2*idPrefix) + "G" + strings.Repeat("0", 63-2*idPrefix), false},
		{strings.Repeat("0", 63) + "/", false},
		{strings.Repeat("0", 63) + ":", false},
		{strings.Repeat("0", 63) + "`", false},
		{strings.Repeat("é", 32), false},
	} {
		b, ok := decodeNodeID(tt.id)
		if ok != tt.ok {
			t.Errorf("decodeNodeID(%q) ok = %v, want %v", tt.id, ok, tt.ok)
			continue
		}
		if ok {
			if got := fmt.Sprintf("%x", b); got != tt.id[:2*idPrefix] {
				t.Errorf("decodeNodeID(%q) = %s, want its first %d digits", tt.id, got, 2*idPrefix)
			}
		}
	}
}

// TestDeadRunNodesAreKnown edits a document that a run died while writing
// (as left in the manifest: one new chunk acknowledged, one intended and
// not written, and an id of another tool acknowledged) and checks how each
// id the manifest knows counts: the acknowledged chunk is reused, not
// embedded again; the intended one is written again; the other tool's
// node and the chunks the edit removed are deleted; and a dry run plans
// exactly that, deleted chunks included.
func TestDeadRunNodesAreKnown(t *testing.T) {
	ctx := context.Background()
	body := paragraphText("dead", 120)
	in := newIncr(t, map[string]string{"a.md": body})
	in.run(nil)
	edited := strings.Replace(body, "Sentence 10 ", "The first edit. ", 1)
	edited = strings.Replace(edited, "Sentence 100 ", "The second edit. ", 1)
	in.write("a.md", edited)

	// The chunks a run writes for the edited file, the new ones sorted.
	clean := newIncr(t, nil)
	clean.root = in.root
	clean.run(nil)
	var added []string
	for id := range clean.store.nodes {
		if _, ok := in.store.nodes[id]; !ok {
			added = append(added, id)
		}
	}
	slices.Sort(added)
	if len(added) < 2 {
		t.Fatalf("the edit adds %d chunks; the test needs 2", len(added))
	}
	acked, intended, other := added[0], added[1], "other-tool/node 1"

	dead, err := in.state.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in.store.nodes[acked] = clean.store.nodes[acked]
	in.store.nodes[other] = sink.Node{ID: other, RefDocID: "a.md", Text: "written by another tool"}
	if err := dead.Ack(ctx, map[string][]state.Node{"a.md": {{ID: acked}, {ID: other}}}); err != nil {
		t.Fatal(err)
	}
	if err := dead.Intend(ctx, map[string][]state.Node{"a.md": {{ID: intended}}}); err != nil {
		t.Fatal(err)
	}
	removed := 0 // chunks of the record the edit removed
	for id, n := range in.store.nodes {
		if _, ok := clean.store.nodes[id]; !ok && n.RefDocID == "a.md" && id != other {
			removed++
		}
	}

	plan := in.run(func(o *Options) { o.DryRun = true })
	in.emb.requests, in.store.updates = 0, 0
	rep := in.run(nil)
	wantReused := len(clean.store.nodes) - len(added) + 1 // the acknowledged one too
	if rep.FilesUpdated != 1 || rep.ChunksWritten != len(added)-1 || rep.ChunksReused != wantReused || rep.ChunksDeleted != removed+1 {
		t.Errorf("run: %d written, %d reused, %d deleted; want %d, %d, %d", rep.ChunksWritten, rep.ChunksReused, rep.ChunksDeleted, len(added)-1, wantReused, removed+1)
	}
	if in.store.updates == 0 {
		t.Error("the metadata of the chunk the dead run acknowledged was not rewritten")
	}
	if plan.ChunksPlanned != rep.ChunksWritten || plan.ChunksReused != rep.ChunksReused || plan.ChunksDeleted != rep.ChunksDeleted {
		t.Errorf("plan: %d planned, %d reused, %d deleted; the run wrote %d, reused %d, deleted %d",
			plan.ChunksPlanned, plan.ChunksReused, plan.ChunksDeleted, rep.ChunksWritten, rep.ChunksReused, rep.ChunksDeleted)
	}
	in.assertEqualsCleanRun()
}
