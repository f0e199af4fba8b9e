package cloudsearch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestCustomFieldKeys runs the store end to end with every field key,
// algorithm, compression, analyzer and hidden field changed, against the
// strict server.
func TestCustomFieldKeys(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) {
		c.IDFieldKey = "key"
		c.ChunkFieldKey = "text"
		c.EmbeddingFieldKey = "vec"
		c.MetadataStringFieldKey = "meta"
		c.DocIDFieldKey = "ref"
		c.VectorAlgorithmType = "Hnsw"
		c.CompressionType = "BinaryQuantization"
		c.LanguageAnalyzer = "en.microsoft"
		c.SemanticConfiguration = "sem"
		c.HiddenFieldKeys = []string{"author_f"}
		c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author", Field: "author_f"}, {Key: "year", Field: "year_f", Type: "INT32"}}
	})
	ctx := context.Background()
	raw, ok := srv.Index("docs")
	if !ok {
		t.Fatal("index not created")
	}
	var def IndexDefinition
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	wantFields := map[string]bool{"key": true, "text": true, "vec": true, "meta": true, "ref": true, "author_f": true, "year_f": true}
	for _, f := range def.Fields {
		delete(wantFields, f.Name)
		switch f.Name {
		case "author_f":
			if f.Retrievable == nil || *f.Retrievable {
				t.Errorf("hidden field author_f is retrievable")
			}
		case "text":
			if f.Analyzer != "en.microsoft" {
				t.Errorf("chunk analyzer = %q", f.Analyzer)
			}
		case "vec":
			if f.VectorSearchProfile != hnswProfileName {
				t.Errorf("vector profile = %q, want %s", f.VectorSearchProfile, hnswProfileName)
			}
		}
	}
	if len(wantFields) != 0 {
		t.Errorf("index lacks fields %v", wantFields)
	}
	nodes := makeNodes("x.md", 4)
	if _, err := s.Add(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	for _, d := range srv.Documents("docs") {
		if d["ref"] != "x.md" || d["author_f"] != "Ada" {
			t.Errorf("stored document %v", d)
		}
	}
	res, err := s.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, Embedding: nodes[3].Embedding, QueryStr: "rivers", TopK: 4,
		Filters: &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", "Ada"), in("year", []int{2000, 2001})}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Errorf("%d results, want the 3 nodes of years 2000 and 2001", len(res))
	}
	got, err := s.GetNodes(ctx, []string{nodes[0].ID}, nil, 0)
	if err != nil || len(got) != 1 || got[0].Text != nodes[0].Text || got[0].RefDocID != "x.md" {
		t.Fatalf("GetNodes = %+v, %v", got, err)
	}
	if err := s.Delete(ctx, "x.md"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Errorf("Count after Delete = %d, %v", n, err)
	}
	assertNoClientErrors(t, srv)
}

func TestUploadBatchSize(t *testing.T) {
	tests := []struct{ batch, nodes, wantRequests int }{{3, 7, 3}, {1000, 7, 1}, {1, 4, 4}}
	for _, tt := range tests {
		s, srv := startStore(t, searchtest.Options{SpecDir: noSpec}, func(c *Config) { c.UploadBatchSize = tt.batch })
		if _, err := s.Add(context.Background(), makeNodes("a.md", tt.nodes)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range srv.Requests() {
			if strings.HasSuffix(r.Path, "/docs/index") {
				n++
			}
		}
		if n != tt.wantRequests {
			t.Errorf("batch %d, %d nodes: %d upload requests, want %d", tt.batch, tt.nodes, n, tt.wantRequests)
		}
	}
}

func TestAddDuplicateAndInvalidIDs(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	nodes := makeNodes("a.md", 3)
	dup := nodes[0]
	dup.Text = "replaced"
	bad := nodes[1]
	bad.ID = "_starts-with-underscore"
	ids, err := s.Add(context.Background(), []sink.Node{nodes[0], nodes[2], dup, bad})
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed[bad.ID] == nil {
		t.Fatalf("err = %v, want the invalid id reported", err)
	}
	if len(ids) != 2 || ids[0] != nodes[0].ID || ids[1] != nodes[2].ID {
		t.Errorf("ids = %v", ids)
	}
	got, _ := s.GetNodes(context.Background(), []string{nodes[0].ID}, nil, 0)
	if len(got) != 1 || got[0].Text != "replaced" {
		t.Errorf("duplicate id: stored %+v, want the last occurrence", got)
	}
	assertStored(t, srv, []sink.Node{nodes[0], nodes[2]})
}
