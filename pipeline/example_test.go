package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/local"
	"github.com/sluice-dev/sluice/splitter"
)

// Example ingests a folder into the local store twice: the second run finds
// nothing changed.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Alpha\n\nSluice splits documents into chunks."), 0o644)
	os.WriteFile(filepath.Join(docs, "b.txt"), []byte("Chunks are embedded in batches and stored."), 0o644)

	split, err := splitter.New(splitter.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	store, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "index.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	manifest, err := state.Open(ctx, filepath.Join(dir, "state.db"), "example")
	if err != nil {
		log.Fatal(err)
	}
	defer manifest.Close()

	src := reader.DefaultConfig() // include: ["**/*.md"]
	src.Dir = docs
	src.Include = append(src.Include, "**/*.txt") // plain text too
	opts := pipeline.Options{
		Reader:       src,
		Splitter:     split,
		Embedder:     embedder.NewHash(256),
		Store:        store,
		State:        manifest,
		EmbedderInfo: state.Embedder{Provider: "hash", Dimensions: 256},
	}
	for range 2 {
		rep, err := pipeline.Run(ctx, opts)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("ingested %d, unchanged %d, chunks written %d\n", rep.FilesIngested, rep.FilesUnchanged, rep.ChunksWritten)
	}
	// Output:
	// ingested 2, unchanged 0, chunks written 2
	// ingested 0, unchanged 2, chunks written 0
}
