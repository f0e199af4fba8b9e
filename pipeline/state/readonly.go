package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/sluice-dev/sluice/internal/sqliteread"
)

// ErrReadOnly is the cause of the *FileError (ErrAccess) that every write
// to a manifest opened by OpenReadOnly returns.
var ErrReadOnly = errors.New("state: manifest opened for reading only")

// ErrSchema marks a state file whose tables a reader cannot use as they
// are: it has none, or they were written by another version of Sluice.
var ErrSchema = errors.New("state: state file schema not readable")

// OpenReadOnly opens the existing manifest at path for scope, for reading
// only: it creates no folder and no database, takes no lock, writes nothing
// to the database, and neither creates nor upgrades the schema (a process
// that may write the file and its folder creates the -shm and -wal files of
// a manifest at rest, as SQLite's readers do, and leaves them, empty, for
// the next writer). A file without the manifest's tables, or with those of
// another version of Sluice, is an error (ErrSchema) naming the file,
// state.path and the remedy. Every write (Begin included) returns a
// *FileError (ErrAccess) wrapping ErrReadOnly.
//
// It reads the file as package internal/sqliteread decides: with SQLite's
// locks, or, when this process may not write the folder (or the file, and no
// writer keeps a -shm file) and no writer has content in a -wal file, as
// immutable, without locks, which is safe only while no writer changes the
// file (a read that overlaps a checkpoint may fail as if the file were
// damaged, and the error then says to run the command again first).
func OpenReadOnly(ctx context.Context, path, scope string) (*Store, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("state: opening %s (state.path) for reading: %w; set state.path to the manifest's file", abs, err)
	}
	return sqliteread.Open(abs, func(unlocked bool) (*Store, error) {
		return openReaderMode(ctx, abs, scope, unlocked)
	}, func(err error) bool { return errors.Is(err, ErrAccess) })
}

// openReaderMode opens the manifest at the absolute path read-only
// (immutable when unlocked) and checks its schema.
func openReaderMode(ctx context.Context, path, scope string, unlocked bool) (*Store, error) {
	db, err := sql.Open("sqlite", sqliteread.DSN(path, unlocked, "busy_timeout(10000)", "cache_size(-1024)"))
	if err != nil {
		return nil, fmt.Errorf("state: opening %s for reading: %w", path, err)
	}
	db.SetMaxOpenConns(2)
	s := &Store{db: db, path: path, scope: scope, readOnly: true, unlocked: unlocked}
	if err := s.checkSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// checkSchema checks that the file holds the manifest's tables at the
// current schema version, the one reader Store can read as it is.
func (s *Store) checkSchema(ctx context.Context) error {
	const hint = "is it a Sluice state file? check state.path"
	var version, tables int
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'docs')`).Scan(&version, &tables)
	if err != nil {
		return s.fileError("reading", err, hint)
	}
	switch {
	case version == schemaVersion:
		return nil
	case version == 0 && tables == 0:
		return fmt.Errorf("%w: %s (state.path) has no manifest tables: set state.path to the manifest's file, "+
			"or let a user who may write it create it (`sluice run`)", ErrSchema, s.path)
	case migrations[version] != "":
		return fmt.Errorf("%w: %s (state.path) was written by an older Sluice (schema %d, want %d): "+
			"let a user who may write it upgrade it (any `sluice run` does), then read it again", ErrSchema, s.path, version, schemaVersion)
	case version < schemaVersion: // 0 with tables: written before schema versions were recorded
		return fmt.Errorf("%w: %s (state.path) was written by an older Sluice (schema 1, want %d), which this one cannot upgrade: "+
			"let a user who may write it delete it and run with --full, or set state.path to a new file", ErrSchema, s.path, schemaVersion)
	}
	return fmt.Errorf("%w: %s (state.path) was written by a newer Sluice (schema %d, want %d): upgrade sluice",
		ErrSchema, s.path, version, schemaVersion)
}
