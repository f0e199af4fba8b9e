package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/internal/sqliteread"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

// openStore opens the configured vector store to write it; with --debug,
// the Cloud AI Search store logs each request. An index refused on opening
// for its dimensions (indexManagement ValidateIndex or CreateIfNotExists)
// is a configuration error (exit 2), as every dimension mismatch is.
func (a *app) openStore(ctx context.Context, cfg Config) (sink.VectorStore, error) {
	if cfg.Sink.Type == sinkCloudSearch {
		s, err := cloudsearch.New(ctx, cfg.Sink.CloudSearch, cloudsearch.WithLogger(a.log))
		if err != nil {
			if errors.Is(err, sink.ErrDimensionMismatch) {
				err = &ConfigError{Err: err}
			}
			return nil, err
		}
		return s, nil
	}
	return local.Open(ctx, cfg.Sink.Local)
}

// openStoreToRead opens the configured vector store to read it, as
// openStore does, except that a local store that this process may read but
// not write (its file's or its folder's permissions, a read-only file
// system), or whose disk is full, is opened for reading only
// (local.OpenReadOnly).
func (a *app) openStoreToRead(ctx context.Context, cfg Config) (sink.VectorStore, error) {
	if cfg.Sink.Type == sinkCloudSearch {
		return a.openStore(ctx, cfg)
	}
	s, err := openLocalToRead(ctx, cfg)
	if err != nil {
		return nil, err // not a nil *local.Store in a non-nil interface
	}
	return s, nil
}

// openLocalToRead opens cfg's local store for reading and writing or, when
// this process may not write it, for reading only; when it may not read it
// either, the error is the one of opening it for writing. A store file this
// process may not write is not opened for writing at all: that would fail,
// but only after SQLite had created the -shm and -wal files of a store at
// rest, which this process could not remove and a writer running as
// another user could not write (see internal/sqliteread).
func openLocalToRead(ctx context.Context, cfg Config) (*local.Store, error) {
	return openToRead(cfg.Sink.Local.Path,
		func() (*local.Store, error) { return openLocal(ctx, cfg.Sink.Local) },
		func() (*local.Store, error) { return local.OpenReadOnly(ctx, cfg.Sink.Local) },
		func(err error) bool { return errors.Is(err, local.ErrAccess) },
		func(err error) bool { return errors.Is(err, local.ErrFull) })
}

// openLocal and openState open the local store and the manifest for
// writing, for the commands that only read them (openLocalToRead,
// readManifest); variables so that tests can make them fail.
var (
	openLocal = local.Open
	openState = state.Open
)

// openToRead opens the SQLite database at path with open, for reading and
// writing, or, when this process may not write it, with openReadOnly: at
// once when it may not write the file (sqliteread.ReadOnlyFile), else when
// open fails for want of access (isAccess) or for a full disk (isFull:
// opening for writing writes the schema, which a full disk refuses, while a
// reader writes nothing). When openReadOnly fails too, the error is open's,
// unless open failed for want of access and openReadOnly for another
// reason.
func openToRead[T any](path string, open, openReadOnly func() (T, error), isAccess, isFull func(error) bool) (T, error) {
	if sqliteread.ReadOnlyFile(path) {
		return openReadOnly()
	}
	s, err := open()
	switch {
	case err == nil:
	case isAccess(err):
		if ro, rerr := openReadOnly(); rerr == nil || !isAccess(rerr) {
			return ro, rerr
		}
	case isFull(err):
		if ro, rerr := openReadOnly(); rerr == nil {
			return ro, nil
		}
	}
	return s, err
}

// openEmbedder builds the configured embedder; with --debug, the HTTP
// providers log each request and retry.
func (a *app) openEmbedder(ctx context.Context, cfg Config) (embedder.Embedder, error) {
	return embedder.New(ctx, cfg.Embedder, embedder.WithLogger(a.log))
}

// withStore opens cfg's store with open (openStore to write it,
// openStoreToRead to read it), runs fn and closes the store. A local store
// that does not exist is an error: it is not created.
func (a *app) withStore(ctx context.Context, cfg Config, open func(context.Context, Config) (sink.VectorStore, error),
	fn func(store sink.VectorStore) error) error {
	if err := checkLocalStoreExists(cfg); err != nil {
		return err
	}
	store, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return fn(store)
}

// checkLocalStoreExists fails, saying how to build it, when the configured
// sink is a local store whose file does not exist: the commands that only
// read the store do not create it.
func checkLocalStoreExists(cfg Config) error {
	if cfg.Sink.Type == sinkCloudSearch {
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
// not create it, and for them a missing one is an empty one. A manifest
// that this process may read but not write (its file's or its folder's
// permissions, a read-only file system) is opened for reading only (see
// state.OpenReadOnly), at once when the file itself may not be written, as
// openLocalToRead opens the store; so is one on a full disk.
func readManifest(ctx context.Context, cfg Config) (*state.Store, error) {
	if manifestMissing(cfg) {
		return nil, nil
	}
	path, scope := cfg.State.Path, sinkScope(cfg)
	return openToRead(path,
		func() (*state.Store, error) { return openState(ctx, path, scope) },
		func() (*state.Store, error) { return state.OpenReadOnly(ctx, path, scope) },
		func(err error) bool { return errors.Is(err, state.ErrAccess) },
		func(err error) bool { return errors.Is(err, state.ErrFull) })
}

// manifestMissing reports whether cfg's state file does not exist.
func manifestMissing(cfg Config) bool {
	_, err := os.Stat(cfg.State.Path)
	return errors.Is(err, fs.ErrNotExist)
}
