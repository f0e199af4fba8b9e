package cloudsearch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// Example writes two chunks of a document and one of another to an index
// created on the fly, queries them with a metadata filter, and deletes
// the documents: one with Delete, then many at once with DeleteDocs. A local
// test server stands in for the service; against Azure, set
// CLOUD_AI_SEARCH_ENDPOINT and CLOUD_AI_SEARCH_KEY instead.
func Example() {
	srv := httptest.NewServer(searchtest.NewServer(searchtest.Options{Key: "example-key"}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	cfg := cloudsearch.DefaultConfig()
	cfg.Endpoint = srv.URL
	cfg.IndexName = "handbook"
	cfg.IndexManagement = cloudsearch.CreateIfNotExists
	cfg.EmbeddingDimensionality = 3
	cfg.FilterableMetadataFieldKeys = cloudsearch.FilterableFields{{Key: "author"}}

	ctx := context.Background()
	getenv := func(name string) string {
		if name == cloudsearch.EnvKey {
			return "example-key"
		}
		return ""
	}
	store, err := cloudsearch.New(ctx, cfg, cloudsearch.WithGetenv(getenv), cloudsearch.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	ref := "guide/O'Brien.md"
	nodes := []sink.Node{
		{ID: sink.NodeID(ref, "Rivers flow.", 0), RefDocID: ref, Text: "Rivers flow.", Embedding: []float32{1, 0, 0}, Metadata: map[string]any{"author": "O'Brien"}},
		{ID: sink.NodeID(ref, "Ice melts.", 0), RefDocID: ref, Text: "Ice melts.", Embedding: []float32{0, 1, 0}, Metadata: map[string]any{"author": "O'Brien"}},
		{ID: sink.NodeID("guide/lakes, ponds.md", "Lakes freeze.", 0), RefDocID: "guide/lakes, ponds.md", Text: "Lakes freeze.", Embedding: []float32{1, 0, 0}, Metadata: map[string]any{"author": "Ada"}},
	}
	if _, err := store.Add(ctx, nodes); err != nil {
		fmt.Println(err)
		return
	}
	res, err := store.Query(ctx, sink.Query{
		Embedding: []float32{0.9, 0.1, 0},
		TopK:      1,
		Filters:   &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "author", Value: "O'Brien", Operator: sink.EQ}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res[0].Text, res[0].RefDocID)

	if err := store.Delete(ctx, ref); err != nil {
		fmt.Println(err)
		return
	}
	n, _ := store.Count(ctx)
	fmt.Println("left:", n)

	// Many documents at once; ids without nodes are ignored.
	if err := store.DeleteDocs(ctx, []string{"guide/lakes, ponds.md", ref, "guide/gone.md"}); err != nil {
		fmt.Println(err)
		return
	}
	n, _ = store.Count(ctx)
	fmt.Println("left:", n)
	// Output:
	// Rivers flow. guide/O'Brien.md
	// left: 1
	// left: 0
}

// ExampleODataFilter shows how metadata filters become OData.
func ExampleODataFilter() {
	fields := cloudsearch.FilterableFields{
		{Key: "author"},
		{Key: "year", Type: cloudsearch.Int32},
		{Key: "tags", Type: cloudsearch.StringCollection},
	}
	f := &sink.MetadataFilters{Filters: []sink.MetadataFilter{
		{Key: "author", Value: "O'Brien", Operator: sink.EQ},
		{Key: "year", Value: []int{2023, 2024}, Operator: sink.IN},
		{Key: "tags", Value: []string{"go", "search"}, Operator: sink.IN},
	}}
	expr, err := cloudsearch.ODataFilter(f, fields)
	fmt.Println(expr, err)
	// Output:
	// (author eq 'O''Brien') and (year eq 2023 or year eq 2024) and (tags/any(t: search.in(t, 'go,search', ','))) <nil>
}

// ExampleStore_PageNodes lists the nodes of an index that match a filter a
// page at a time, each page handled before the next is read, so that the
// caller never holds them all. A local test server stands in for the
// service.
func ExampleStore_PageNodes() {
	srv := httptest.NewServer(searchtest.NewServer(searchtest.Options{Key: "example-key"}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	cfg := cloudsearch.DefaultConfig()
	cfg.Endpoint = srv.URL
	cfg.IndexName = "handbook"
	cfg.IndexManagement = cloudsearch.CreateIfNotExists
	cfg.EmbeddingDimensionality = 3
	cfg.FilterableMetadataFieldKeys = cloudsearch.FilterableFields{{Key: "author"}}

	ctx := context.Background()
	getenv := func(name string) string {
		if name == cloudsearch.EnvKey {
			return "example-key"
		}
		return ""
	}
	store, err := cloudsearch.New(ctx, cfg, cloudsearch.WithGetenv(getenv), cloudsearch.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	var nodes []sink.Node
	for i := range 2600 {
		author, text := "Ada", fmt.Sprintf("Note %d.", i)
		if i%5 == 0 {
			author = "Grace"
		}
		nodes = append(nodes, sink.Node{ID: sink.NodeID("notes.md", text, 0), RefDocID: "notes.md", Text: text,
			Embedding: []float32{1, 0, 0}, Metadata: map[string]any{"author": author}})
	}
	if _, err := store.Add(ctx, nodes); err != nil {
		fmt.Println(err)
		return
	}
	ada := &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "author", Value: "Ada", Operator: sink.EQ}}}
	err = store.PageNodes(ctx, ada, 0, func(page []sink.Node) error {
		fmt.Println("a page of", len(page), "nodes")
		return nil
	})
	fmt.Println(err)
	// Output:
	// a page of 1000 nodes
	// a page of 1000 nodes
	// a page of 80 nodes
	// <nil>
}

// ExampleStore_NodeVectors reads back the text and vector of a stored node,
// as a run does to write a copied chunk without embedding it again: the
// index the store creates returns its vector field.
func ExampleStore_NodeVectors() {
	srv := httptest.NewServer(searchtest.NewServer(searchtest.Options{Key: "example-key"}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	cfg := cloudsearch.DefaultConfig()
	cfg.Endpoint = srv.URL
	cfg.IndexName = "handbook"
	cfg.IndexManagement = cloudsearch.CreateIfNotExists
	cfg.EmbeddingDimensionality = 3

	ctx := context.Background()
	getenv := func(name string) string {
		if name == cloudsearch.EnvKey {
			return "example-key"
		}
		return ""
	}
	store, err := cloudsearch.New(ctx, cfg, cloudsearch.WithGetenv(getenv), cloudsearch.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	text := "Pelicans dive for fish."
	id := sink.NodeID("birds.md", text, 0)
	node := sink.Node{ID: id, RefDocID: "birds.md", Text: text, Embedding: []float32{0.25, 0.5, 1}}
	if _, err := store.Add(ctx, []sink.Node{node}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lends vectors:", store.LendsVectors())
	got, err := store.NodeVectors(ctx, []string{id, "absent"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range got {
		fmt.Printf("%q %v\n", n.Text, n.Embedding)
	}
	// Output:
	// lends vectors: true
	// "Pelicans dive for fish." [0.25 0.5 1]
}
