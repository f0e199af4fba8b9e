package state

import (
	"context"
	"errors"
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

func TestCommitPendingForget(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s := open(t, path, "local:a")
	other := open(t, path, "local:b")

	if _, ok, err := s.Doc(ctx, "a.md"); ok || err != nil {
		t.Fatalf("Doc on empty store = %v, %v", ok, err)
	}
	if err := s.Intend(ctx, map[string][]string{"a.md": {"n2", "n1", "n3"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Ack(ctx, map[string][]string{"a.md": {"n2", "n1"}}); err != nil {
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
	d := Doc{ID: "a.md", Hash: "h", Size: 3, ModTime: mt, MetaHash: "m", NodeIDs: []string{"n2", "n1"}}
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"k1": {1, 2}, "k2": {3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, d, "m", []string{"k1"}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Doc(ctx, "a.md")
	if !ok || err != nil || got.Hash != "h" || !got.ModTime.Equal(mt) || !slices.Equal(got.NodeIDs, []string{"n1", "n2"}) {
		t.Errorf("Doc = %+v, %v, %v", got, ok, err)
	}
	if acked, intended, _ := s.Pending(ctx, "a.md"); len(acked)+len(intended) != 0 {
		t.Errorf("Commit left pending ids %v %v", acked, intended)
	}
	if v, _ := s.LoadVectors(ctx, "m", []string{"k1", "k2"}); len(v) != 1 || !slices.Equal(v["k2"], []float32{3}) {
		t.Errorf("after Commit released k1, the journal holds %v; want only k2", v)
	}
	if f, _ := s.Failures(ctx); len(f) != 0 {
		t.Errorf("Commit left the dead-letter entry %v", f)
	}
	if st, _ := s.Stamps(ctx); st["a.md"].Hash != "h" || len(st) != 1 {
		t.Errorf("Stamps = %v", st)
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
	if err := s.Commit(ctx, Doc{ID: "a", NodeIDs: []string{"n"}}, "", nil); err != nil {
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

func TestPersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, Doc{ID: "a", Hash: "h", NodeIDs: []string{"1"}}, "", nil); err != nil {
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
