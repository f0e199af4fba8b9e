package state

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, path, scope string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, scope)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// nodes builds the argument of Intend and Ack for one document; each
// node's text key is "k" + its id.
func nodes(doc string, ids ...string) map[string][]Node {
	ns := make([]Node, len(ids))
	for i, id := range ids {
		ns[i] = Node{ID: id, Key: "k" + id}
	}
	return map[string][]Node{doc: ns}
}

// refs names nodes of doc.
func refs(doc string, ids ...string) []NodeRef {
	out := make([]NodeRef, len(ids))
	for i, id := range ids {
		out[i] = NodeRef{Doc: doc, ID: id}
	}
	return out
}

func begin(t *testing.T, s *Store) *Run {
	t.Helper()
	r, err := s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ackCommit acknowledges the node ids of doc in run and commits doc with
// the stamp of hash.
func ackCommit(t *testing.T, run *Run, doc, hash string, ids ...string) {
	t.Helper()
	ctx := context.Background()
	if err := run.Ack(ctx, nodes(doc, ids...)); err != nil {
		t.Fatal(err)
	}
	if err := run.Commit(ctx, doc, Stamp{Hash: hash}, ""); err != nil {
		t.Fatal(err)
	}
}

func TestCommitPendingForget(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s := open(t, path, "local:a")
	other := open(t, path, "local:b")

	if _, ok, err := s.Doc(ctx, "a.md"); ok || err != nil {
		t.Fatalf("Doc on empty store = %v, %v", ok, err)
	}
	run := begin(t, s)
	if err := run.Intend(ctx, nodes("a.md", "n2", "n1", "n3")); err != nil {
		t.Fatal(err)
	}
	if err := run.Ack(ctx, nodes("a.md", "n2", "n1")); err != nil {
		t.Fatal(err)
	}
	if acked, intended, _ := s.Pending(ctx, "a.md"); !slices.Equal(acked, []string{"n1", "n2"}) || !slices.Equal(intended, []string{"n3"}) {
		t.Errorf("Pending = %v, %v; want [n1 n2], [n3]", acked, intended)
	}
	if err := s.Fail(ctx, "a.md", "boom", time.Unix(10, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, "a.md", "boom again", time.Unix(20, 0)); err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Failures(ctx); len(f) != 1 || f[0].Attempts != 2 || f[0].Reason != "boom again" {
		t.Errorf("Failures = %+v", f)
	}
	mt := time.Unix(1700000000, 123)
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"kn1": {1, 2}, "kx": {3}}); err != nil {
		t.Fatal(err)
	}
	if err := run.Ack(ctx, nodes("a.md", "n3")); err != nil {
		t.Fatal(err)
	}
	if err := run.Commit(ctx, "a.md", Stamp{Hash: "h", Size: 3, ModTime: mt, MetaHash: "m"}, "m"); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Doc(ctx, "a.md")
	if !ok || err != nil || got.Hash != "h" || !got.ModTime.Equal(mt) || !slices.Equal(got.NodeIDs, []string{"n1", "n2", "n3"}) {
		t.Errorf("Doc = %+v, %v, %v", got, ok, err)
	}
	if acked, intended, _ := s.Pending(ctx, "a.md"); len(acked)+len(intended) != 0 {
		t.Errorf("Commit left pending ids %v %v", acked, intended)
	}
	if v, _ := s.LoadVectors(ctx, "m", []string{"kn1", "kx"}); len(v) != 1 || !slices.Equal(v["kx"], []float32{3}) {
		t.Errorf("after Commit released the key of n1, the journal holds %v; want only kx", v)
	}
	if f, _ := s.Failures(ctx); len(f) != 0 {
		t.Errorf("Commit left the dead-letter entry %v", f)
	}
	if st, _ := s.Stamps(ctx); st["a.md"].Hash != "h" || len(st) != 1 {
		t.Errorf("Stamps = %v", st)
	}
	later := mt.Add(time.Hour)
	if err := s.Touch(ctx, "a.md", later, ""); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Doc(ctx, "a.md"); !got.ModTime.Equal(later) || len(got.NodeIDs) != 3 || got.Hash != "h" {
		t.Errorf("after Touch: %+v, want the new time and the same nodes and hash", got)
	}
	if ids, _ := other.DocIDs(ctx); len(ids) != 0 {
		t.Errorf("scope b sees %v", ids)
	}
	if err := s.Forget(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.DocIDs(ctx); len(ids) != 0 {
		t.Errorf("after Forget: %v", ids)
	}
	if _, ok, _ := s.Doc(ctx, "a.md"); ok {
		t.Error("after Forget the record is still there")
	}
}

// TestForgetMany: Forget removes the records, pending ids and dead letters
// of every document it is given, and no other.
func TestForgetMany(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "local:a")
	run := begin(t, s)
	for _, id := range []string{"a.md", "b.md", "c.md"} {
		if err := run.Intend(ctx, nodes(id, id+"#1")); err != nil {
			t.Fatal(err)
		}
		if err := run.Ack(ctx, nodes(id, id+"#1")); err != nil {
			t.Fatal(err)
		}
		if err := run.Commit(ctx, id, Stamp{Hash: "h", Size: 1, ModTime: time.Unix(1, 0)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.Intend(ctx, nodes("d.md", "d.md#1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, "e.md", "boom", time.Unix(10, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx); err != nil {
		t.Fatalf("Forget of nothing: %v", err)
	}
	if err := s.Forget(ctx, "a.md", "c.md", "d.md", "e.md", "unknown.md"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.DocIDs(ctx); !slices.Equal(ids, []string{"b.md"}) {
		t.Errorf("documents after Forget = %v, want [b.md]", ids)
	}
	if acked, intended, _ := s.Pending(ctx, "d.md"); len(acked)+len(intended) != 0 {
		t.Errorf("Forget left pending ids of d.md: %v %v", acked, intended)
	}
	if f, _ := s.Failures(ctx); len(f) != 0 {
		t.Errorf("Forget left dead letters %v", f)
	}
	if got, ok, _ := s.Doc(ctx, "b.md"); !ok || !slices.Equal(got.NodeIDs, []string{"b.md#1"}) {
		t.Errorf("b.md after Forget of others = %+v (%v), want its record", got, ok)
	}
}

// TestStale covers what a run must delete before committing a document:
// the committed ids and those of a dead run, minus what this run
// acknowledged; a dead run's id that this run writes again is not stale.
func TestStale(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	first := begin(t, s)
	if err := first.Ack(ctx, nodes("d", "a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(ctx, "d", Stamp{Hash: "1"}, "m"); err != nil {
		t.Fatal(err)
	}
	dead := begin(t, s) // dies after writing d and e, and intending f
	if err := dead.Intend(ctx, nodes("d", "d", "e", "f")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Ack(ctx, nodes("d", "d", "e")); err != nil {
		t.Fatal(err)
	}
	run := begin(t, s)
	if run.id <= dead.id || dead.id <= first.id {
		t.Fatalf("run tags %d, %d, %d do not increase", first.id, dead.id, run.id)
	}
	if err := run.Intend(ctx, nodes("d", "b", "e", "g")); err != nil {
		t.Fatal(err)
	}
	if err := run.Ack(ctx, nodes("d", "b", "e", "g")); err != nil {
		t.Fatal(err)
	}
	stale, err := run.Stale(ctx, "d")
	if want := []string{"a", "c", "d", "f"}; err != nil || !slices.Equal(stale, want) {
		t.Fatalf("Stale = %v, %v; want %v", stale, err, want)
	}
	for _, limit := range []int{1, 2, 3, 4, 10} {
		var got []string
		for after := ""; ; {
			page, err := run.StalePage(ctx, "d", after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page))
			}
			if got = append(got, page...); len(page) < limit || len(got) > 4 {
				break
			}
			after = page[len(page)-1]
		}
		if !slices.Equal(got, stale) {
			t.Errorf("StalePage, limit %d, gave %v; want %v", limit, got, stale)
		}
	}
	if err := run.Commit(ctx, "d", Stamp{Hash: "2"}, "m"); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Doc(ctx, "d"); !slices.Equal(got.NodeIDs, []string{"b", "e", "g"}) || got.Hash != "2" {
		t.Errorf("Doc after Commit = %+v, want nodes b, e, g", got)
	}
	if stale, _ := begin(t, s).Stale(ctx, "d"); !slices.Equal(stale, []string{"b", "e", "g"}) {
		t.Errorf("a later run that acknowledged nothing sees %v as stale, want every committed id", stale)
	}
}

// TestFoundRetractWrittenAbandon: ids the sink holds beyond the record
// (Found) are pending like a dead run's, so Stale returns those not
// acknowledged again; Retract marks what runs recorded beyond the record as
// maybe stored and counts the acknowledged ones; Written lists them,
// without the found ids, even those the run wrote again (the sink held
// them before the run), page by page; Abandon keeps the record and the
// found ids, which the next run still deletes if it does not write them
// again, and drops the rest.
// TestWithdraw: stale ids withdrawn before their deletion leave the
// record, whose size becomes LostSize, and are pending as intended (maybe
// stored), those a dead run acknowledged too, while Stale still returns
// them; the ids this run acknowledged, and another document's, are left
// alone. Commit then records the run's ids; a rollback instead leaves a
// record of the ids not withdrawn.
func TestWithdraw(t *testing.T) {
	for _, then := range []string{"commit", "rollback"} {
		t.Run(then, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
			first := begin(t, s)
			ackCommit(t, first, "d", "1", "a", "b", "c", "k")
			ackCommit(t, first, "o", "1", "a")
			dead := begin(t, s)
			if err := dead.Intend(ctx, nodes("d", "e", "f", "g")); err != nil {
				t.Fatal(err)
			}
			if err := dead.Ack(ctx, nodes("d", "e", "f")); err != nil {
				t.Fatal(err)
			}
			run := begin(t, s)
			if err := run.Ack(ctx, nodes("d", "k", "h")); err != nil {
				t.Fatal(err)
			}
			stale := []string{"a", "b", "c", "e", "f", "g"}
			if got, err := run.Stale(ctx, "d"); err != nil || !slices.Equal(got, stale) {
				t.Fatalf("Stale = %v, %v; want %v", got, err, stale)
			}
			if err := run.Withdraw(ctx, "d", []string{"a", "b", "e", "g"}); err != nil {
				t.Fatal(err)
			}
			if err := run.Withdraw(ctx, "d", nil); err != nil {
				t.Errorf("Withdraw(nil) = %v", err)
			}
			if got, err := run.Stale(ctx, "d"); err != nil || !slices.Equal(got, stale) {
				t.Errorf("Stale after Withdraw = %v, %v; want still %v", got, err, stale)
			}
			d, ok, err := s.Doc(ctx, "d")
			if err != nil || !ok || !slices.Equal(d.NodeIDs, []string{"c", "k"}) || d.Size != LostSize || d.Hash != "1" {
				t.Errorf("record after Withdraw: %+v, %v, %v; want nodes c and k, size LostSize", d, ok, err)
			}
			acked, intended, err := s.Pending(ctx, "d")
			if err != nil || !slices.Equal(acked, []string{"f", "h", "k"}) || !slices.Equal(intended, []string{"a", "b", "e", "g"}) {
				t.Errorf("Pending after Withdraw = %v, %v, %v; want f, h and k acknowledged; a, b, e and g intended", acked, intended, err)
			}
			if o, _, err := s.Doc(ctx, "o"); err != nil || !slices.Equal(o.NodeIDs, []string{"a"}) || o.Size == LostSize {
				t.Errorf("the other document's record changed: %+v, %v", o, err)
			}

			wantNodes, wantSize := []string{"h", "k"}, int64(7)
			if then == "commit" {
				if err := run.Commit(ctx, "d", Stamp{Hash: "2", Size: wantSize}, ""); err != nil {
					t.Fatal(err)
				}
			} else {
				wantNodes, wantSize = []string{"c", "k"}, LostSize
				if _, err := run.Retract(ctx, "d", false); err != nil {
					t.Fatal(err)
				}
				written, err := run.Written(ctx, "d", "", -1)
				if want := []string{"a", "b", "e", "f", "g", "h"}; err != nil || !slices.Equal(written, want) {
					t.Errorf("Written = %v, %v; want %v", written, err, want)
				}
				if err := run.Abandon(ctx, "d"); err != nil {
					t.Fatal(err)
				}
			}
			d, _, err = s.Doc(ctx, "d")
			if err != nil || !slices.Equal(d.NodeIDs, wantNodes) || d.Size != wantSize {
				t.Errorf("record after the %s: %+v, %v; want nodes %v, size %d", then, d, err, wantNodes, wantSize)
			}
			if acked, intended, err := s.Pending(ctx, "d"); err != nil || len(acked)+len(intended) > 0 {
				t.Errorf("Pending after the %s = %v, %v, %v; want none", then, acked, intended, err)
			}
		})
	}
}

// TestWithdrawDocs: documents about to be removed keep every id the
// manifest knows them by, still counted as stored, but none of them is
// trusted to be stored any more (their records lose them, nothing is
// acknowledged), and their records take LostSize; other documents are left
// alone, and Forget then drops everything.
func TestWithdrawDocs(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	first := begin(t, s)
	ackCommit(t, first, "d", "1", "a", "b", "c")
	ackCommit(t, first, "o", "1", "a")
	dead := begin(t, s)
	if err := dead.Intend(ctx, nodes("d", "e", "f")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Ack(ctx, nodes("d", "b", "e")); err != nil {
		t.Fatal(err)
	}
	stored, err := s.StoredCount(ctx, "d")
	if err != nil || stored != 4 {
		t.Fatalf("StoredCount = %d, %v; want a, b, c and e", stored, err)
	}
	if err := s.WithdrawDocs(ctx); err != nil {
		t.Errorf("WithdrawDocs() = %v", err)
	}
	if err := s.WithdrawDocs(ctx, "d", "unknown"); err != nil {
		t.Fatal(err)
	}
	d, ok, err := s.Doc(ctx, "d")
	if err != nil || !ok || len(d.NodeIDs) != 0 || d.Size != LostSize || d.Hash != "1" {
		t.Errorf("record after WithdrawDocs: %+v, %v, %v; want no nodes, size LostSize, the hash kept", d, ok, err)
	}
	acked, intended, found, err := s.PendingFound(ctx, "d")
	if err != nil || len(acked) != 0 || !slices.Equal(intended, []string{"a", "b", "c", "e", "f"}) || found != 4 {
		t.Errorf("PendingFound after WithdrawDocs = %v, %v, %d, %v; want none acknowledged, a to f intended, 4 of them found", acked, intended, found, err)
	}
	if n, err := s.StoredCount(ctx, "d"); err != nil || n != stored {
		t.Errorf("StoredCount after WithdrawDocs = %d, %v; want still %d", n, err, stored)
	}
	if ids, err := s.RecordedIDs(ctx, "d", "", 10); err != nil || !slices.Equal(ids, []string{"a", "b", "c", "e", "f"}) {
		t.Errorf("RecordedIDs after WithdrawDocs = %v, %v; want a to f", ids, err)
	}
	if o, _, err := s.Doc(ctx, "o"); err != nil || !slices.Equal(o.NodeIDs, []string{"a"}) || o.Size == LostSize {
		t.Errorf("the other document's record changed: %+v, %v", o, err)
	}
	if err := s.Forget(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Doc(ctx, "d"); err != nil || ok {
		t.Errorf("record after Forget: %v, %v; want none", ok, err)
	}
	if ids, err := s.RecordedIDs(ctx, "d", "", 10); err != nil || len(ids) != 0 {
		t.Errorf("RecordedIDs after Forget = %v, %v; want none", ids, err)
	}
}

func TestFoundRetractWrittenAbandon(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	ackCommit(t, begin(t, s), "d", "1", "a", "b")
	dead := begin(t, s)
	if err := dead.Intend(ctx, nodes("d", "w1", "w2")); err != nil {
		t.Fatal(err)
	}
	if err := dead.Ack(ctx, nodes("d", "w1")); err != nil {
		t.Fatal(err)
	}
	run := begin(t, s)
	if err := run.Found(ctx, refs("d", "a", "o1", "o2", "w1")); err != nil {
		t.Fatal(err)
	}
	if acked, intended, err := s.Pending(ctx, "d"); err != nil || !slices.Equal(acked, []string{"w1"}) || !slices.Equal(intended, []string{"o1", "o2", "w2"}) {
		t.Fatalf("Pending after Found = %v, %v, %v; want w1 still acknowledged, o1, o2 and w2 intended, committed a not again", acked, intended, err)
	}
	if err := run.Intend(ctx, nodes("d", "a", "o1", "n1", "n2", "x")); err != nil {
		t.Fatal(err)
	}
	if err := run.Ack(ctx, nodes("d", "a", "o1", "n1", "n2")); err != nil { // the sink refused x
		t.Fatal(err)
	}
	if stale, err := run.Stale(ctx, "d"); err != nil || !slices.Equal(stale, []string{"b", "o2", "w1", "w2"}) {
		t.Errorf("Stale = %v, %v; want b, o2, w1 and w2", stale, err)
	}
	stored, err := run.Retract(ctx, "d", true)
	if err != nil || stored != 3 {
		t.Errorf("Retract = %d, %v; want the 3 acknowledged ids beyond the record and the found ids: n1, n2, w1", stored, err)
	}
	if acked, _, _ := s.Pending(ctx, "d"); !slices.Equal(acked, []string{"a", "o1"}) {
		t.Errorf("acknowledged after Retract: %v; want only the committed a and the found o1, which stay stored", acked)
	}
	var written []string
	for after := ""; ; {
		page, err := run.Written(ctx, "d", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("Written page of %d ids, want at most 2", len(page))
		}
		written = append(written, page...)
		after = page[len(page)-1]
	}
	// o1 was found in the sink, then written again by this run: it was
	// there before the run and stays. The dead run may have written w2;
	// the sink refused x, whose row may have replaced a dead run's stored
	// one.
	if !slices.Equal(written, []string{"n1", "n2", "w1", "w2", "x"}) {
		t.Errorf("Written = %v, want n1, n2, w1, w2 and x", written)
	}
	if err := run.Abandon(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	doc, ok, err := s.Doc(ctx, "d")
	acked, intended, _ := s.Pending(ctx, "d")
	if err != nil || !ok || !slices.Equal(doc.NodeIDs, []string{"a", "b"}) || !slices.Equal(acked, []string{"o1"}) || !slices.Equal(intended, []string{"o2"}) || doc.MetaHash != "" {
		t.Errorf("after Abandon: record %+v (%v, %v), pending %v %v; want the record with a and b, its metadata hash cleared, only the found o1 and o2 pending", doc, ok, err, acked, intended)
	}
	if _, _, found, err := s.PendingFound(ctx, "d"); err != nil || found != 1 {
		t.Errorf("PendingFound: %d found, %v; want 1, o2 (o1, written again, is acknowledged)", found, err)
	}
	if stale, err := begin(t, s).Stale(ctx, "d"); err != nil || !slices.Equal(stale, []string{"a", "b", "o1", "o2"}) {
		t.Errorf("next run's Stale = %v, %v; want the record's a and b and the found o1 and o2, which the store still holds", stale, err)
	}
}

// TestUpgradeFromSchema2 opens a file in the previous layout, where a
// document's node ids were one JSON array, and finds every record intact.
func TestUpgradeFromSchema2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `
		CREATE TABLE docs (scope TEXT NOT NULL, id TEXT NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,
			mtime_ns INTEGER NOT NULL, meta_hash TEXT NOT NULL, node_ids TEXT NOT NULL, PRIMARY KEY (scope, id)) WITHOUT ROWID;
		CREATE TABLE pending (scope TEXT NOT NULL, id TEXT NOT NULL, node_id TEXT NOT NULL, acked INTEGER NOT NULL,
			PRIMARY KEY (scope, id, node_id)) WITHOUT ROWID;
		CREATE TABLE journal (scope TEXT NOT NULL, model TEXT NOT NULL, key TEXT NOT NULL, vec BLOB NOT NULL,
			PRIMARY KEY (scope, model, key)) WITHOUT ROWID;
		CREATE TABLE failures (scope TEXT NOT NULL, id TEXT NOT NULL, reason TEXT NOT NULL, attempts INTEGER NOT NULL,
			last_ns INTEGER NOT NULL, PRIMARY KEY (scope, id)) WITHOUT ROWID;
		CREATE TABLE embedders (scope TEXT PRIMARY KEY, info TEXT NOT NULL) WITHOUT ROWID;
		INSERT INTO docs VALUES ('x', 'a.md', 'h', 3, 7, 'm', '["n1","n2"]'), ('x', 'b.md', 'h2', 4, 8, 'm', '[]');
		INSERT INTO pending VALUES ('x', 'c.md', 'p1', 1), ('x', 'c.md', 'p2', 0);
		PRAGMA user_version = 2;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, "x")
	if d, ok, err := s.Doc(ctx, "a.md"); !ok || err != nil || d.Hash != "h" || d.ModTime.UnixNano() != 7 || !slices.Equal(d.NodeIDs, []string{"n1", "n2"}) {
		t.Errorf("Doc(a.md) after the upgrade = %+v, %v, %v", d, ok, err)
	}
	if d, ok, _ := s.Doc(ctx, "b.md"); !ok || len(d.NodeIDs) != 0 {
		t.Errorf("Doc(b.md) after the upgrade = %+v, %v", d, ok)
	}
	if acked, intended, _ := s.Pending(ctx, "c.md"); !slices.Equal(acked, []string{"p1"}) || !slices.Equal(intended, []string{"p2"}) {
		t.Errorf("Pending(c.md) after the upgrade = %v, %v", acked, intended)
	}
	run := begin(t, s)
	if stale, _ := run.Stale(ctx, "c.md"); !slices.Equal(stale, []string{"p1", "p2"}) {
		t.Errorf("Stale(c.md) = %v: a dead run's ids from before the upgrade must count as stale", stale)
	}
	// They are a dead run's, not found in the sink: written again and
	// then failed, the document's rollback deletes them.
	if err := run.Ack(ctx, nodes("c.md", "p1")); err != nil {
		t.Fatal(err)
	}
	if n, err := run.Retract(ctx, "c.md", false); err != nil || n != 1 {
		t.Errorf("Retract(c.md) = %d, %v; want the 1 acknowledged id", n, err)
	}
	if written, err := run.Written(ctx, "c.md", "", 10); err != nil || !slices.Equal(written, []string{"p1", "p2"}) {
		t.Errorf("Written(c.md) = %v, %v; want the dead run's p1 and p2, to delete", written, err)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
}

// TestUpgradeFromSchema3 opens a file of schema 3, which marked the ids
// Found recorded by run tag 0 alone, and finds them still treated as found
// (never deleted by a rollback), and a dead run's ids as written by it.
func TestUpgradeFromSchema3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `
		CREATE TABLE docs (scope TEXT NOT NULL, id TEXT NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,
			mtime_ns INTEGER NOT NULL, meta_hash TEXT NOT NULL, PRIMARY KEY (scope, id)) WITHOUT ROWID;
		CREATE TABLE pending (scope TEXT NOT NULL, id TEXT NOT NULL, node_id TEXT NOT NULL, acked INTEGER NOT NULL,
			key TEXT NOT NULL DEFAULT '', run INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (scope, id, node_id)) WITHOUT ROWID;
		INSERT INTO docs VALUES ('x', 'a.md', 'h', 3, 7, 'm');
		INSERT INTO pending VALUES ('x', 'd', 'f1', 0, '', 0), ('x', 'd', 'w1', 1, 'k', 5);
		PRAGMA user_version = 3;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, "x")
	run := begin(t, s)
	if err := run.Ack(ctx, nodes("d", "f1")); err != nil { // written again: still found
		t.Fatal(err)
	}
	if written, err := run.Written(ctx, "d", "", 10); err != nil || !slices.Equal(written, []string{"w1"}) {
		t.Errorf("Written after the upgrade = %v, %v; want the dead run's w1, not the found f1", written, err)
	}
	// Records from before schema 5 have no change stamp: the next run
	// hashes their files once.
	if d, ok, err := s.Doc(ctx, "a.md"); !ok || err != nil || d.Hash != "h" || d.Change != "" {
		t.Errorf("Doc(a.md) after the upgrade = %+v, %v, %v; want its record, without a change stamp", d, ok, err)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
}

func TestCheckEmbedder(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "local:x")
	hash := Embedder{Provider: "hash", Dimensions: 1536}
	if err := s.CheckEmbedder(ctx, hash); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	if err := s.SetEmbedder(ctx, hash); err != nil {
		t.Fatal(err)
	}
	other := Embedder{Provider: "openai", Model: "text-embedding-3-small", Dimensions: 1536}
	if err := s.CheckEmbedder(ctx, other); err != nil {
		t.Errorf("empty index must adopt any embedder, got %v", err)
	}
	if err := begin(t, s).Commit(ctx, "a", Stamp{}, ""); err != nil {
		t.Fatal(err)
	}
	err := s.CheckEmbedder(ctx, other)
	var me *ModelChangedError
	if !errors.Is(err, ErrModelChanged) || !errors.As(err, &me) || me.Built != hash {
		t.Fatalf("CheckEmbedder = %v, want ModelChangedError", err)
	}
	if want := "--full"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not say to run %s", err, want)
	}
	if err := s.CheckEmbedder(ctx, hash); err != nil {
		t.Errorf("same embedder: %v", err)
	}
}

// TestChangeEmbedder: a --full run with another model records it at once
// and withdraws every document of its scope, with nothing listed in
// memory; with the same model, or none recorded, nothing changes; another
// scope is left alone.
func TestChangeEmbedder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, other := open(t, path, "x"), open(t, path, "y")
	hash := Embedder{Provider: "hash", Dimensions: 8}
	openai := Embedder{Provider: "openai", Model: "m", Dimensions: 8}
	if err := s.ChangeEmbedder(ctx, openai); err != nil {
		t.Fatal(err)
	}
	var recorded Embedder
	if ok, err := s.readInfo(ctx, "embedders", "embedder", &recorded); ok || err != nil {
		t.Fatalf("ChangeEmbedder recorded %+v (%v) in a manifest that had none", recorded, err)
	}
	for _, st := range []*Store{s, other} {
		if err := st.SetEmbedder(ctx, hash); err != nil {
			t.Fatal(err)
		}
		run := begin(t, st)
		ackCommit(t, run, "a.md", "1", "a1", "a2")
		ackCommit(t, run, "b.md", "1", "b1")
		if err := begin(t, st).Ack(ctx, nodes("c.md", "c1")); err != nil { // a run that died
			t.Fatal(err)
		}
	}
	if err := s.ChangeEmbedder(ctx, hash); err != nil {
		t.Fatal(err)
	}
	if d, _, err := s.Doc(ctx, "a.md"); err != nil || len(d.NodeIDs) != 2 || d.Size == LostSize {
		t.Fatalf("the same model changed the record: %+v, %v", d, err)
	}
	if err := s.ChangeEmbedder(ctx, openai); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckEmbedder(ctx, openai); err != nil {
		t.Errorf("CheckEmbedder of the new model = %v, want it recorded", err)
	}
	if err := s.CheckEmbedder(ctx, hash); !errors.Is(err, ErrModelChanged) {
		t.Errorf("CheckEmbedder of the old model = %v, want ErrModelChanged", err)
	}
	for doc, want := range map[string][]string{"a.md": {"a1", "a2"}, "b.md": {"b1"}} {
		d, _, err := s.Doc(ctx, doc)
		if err != nil || len(d.NodeIDs) != 0 || d.Size != LostSize {
			t.Errorf("record of %s: %+v, %v; want no nodes, size LostSize", doc, d, err)
		}
		acked, intended, found, err := s.PendingFound(ctx, doc)
		if err != nil || len(acked) != 0 || !slices.Equal(intended, want) || found != len(want) {
			t.Errorf("PendingFound(%s) = %v, %v, %d, %v; want %v found", doc, acked, intended, found, err, want)
		}
	}
	if d, _, err := other.Doc(ctx, "a.md"); err != nil || len(d.NodeIDs) != 2 || d.Size == LostSize {
		t.Errorf("another scope's record changed: %+v, %v", d, err)
	}
	if acked, _, err := other.Pending(ctx, "c.md"); err != nil || !slices.Equal(acked, []string{"c1"}) {
		t.Errorf("another scope's acknowledged ids: %v, %v; want c1", acked, err)
	}
	if err := other.CheckEmbedder(ctx, hash); err != nil {
		t.Errorf("another scope's embedder changed: %v", err)
	}
}

// TestChangeSplitting: a run with other splitter settings records them at
// once and marks every record of its scope to be read again, keeping their
// node ids; another scope is left alone.
func TestChangeSplitting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, other := open(t, path, "x"), open(t, path, "y")
	for _, st := range []*Store{s, other} {
		ackCommit(t, begin(t, st), "a.md", "1", "a1")
	}
	sp := Splitting{256, 20}
	if err := s.ChangeSplitting(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Splitting(ctx); !ok || err != nil || got != sp {
		t.Errorf("Splitting = %v, %v, %v; want %v", got, ok, err, sp)
	}
	if d, _, err := s.Doc(ctx, "a.md"); err != nil || !slices.Equal(d.NodeIDs, []string{"a1"}) || d.Size != LostSize {
		t.Errorf("record: %+v, %v; want node a1, size LostSize", d, err)
	}
	if d, _, err := other.Doc(ctx, "a.md"); err != nil || d.Size == LostSize {
		t.Errorf("another scope's record changed: %+v, %v", d, err)
	}
	if _, ok, _ := other.Splitting(ctx); ok {
		t.Error("another scope got the settings")
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := begin(t, s).Commit(ctx, "a", Stamp{Hash: "h"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s2 := open(t, path, "x")
	if d, ok, _ := s2.Doc(ctx, "a"); !ok || d.Hash != "h" {
		t.Errorf("after reopen: %+v %v", d, ok)
	}
}

func TestJournal(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	if err := s.SaveVectors(ctx, "hash/8", map[string][]float32{"a": {0.5, -1}, "b": {2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveVectors(ctx, "openai/8", map[string][]float32{"a": {9}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadVectors(ctx, "hash/8", []string{"a", "b", "c"})
	if err != nil || len(got) != 2 || !slices.Equal(got["a"], []float32{0.5, -1}) {
		t.Fatalf("LoadVectors = %v, %v", got, err)
	}
	if err := s.ClearVectors(ctx, "openai/8"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LoadVectors(ctx, "hash/8", []string{"a"}); len(got) != 0 {
		t.Errorf("ClearVectors kept another model's vectors: %v", got)
	}
	if got, _ := s.LoadVectors(ctx, "openai/8", []string{"a"}); len(got) != 1 {
		t.Errorf("ClearVectors dropped the kept model's vectors: %v", got)
	}
}

func TestOlderSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path, "x")
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, path, "x")
	if err == nil || !strings.Contains(err.Error(), "another version of Sluice") || !strings.Contains(err.Error(), "state.path") {
		t.Fatalf("Open of an unversioned file with tables = %v, want an error saying what to do", err)
	}
}

// TestUncommitted: documents with pending ids of a run that died are
// Uncommitted without a record and Unsettled with one, in their scope only.
func TestUncommitted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, other := open(t, path, "x"), open(t, path, "y")
	first := begin(t, s)
	ackCommit(t, first, "done.md", "1", "a")
	dead := begin(t, s)
	for _, doc := range []string{"done.md", "new.md", "b.md"} {
		if err := dead.Intend(ctx, nodes(doc, "x", "y")); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := s.Uncommitted(ctx); err != nil || !slices.Equal(ids, []string{"b.md", "new.md"}) {
		t.Errorf("Uncommitted = %v, %v; want [b.md new.md]", ids, err)
	}
	if ids, err := other.Uncommitted(ctx); err != nil || len(ids) != 0 {
		t.Errorf("scope y sees %v, %v", ids, err)
	}
	// The recorded one is Unsettled: its record no longer says all the
	// store holds of it.
	ackCommit(t, first, "settled.md", "1", "s")
	if ids, err := s.Unsettled(ctx); err != nil || !slices.Equal(ids, []string{"done.md"}) {
		t.Errorf("Unsettled = %v, %v; want [done.md]", ids, err)
	}
	if ids, err := other.Unsettled(ctx); err != nil || len(ids) != 0 {
		t.Errorf("scope y sees %v, %v unsettled", ids, err)
	}
}

// TestDrop: Drop removes every record of its scope, and none of another
// scope of the same file.
// fill writes a record of every kind into s's scope: a committed document,
// a pending one, a dead letter, a journalled vector and the embedder.
func fill(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	run := begin(t, s)
	ackCommit(t, run, "a.md", "h", "n1")
	if err := run.Intend(ctx, nodes("b.md", "n2")); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.Fail(ctx, "c.md", "boom", time.Unix(1, 0)),
		s.SaveVectors(ctx, "hash/8", map[string][]float32{"k": {1}}),
		s.SetEmbedder(ctx, Embedder{Provider: "hash", Dimensions: 8}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// filled is what fill left in s's scope: documents (committed and pending),
// pending documents, dead letters, journalled vectors, and whether an
// embedder is recorded.
func filled(t *testing.T, s *Store) ([]int, bool) {
	t.Helper()
	ctx := context.Background()
	ids, _ := s.DocIDs(ctx)
	pending, _ := s.Uncommitted(ctx)
	failures, _ := s.Failures(ctx)
	vectors, _ := s.LoadVectors(ctx, "hash/8", []string{"k"})
	// Another embedder is refused only while one is recorded.
	embedder := s.CheckEmbedder(ctx, Embedder{Provider: "openai", Dimensions: 4}) != nil
	return []int{len(ids), len(pending), len(failures), len(vectors)}, embedder
}

func TestDrop(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	dropped, kept := open(t, path, "local:a"), open(t, path, "local:b")
	fill(t, dropped)
	fill(t, kept)
	if err := dropped.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Store
		want []int // docs (committed and pending), pending, failures, vectors
	}{{dropped, []int{0, 0, 0, 0}}, {kept, []int{2, 1, 1, 1}}} {
		got, embedderKept := filled(t, c.s)
		if !slices.Equal(got, c.want) || embedderKept != (c.s == kept) {
			t.Errorf("scope %s after Drop: docs, pending, failures, vectors %v, embedder kept %v; want %v", c.s.Scope(), got, embedderKept, c.want)
		}
	}
}

// TestAdoptSpellings: a writer of a search service's index takes over the
// records that a manifest written before ServiceScope lower-cased the
// scheme and host keeps under another spelling of the address, unless its
// own scope has records already; other scopes are never merged.
func TestAdoptSpellings(t *testing.T) {
	const (
		old  = "cloudsearch:https://MySvc.Search.Windows.NET/indexes/docs"
		same = "cloudsearch:https://mysvc.search.windows.net/indexes/docs"
	)
	all, none := []int{2, 1, 1, 1}, []int{0, 0, 0, 0}
	tests := []struct {
		name             string
		other            string // a scope filled before the writer opens
		scope            string // the writer's
		own              bool   // the writer's scope is filled too, first
		wantOld, wantNew []int
	}{
		{"old spelling adopted", old, same, false, none, all},
		{"own records: nothing moved", old, same, true, all, all},
		{"another index: nothing moved", old, "cloudsearch:https://mysvc.search.windows.net/indexes/other", false, all, none},
		{"local stores are not service scopes", "local:/Data/index.db", "local:/data/index.db", false, all, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "state.db")
			before := []string{tt.other}
			if tt.own {
				// First: a Store adopts the records of other spellings
				// when it first writes.
				before = []string{tt.scope, tt.other}
			}
			for _, sc := range before {
				s := open(t, path, sc)
				fill(t, s)
				s.Close() // its lock is the writer's too
			}
			w, err := OpenForWriting(ctx, path, tt.scope)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if got, _ := filled(t, w); !slices.Equal(got, tt.wantNew) {
				t.Errorf("writer's scope: %v, want %v", got, tt.wantNew)
			}
			if got, _ := filled(t, open(t, path, tt.other)); !slices.Equal(got, tt.wantOld) {
				t.Errorf("scope %s: %v, want %v", tt.other, got, tt.wantOld)
			}
		})
	}
}

// TestHas: a document is known by a committed record, by pending node ids
// or by a dead letter, in its own scope only.
func TestHas(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, other := open(t, path, "x"), open(t, path, "y")
	run := begin(t, s)
	ackCommit(t, run, "committed.md", "h", "n1")
	if err := run.Intend(ctx, nodes("pending.md", "n2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, "failed.md", "boom", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		s    *Store
		id   string
		want bool
	}{
		{s, "committed.md", true},
		{s, "pending.md", true},
		{s, "failed.md", true},
		{s, "unknown.md", false},
		{other, "committed.md", false},
	} {
		if got, err := tt.s.Has(ctx, tt.id); err != nil || got != tt.want {
			t.Errorf("scope %s: Has(%s) = %v, %v; want %v", tt.s.Scope(), tt.id, got, err, tt.want)
		}
	}
}

// TestSplitting: the splitter settings are recorded per scope, replaced by
// the next record, and dropped with the scope.
func TestSplitting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, other := open(t, path, "a"), open(t, path, "b")
	if _, ok, err := s.Splitting(ctx); ok || err != nil {
		t.Fatalf("Splitting of a new manifest = %v, %v; want none", ok, err)
	}
	for _, sp := range []Splitting{{1024, 200}, {256, 0}} {
		if err := s.SetSplitting(ctx, sp); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Splitting(ctx); !ok || err != nil || got != sp {
			t.Errorf("Splitting = %v, %v, %v; want %v", got, ok, err, sp)
		}
	}
	if _, ok, _ := other.Splitting(ctx); ok {
		t.Error("another scope sees the record")
	}
	if err := s.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Splitting(ctx); ok {
		t.Error("Drop kept the splitter record")
	}
}

// TestDocIDsUnder checks that the ids below a folder are those of its
// documents, pending and failed ones included, and of nothing beside it
// whose name merely starts alike.
func TestDocIDsUnder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path, "local:a")
	other := open(t, path, "local:b")
	run := begin(t, s)
	for _, id := range []string{"docs/a.md", "docs/api/b.md", "docs.md", "docs-old/c.md", "docsx/d.md", "other/docs/e.md"} {
		ackCommit(t, run, id, "h", "n-"+id)
	}
	ackCommit(t, begin(t, other), "docs/other-scope.md", "h", "n")
	if err := run.Intend(ctx, nodes("docs/pending.md", "p1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, "docs/api/failed.md", "boom", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{"docs", []string{"docs/a.md", "docs/api/b.md", "docs/api/failed.md", "docs/pending.md"}},
		{"docs/api", []string{"docs/api/b.md", "docs/api/failed.md"}},
		{"docs/a.md", nil},
		{"nothing", nil},
	}
	for _, tt := range tests {
		got, err := s.DocIDsUnder(ctx, tt.dir)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("DocIDsUnder(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
		}
	}
}

// TestNodeKeys opens a schema 5 file written before doc_nodes had its key
// column, as an older Sluice of schema 5 leaves it: the column is added,
// the records are intact, a committed node is found by the key of its
// text, and an insert that names no key, as the older Sluice's do, still
// works and lends nothing.
func TestNodeKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	const keyLine = "\tkey     TEXT NOT NULL DEFAULT '',\n\tPRIMARY KEY (scope, doc, node_id)"
	if !strings.Contains(schema, keyLine) {
		t.Fatalf("schema has no key line of doc_nodes to leave out:\n%s", schema)
	}
	older := strings.Replace(schema, keyLine, "\tPRIMARY KEY (scope, doc, node_id)", 1)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, older+`
		INSERT INTO docs (scope, id, hash, size, mtime_ns, meta_hash) VALUES ('x', 'a.md', 'h', 3, 7, 'm');
		INSERT INTO doc_nodes VALUES ('x', 'a.md', 'n0');
		PRAGMA user_version = 5;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, "x")
	if d, ok, err := s.Doc(ctx, "a.md"); !ok || err != nil || !slices.Equal(d.NodeIDs, []string{"n0"}) {
		t.Errorf("Doc(a.md) after opening = %+v, %v, %v", d, ok, err)
	}
	run := begin(t, s)
	if err := run.Ack(ctx, nodes("b.md", "n1", "n2")); err != nil {
		t.Fatal(err)
	}
	if err := run.Commit(ctx, "b.md", Stamp{Hash: "h2"}, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO doc_nodes (scope, doc, node_id) VALUES ('x', 'c.md', 'n3')`); err != nil {
		t.Fatalf("an insert that names no key: %v", err)
	}
	got, err := s.NodesOfTexts(ctx, []string{"kn1", "kn0", "kn3", "kn2", ""})
	want := map[string]NodeRef{"kn1": {Doc: "b.md", ID: "n1"}, "kn2": {Doc: "b.md", ID: "n2"}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("NodesOfTexts = %v, %v; want %v (only the nodes committed with a key)", got, err, want)
	}
	// Withdrawn nodes are no longer committed, and lend nothing.
	if err := s.WithdrawDocs(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.NodesOfTexts(ctx, []string{"kn1"}); err != nil || len(got) != 0 {
		t.Errorf("NodesOfTexts after WithdrawDocs = %v, %v; want none", got, err)
	}
}
