package main

import (
	"context"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

// openStore opens the configured vector store; with --debug, the Cloud AI
// Search store logs each request.
func (a *app) openStore(ctx context.Context, cfg Config) (sink.VectorStore, error) {
	if cfg.Sink.Type == "cloudsearch" {
		return cloudsearch.New(ctx, cfg.Sink.CloudSearch, cloudsearch.WithLogger(a.log))
	}
	return local.Open(ctx, cfg.Sink.Local)
}

// openEmbedder builds the configured embedder; with --debug, the HTTP
// providers log each request and retry.
func (a *app) openEmbedder(ctx context.Context, cfg Config) (embedder.Embedder, error) {
	return embedder.New(ctx, cfg.Embedder, embedder.WithLogger(a.log))
}

// withStore loads the configuration, opens the store, runs fn and closes
// the store.
func (a *app) withStore(ctx context.Context, fn func(cfg Config, store sink.VectorStore) error) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	store, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return fn(cfg, store)
}
