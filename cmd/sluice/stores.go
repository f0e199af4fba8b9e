package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
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
	return a.withStoreOf(ctx, cfg, fn)
}

// withStoreOf opens cfg's store, runs fn and closes the store. A local
// store that does not exist is an error: it is not created.
func (a *app) withStoreOf(ctx context.Context, cfg Config, fn func(cfg Config, store sink.VectorStore) error) error {
	if err := checkLocalStoreExists(cfg); err != nil {
		return err
	}
	store, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return fn(cfg, store)
}

// checkLocalStoreExists fails, saying how to build it, when the configured
// sink is a local store whose file does not exist: the commands that only
// read the store do not create it.
func checkLocalStoreExists(cfg Config) error {
	if cfg.Sink.Type == "cloudsearch" {
		return nil
	}
	path := cfg.Sink.Local.Path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local store %s (sink.local.path) does not exist yet: run `sluice run` or `sluice index create`", path)
	}
	return nil
}

// readManifest opens the manifest of cfg's index to read it, or returns nil
// if its file does not exist: the commands that only read the manifest do
// not create it, and for them a missing one is an empty one.
func readManifest(ctx context.Context, cfg Config) (*state.Store, error) {
	if manifestMissing(cfg) {
		return nil, nil
	}
	return state.Open(ctx, cfg.State.Path, sinkScope(cfg))
}

// manifestMissing reports whether cfg's state file does not exist.
func manifestMissing(cfg Config) bool {
	_, err := os.Stat(cfg.State.Path)
	return errors.Is(err, fs.ErrNotExist)
}
