package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

// dimensionsError reports a store that already holds vectors of another
// length than embedder.dimensions: it would refuse every write, so an
// ingesting command stops before it embeds anything. It is a configuration
// error (exit 2).
type dimensionsError struct {
	Store  string // "local store PATH" or "index NAME"
	Have   int    // the length of the stored vectors
	Want   int    // embedder.dimensions
	Remedy string // what to do, for this kind of store
}

func (e *dimensionsError) Error() string {
	return fmt.Sprintf("%s holds %d-dimensional vectors but embedder.dimensions is %d; %s", e.Store, e.Have, e.Want, e.Remedy)
}

// Unwrap returns sink.ErrDimensionMismatch.
func (e *dimensionsError) Unwrap() error { return sink.ErrDimensionMismatch }

// checkDimensions compares the length of the vectors store already holds
// with embedder.dimensions: the one check behind run, watch and failed
// retry (before the pipeline starts), index validate and doctor. A
// mismatch is a configuration error (exit 2) whose remedy fits the store.
// An empty store, or a Cloud AI Search index whose definition cannot be
// read (missing, or a credential allowed to write documents only), passes:
// index management and the writes report those.
func (a *app) checkDimensions(ctx context.Context, cfg Config, store sink.VectorStore) error {
	want := cfg.Embedder.Dimensions
	var e *dimensionsError
	switch s := store.(type) {
	case *local.Store:
		e = &dimensionsError{Store: "local store " + s.Path(), Have: s.Dimensions(), Want: want,
			Remedy: fmt.Sprintf("set embedder.dimensions back to %d, or start a new index: set sink.local.path to a new file, or delete this one with `sluice index delete%s` and run again",
				s.Dimensions(), a.configFlag())}
	case *cloudsearch.Store:
		have, err := s.Dimensions(ctx)
		if err != nil {
			a.log.Debug("cannot read the index's dimensions before the run", "err", err)
			return nil
		}
		name := cfg.Sink.CloudSearch.IndexName
		e = &dimensionsError{Store: fmt.Sprintf("index %q", name), Have: have, Want: want,
			Remedy: fmt.Sprintf("set embedder.dimensions and sink.cloudsearch.embeddingDimensionality back to %d, or start a new index: set sink.cloudsearch.indexName to a new name, or delete this one with `sluice index delete%s`, then `sluice index create%s` and run again",
				have, a.configFlag(), a.configFlag())}
	default:
		return nil
	}
	if e.Have == 0 || e.Have == e.Want {
		return nil
	}
	return e
}

// configFlag returns the --config flag the command was given, to repeat
// it in a suggested command, or "".
func (a *app) configFlag() string {
	if a.configPath == "" {
		return ""
	}
	return " --config " + shellQuote(a.configPath)
}

// checkQueryEmbedder compares the embedder that built cfg's index, as its
// manifest records it, with the one that would embed a query: vectors of
// another model (of the same length; checkDimensions catches the others)
// are not comparable, and the query would return arbitrary nodes. It is a
// configuration error (exit 2). Without a manifest (another machine built
// the index, say) there is nothing to compare and the query goes on.
func (a *app) checkQueryEmbedder(ctx context.Context, cfg Config) error {
	_, err := compareManifestEmbedder(ctx, cfg)
	var changed *state.ModelChangedError
	if errors.As(err, &changed) {
		return &ConfigError{Err: fmt.Errorf("the index %s was built with %s, but the query would be embedded with %s, whose vectors cannot be compared with its: query with the embedder settings the index was built with, or re-embed the index with these (`sluice run --full%s`)",
			changed.Scope, changed.Built, changed.Want, a.configFlag())}
	}
	if err != nil {
		a.log.Debug("cannot read the manifest to compare embedders", "err", err)
	}
	return nil
}

// compareManifestEmbedder reads cfg's manifest, if there is one (found),
// and compares the embedder it says built the index with the configured
// one: a change of model is a *state.ModelChangedError.
func compareManifestEmbedder(ctx context.Context, cfg Config) (found bool, err error) {
	st, err := readManifest(ctx, cfg)
	if err != nil || st == nil {
		return false, err
	}
	defer st.Close()
	return true, st.CheckEmbedder(ctx, embedderInfo(cfg))
}
