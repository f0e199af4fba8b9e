package cloudsearch

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

func TestUpdateMetadataKeepsVectors(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := makeNodes("a.md", 3)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	before := srv.Documents("docs")
	upd := nodes[1]
	upd.Embedding = nil
	upd.Metadata = map[string]any{"author": "Grace", "file": "a.md"} // year and tags removed
	upd.StartChar, upd.EndChar = 100, 109
	missing := makeNodes("absent.md", 1)[0]
	missing.Embedding = nil
	err := s.UpdateMetadata(ctx, []sink.Node{upd, missing})
	var werr *sink.WriteError
	if !errors.As(err, &werr) || len(werr.Failed) != 1 || werr.Failed[missing.ID] == nil {
		t.Fatalf("UpdateMetadata = %v, want a WriteError for the absent node only", err)
	}
	got, err := s.GetNodes(ctx, []string{upd.ID}, nil, 0)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if got[0].Metadata["author"] != "Grace" || got[0].Metadata["year"] != nil || got[0].StartChar != 100 {
		t.Errorf("after update: %+v", got[0])
	}
	after := srv.Documents("docs")
	for i := range after {
		if !reflect.DeepEqual(after[i]["embedding"], before[i]["embedding"]) {
			t.Errorf("document %v lost or changed its vector", after[i]["id"])
		}
	}
	// Filterable fields follow the metadata: the removed year is cleared.
	res, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "author", Value: "Grace", Operator: sink.EQ}}}, 0)
	if err != nil || len(res) != 1 {
		t.Errorf("filter on the updated field: %v %v", res, err)
	}
	assertNoClientErrors(t, srv)
}

// TestAddClearsRemovedFilterableFields writes a node again without some of
// its metadata, as `run --full` and a run after a lost manifest do with
// mergeOrUpload: filters must stop matching the values it no longer has.
func TestAddClearsRemovedFilterableFields(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	nodes := makeNodes("a.md", 1)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	again := nodes[0]
	again.Metadata = map[string]any{"file": "a.md"} // author, year and tags removed
	if _, err := s.Add(ctx, []sink.Node{again}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []sink.MetadataFilter{
		{Key: "author", Value: "Ada", Operator: sink.EQ},
		{Key: "year", Value: 2000, Operator: sink.EQ},
		{Key: "tags", Value: "water", Operator: sink.EQ},
	} {
		got, err := s.GetNodes(ctx, nil, &sink.MetadataFilters{Filters: []sink.MetadataFilter{f}}, 0)
		if err != nil || len(got) != 0 {
			t.Errorf("filter %s == %v after the key was removed: %d nodes (%v), want none", f.Key, f.Value, len(got), err)
		}
	}
	assertNoClientErrors(t, srv)
}
