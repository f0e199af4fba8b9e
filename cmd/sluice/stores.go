package main

import (
	"context"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

// openStore opens the configured vector store.
func openStore(ctx context.Context, cfg Config) (sink.VectorStore, error) {
	if cfg.Sink.Type == "cloudsearch" {
		return cloudsearch.New(ctx, cfg.Sink.CloudSearch)
	}
	return local.Open(ctx, cfg.Sink.Local)
}

// openEmbedder builds the configured embedder.
func openEmbedder(ctx context.Context, cfg Config) (embedder.Embedder, error) {
	return embedder.New(ctx, cfg.Embedder)
}
