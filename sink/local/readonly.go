package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluice-dev/sluice/internal/sqliteread"
)

// ErrReadOnly marks a write to a store opened for reading only; the
// *FileError that such a write returns (ErrAccess) wraps it.
var ErrReadOnly = errors.New("local: store opened for reading only")

// ErrSchema marks a store whose tables a reader cannot use: the file has
// none (Sluice never set it up), or they are newer than this Sluice.
var ErrSchema = errors.New("local: store schema not readable")

// readOnlyError is the cause of the writes to a store opened by
// OpenReadOnly. Its result code, SQLITE_READONLY, makes it an access fault
// of the file (see fileFault).
type readOnlyError struct{}

func (readOnlyError) Error() string {
	return "the store was opened for reading only (OpenReadOnly)"
}

func (readOnlyError) Code() int     { return sqlite3.SQLITE_READONLY }
func (readOnlyError) Unwrap() error { return ErrReadOnly }

// OpenReadOnly opens the existing store at cfg.Path for reading only: it
// creates no folder and no database, writes nothing to the database, and
// neither creates nor upgrades the schema. (Like any SQLite reader, a
// process that may write the file and its folder creates the -shm and -wal
// files of a store at rest, and leaves them, empty, for the next writer to
// use and remove; one that may not write the file creates neither.) A file
// without Sluice's tables, or with tables newer than this Sluice, is an
// error (ErrSchema) naming the file, sink.local.path and the remedy. Add,
// Delete, DeleteNodes and UpdateMetadata return a *FileError (ErrAccess,
// ErrReadOnly).
//
// It reads the file as package internal/sqliteread decides: with SQLite's
// locks through the -wal and -shm files of a running writer, or, when there
// are none that this process may create and remove (it may not write the
// folder, or the file) and no writer has content in a -wal file, as
// immutable, without locks. Such a read is safe only while no writer changes
// the file: a long one that overlaps the checkpoint of a writer that started
// meanwhile may fail as if the file were damaged (the error says to run the
// command again first), or miss or mix the writer's latest changes. Where
// that matters, read while the writer (such as `sluice watch`) holds the
// store open.
func OpenReadOnly(ctx context.Context, cfg Config) (*Store, error) {
	path, err := absPath(cfg, " for reading")
	if err != nil {
		return nil, err
	}
	return openReader(ctx, path)
}

// openReader opens the existing store at path for reading only.
func openReader(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("local: open %s for reading: %w; set sink.local.path to the store's file, or build the store with `sluice run` or `sluice index create`", path, err)
	}
	return sqliteread.Open(path, func(unlocked bool) (*Store, error) {
		return openReaderMode(ctx, path, unlocked)
	}, func(err error) bool { return errors.Is(err, ErrAccess) })
}

// openReaderMode opens path read-only (immutable when unlocked) and checks
// its schema.
func openReaderMode(ctx context.Context, path string, unlocked bool) (*Store, error) {
	db, err := sql.Open("sqlite", sqliteread.DSN(path, unlocked, "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")"))
	if err != nil {
		return nil, fmt.Errorf("local: open %s for reading: %w", path, err)
	}
	sizePool(db)
	s := &Store{db: db, path: path, readOnly: true, unlocked: unlocked}
	if err := s.checkSchema(ctx); err != nil {
		db.Close()
		if errors.Is(err, ErrSchema) {
			return nil, err
		}
		if ferr := asFileError(path, "open", err); ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("local: open %s for reading: %w", path, err)
	}
	return s, nil
}

// checkSchema checks, in one read transaction, that the file holds
// Sluice's tables at a version this Sluice reads, and loads the recorded
// dimensions.
func (s *Store) checkSchema(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var hasMeta bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta')`).Scan(&hasMeta); err != nil {
		return err
	}
	var version string
	if hasMeta {
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	switch v, _ := strconv.Atoi(version); {
	case v < 1:
		return fmt.Errorf("%w: %s (sink.local.path) has no Sluice tables: set sink.local.path to the store's file, "+
			"or let a user who may write it build the store (`sluice index create` or `sluice run`)", ErrSchema, s.path)
	case v > schemaVersion:
		return fmt.Errorf("%w: %s (sink.local.path) has schema version %d, newer than this Sluice understands (%d): upgrade sluice",
			ErrSchema, s.path, v, schemaVersion)
	}
	dims, err := readDims(ctx, tx)
	if err != nil {
		return err
	}
	s.dims.Store(int64(dims))
	return nil
}

// ReadOnly reports whether the store was opened for reading only, by
// OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }
