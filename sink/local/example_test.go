package local_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "index.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	_, err = store.Add(ctx, []sink.Node{
		{ID: "n1", RefDocID: "guide.md", Text: "A sluice gate controls the flow of water.", Embedding: []float32{1, 0, 0},
			Metadata: map[string]any{"lang": "en", "tags": []string{"water", "gates"}}},
		{ID: "n2", RefDocID: "guide.md", Text: "Canals connect rivers and lakes.", Embedding: []float32{0.6, 0.8, 0},
			Metadata: map[string]any{"lang": "en"}},
		{ID: "n3", RefDocID: "recipe.md", Text: "Knead the dough for ten minutes.", Embedding: []float32{0, 0, 1},
			Metadata: map[string]any{"lang": "de"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	byVector, err := store.Query(ctx, sink.Query{Embedding: []float32{1, 0.1, 0}, TopK: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range byVector {
		fmt.Printf("vector: %s %.3f\n", n.ID, n.Score)
	}

	byText, err := store.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "sluice (gate)?", TopK: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range byText {
		fmt.Println("sparse:", n.ID)
	}

	tagged := &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "tags", Value: "water", Operator: sink.EQ}}}
	nodes, err := store.GetNodes(ctx, nil, tagged, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tagged water:", len(nodes), nodes[0].ID)

	_, err = store.Query(ctx, sink.Query{Mode: sink.SemanticHybrid, QueryStr: "gate", Embedding: []float32{1, 0, 0}})
	fmt.Println("semantic hybrid unsupported:", errors.Is(err, sink.ErrUnsupported))

	if err := store.Delete(ctx, "guide.md"); err != nil {
		log.Fatal(err)
	}
	n, err := store.Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("left after deleting guide.md:", n, "dimensions:", store.Dimensions())

	// Output:
	// vector: n1 0.995
	// vector: n2 0.677
	// sparse: n1
	// tagged water: 1 n1
	// semantic hybrid unsupported: true
	// left after deleting guide.md: 1 dimensions: 3
}

// A process that only reads, such as a query by a user who may not write
// the store's folder, opens it with OpenReadOnly: reads work, and writes
// fail with ErrReadOnly.
func ExampleOpenReadOnly() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := local.Config{Path: filepath.Join(dir, "index.db")}

	writer, err := local.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := writer.Add(ctx, []sink.Node{{ID: "n1", RefDocID: "guide.md", Text: "A sluice gate.", Embedding: []float32{1, 0}}}); err != nil {
		log.Fatal(err)
	}
	if err := writer.Close(); err != nil {
		log.Fatal(err)
	}

	reader, err := local.OpenReadOnly(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	n, err := reader.Count(ctx)
	fmt.Println("nodes:", n, err)
	err = reader.Delete(ctx, "guide.md")
	fmt.Println("delete refused:", errors.Is(err, local.ErrReadOnly))
	// Output:
	// nodes: 1 <nil>
	// delete refused: true
}
