package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/sluice-dev/sluice/internal/sqliteread"
	"github.com/sluice-dev/sluice/sink"
)

// schemaVersion is the version of the tables below, recorded in meta.
const schemaVersion = 1

// busyTimeoutMS is how long a connection waits for another process's lock.
const busyTimeoutMS = 10000

// pageSize is the page size of new database files; existing files keep
// theirs. A node's row is about 10 KiB: its embedding (6 KiB at 1536
// dimensions) and a chunk of text. With 4 KiB pages (SQLite's default) the
// row spills into a chain of two overflow pages; with 8 KiB pages into one,
// so a commit writes about half as many pages to the WAL (each page costs
// two write calls there and a read and a write when it is checkpointed),
// which made Add 10 to 20% cheaper and full vector scans about 10% faster.
// 16 KiB pages, which hold such a row whole, saved no more and made files
// 47% larger (a page holds one row), and any larger page makes each random
// insert into the id index rewrite more bytes.
const pageSize = 8192

// schema creates the tables. nodes.seq is an explicit INTEGER PRIMARY KEY
// (an alias of the rowid) so that VACUUM cannot renumber the rows the FTS
// index refers to. The embedding comes right after it so that the vector
// scan of a query reads no text. The FTS5 table is an external-content table over
// nodes.text, kept in step by triggers; an update that leaves the text alone
// does not touch it.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS nodes (
		seq        INTEGER PRIMARY KEY,
		embedding  BLOB NOT NULL,
		id         TEXT NOT NULL UNIQUE,
		doc_id     TEXT NOT NULL,
		text       TEXT NOT NULL,
		metadata   TEXT NOT NULL DEFAULT '{}',
		start_char INTEGER NOT NULL DEFAULT 0,
		end_char   INTEGER NOT NULL DEFAULT 0
	)`,
	`CREATE INDEX IF NOT EXISTS nodes_doc ON nodes (doc_id, start_char, id)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
		text, content='nodes', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
	)`,
	`CREATE TRIGGER IF NOT EXISTS nodes_ai AFTER INSERT ON nodes BEGIN
		INSERT INTO nodes_fts (rowid, text) VALUES (new.seq, new.text);
	END`,
	`CREATE TRIGGER IF NOT EXISTS nodes_ad AFTER DELETE ON nodes BEGIN
		INSERT INTO nodes_fts (nodes_fts, rowid, text) VALUES ('delete', old.seq, old.text);
	END`,
	`CREATE TRIGGER IF NOT EXISTS nodes_au AFTER UPDATE OF text ON nodes WHEN old.text IS NOT new.text BEGIN
		INSERT INTO nodes_fts (nodes_fts, rowid, text) VALUES ('delete', old.seq, old.text);
		INSERT INTO nodes_fts (rowid, text) VALUES (new.seq, new.text);
	END`,
	`INSERT INTO meta (key, value) VALUES ('schema_version', '` + strconv.Itoa(schemaVersion) + `')
		ON CONFLICT (key) DO NOTHING`,
}

// ftsSetting is an FTS5 configuration option of nodes_fts: it is kept in the
// index (the nodes_fts_config table), so every connection, and every other
// process, uses it.
type ftsSetting struct {
	name  string
	value int
}

// ftsSettings tune how FTS5 maintains its index; query results do not depend
// on them. Each commit that wrote text flushes the pending terms to a new
// index segment, and later commits merge segments a little at a time. By
// default (automerge 4) a level's segments are merged as soon as it holds
// 4, so every term is rewritten once per level of a 4-way tree: in a bulk
// load of 50 MB of text, merging took more than a quarter of Add's CPU.
// Merging 16 at a time halves the levels and cut that merge work by about
// two thirds. crisismerge (default 16) is the number of segments of a level
// that forces an immediate merge of the whole level within one commit; it
// must lie above automerge or it would preempt the gradual merges. A level
// thus holds up to 16 segments, and at most 32, instead of up to 4 to 16:
// BM25 queries over 17,000 nodes measured no slower (leaving all of their
// 170 segments unmerged made them about 20% slower).
var ftsSettings = []ftsSetting{
	{"automerge", 16},
	{"crisismerge", 32},
}

// applyFTSSettings sets the ftsSettings the index does not have yet; an
// index that has them all is not written.
func applyFTSSettings(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT k, v FROM nodes_fts_config`)
	if err != nil {
		return fmt.Errorf("read full-text settings: %w", err)
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return fmt.Errorf("read full-text settings: %w", err)
		}
		have[k] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read full-text settings: %w", err)
	}
	for _, st := range ftsSettings {
		if have[st.name] == strconv.Itoa(st.value) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO nodes_fts (nodes_fts, rank) VALUES (?, ?)`, st.name, st.value); err != nil {
			return fmt.Errorf("set full-text setting %s: %w", st.name, err)
		}
	}
	return nil
}

// Store is the embedded vector store. It implements sink.VectorStore and is
// safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string

	writeMu sync.Mutex   // serialises write transactions of this process
	stmts   stmtCache    // guarded by writeMu
	dims    atomic.Int64 // recorded vector dimensions, 0 until the first Add

	// readOnly marks a store opened by OpenReadOnly: its writes fail.
	readOnly bool
	// unlocked marks a store read with immutable=1: without SQLite's
	// locks (see OpenReadOnly).
	unlocked bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ sink.VectorStore = (*Store)(nil)

// Open opens the store at cfg.Path for reading and writing, creating the
// file, its parent directories and the schema when they are missing.
// Errors name the path; a file or folder this process may not write is a
// *FileError (ErrAccess), and a program that only reads can then use
// OpenReadOnly.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	path, err := absPath(cfg, "")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("local: open %s: create its directory: %w (check sink.local.path and permissions)", path, err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	sizePool(db)
	s := &Store{db: db, path: path}
	if err := s.init(ctx); err != nil {
		db.Close()
		if ferr := asFileError(path, "open", err); ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	return s, nil
}

// absPath validates cfg and returns the absolute path of its store; how
// ends the error's "local: open <path>" (" for reading", say).
func absPath(cfg Config, how string) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return "", fmt.Errorf("local: open %s%s: %w", cfg.Path, how, err)
	}
	return path, nil
}

// sizePool sizes db's pool for concurrent reads: a connection per
// processor and one more, at least four, all kept open between uses.
func sizePool(db *sql.DB) {
	n := max(4, runtime.GOMAXPROCS(0)+1)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}

// walSizeLimit is the size, in bytes, that the WAL file is cut back to when
// a checkpoint lets the next write start it afresh. A WAL that readers kept
// from being checkpointed while a writer went on (queries during a
// --full run grew it past 1 GB) would otherwise keep its largest size on
// disk for as long as a connection is open, a long watch included. In a
// bulk load it stays near SQLite's auto-checkpoint size (1000 pages, 8 MiB),
// below the limit.
const walSizeLimit = 64 << 20

// dsn builds the driver's data source name: a file: URI (so that any byte
// of the path is escaped) with the connection settings every pooled
// connection applies. _txlock=immediate makes write transactions take the
// write lock at BEGIN, so they wait under busy_timeout instead of failing
// with SQLITE_BUSY when they upgrade; read-only transactions still use a
// plain BEGIN. Pages are read with read calls, not a memory map: a map of
// the database file would count against the process's resident memory,
// which the pipeline keeps flat whatever the corpus size (a 1 GiB map made
// full scans faster, but a bulk load's RSS grew with the index).
//
// page_size only takes effect on a new, empty file, and only if it runs
// before anything writes the file's first page. The driver runs the
// _pragma settings sorted by name, so journal_mode(WAL), which writes that
// page, would run first: it is therefore not among them, and init switches
// the file to WAL instead. WAL mode is a property of the file, which every
// later connection (of any process) finds; synchronous is one of each
// connection, so it stays here.
func dsn(path string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	q.Add("_pragma", "page_size("+strconv.Itoa(pageSize)+")")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "journal_size_limit("+strconv.Itoa(walSizeLimit)+")")
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// init switches the file to WAL mode, creates the schema, applies
// ftsSettings and loads the recorded dimensions.
func (s *Store) init(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// journal_mode cannot change inside a transaction; on a file already in
	// WAL mode this is a no-op.
	if _, err := conn.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var hasMeta bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta')`).Scan(&hasMeta); err != nil {
		return err
	}
	if hasMeta {
		var version string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if v, _ := strconv.Atoi(version); v > schemaVersion {
			return fmt.Errorf("schema version %s is newer than this Sluice understands (%d); upgrade sluice", version, schemaVersion)
		}
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if err := applyFTSSettings(ctx, tx); err != nil {
		return err
	}
	dims, err := readDims(ctx, tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.dims.Store(int64(dims))
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readDims returns the recorded vector dimensions, 0 when none are recorded.
func readDims(ctx context.Context, q querier) (int, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dimensions'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read dimensions: %w", err)
	}
	d, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("meta.dimensions is %q, not a number", v)
	}
	return d, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Dimensions returns the length of the stored vectors: recorded by the first
// Add into an empty store, and 0 while the store is empty. Every later Add
// must match it; a store emptied by Delete or DeleteNodes forgets it, so it
// can be refilled with another embedding model.
func (s *Store) Dimensions() int { return int(s.dims.Load()) }

// CheckDimensions returns a *DimensionsError, wrapping a
// *sink.DimensionError, when the store holds vectors of another length than
// dims: Add would refuse every node. An empty store takes any length. It
// reads the dimensions from the file, which another process may have
// written since Open. It makes Store a pipeline.DimensionChecker, so that a
// run stops before it embeds anything.
func (s *Store) CheckDimensions(ctx context.Context, dims int) error {
	if s.closed.Load() {
		return ErrClosed
	}
	d, err := readDims(ctx, s.db)
	if err != nil {
		return s.wrap("read dimensions", err)
	}
	if d != 0 && d != dims {
		return s.dimsErr(d, &sink.DimensionError{Want: d, Got: dims})
	}
	return nil
}

// Empty reports whether the store holds no node. It makes Store a
// pipeline.EmptyReporter: a run into an empty store need not delete the
// earlier nodes of documents its manifest does not know.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	var found bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM nodes)`).Scan(&found); err != nil {
		return false, s.wrap("look for nodes", err)
	}
	return !found, nil
}

// ScanNodes calls fn with the id and reference document id of every
// stored node, at most 1000 at a time, in order of document id, until fn
// returns an error; fn must not keep the slice. Each page is its own read
// of the doc_id index, from where the previous one ended, so fn may use
// the store. It makes Store a pipeline.NodeScanner: a --full or --verify
// run lists the store's nodes once, to delete the documents whose files
// are gone even when the manifest does not know them, and the chunks of
// recorded documents that the manifest does not list.
func (s *Store) ScanNodes(ctx context.Context, fn func(nodes []sink.NodeRef) error) error {
	const op = "list the stored nodes"
	var (
		after    sink.NodeRef
		afterPos int64 = -1 << 62
	)
	page := make([]sink.NodeRef, 0, nodeIDsPage)
	for {
		if s.closed.Load() {
			return ErrClosed
		}
		page = page[:0]
		var pos int64
		err := func() error {
			rows, err := s.db.QueryContext(ctx, `SELECT doc_id, start_char, id FROM nodes
				WHERE (doc_id, start_char, id) > (?, ?, ?) ORDER BY doc_id, start_char, id LIMIT ?`,
				after.RefDocID, afterPos, after.ID, nodeIDsPage)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var n sink.NodeRef
				if err := rows.Scan(&n.RefDocID, &pos, &n.ID); err != nil {
					return err
				}
				page = append(page, n)
			}
			return rows.Err()
		}()
		if err != nil {
			return s.wrap(op, err)
		}
		if len(page) == 0 {
			return nil
		}
		last, full := page[len(page)-1], len(page) == nodeIDsPage
		if err := fn(page); err != nil || !full {
			return err
		}
		after, afterPos = last, pos
	}
}

// nodeIDsPage is how many node ids NodeIDs passes to its function at a
// time.
const nodeIDsPage = 1000

// NodeIDs calls fn with the ids of the nodes of reference document
// refDocID, at most 1000 at a time, read from the doc_id index; fn must not
// keep the slice. It makes Store a pipeline.NodeLister: a run that replaces
// a document's nodes the manifest may not know of records them first and
// deletes those it does not write again only after the new ones are
// stored.
func (s *Store) NodeIDs(ctx context.Context, refDocID string, fn func(ids []string) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	op := "list the nodes of document " + quote(refDocID)
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM nodes WHERE doc_id = ?`, refDocID)
	if err != nil {
		return s.wrap(op, err)
	}
	defer rows.Close()
	page := make([]string, 0, nodeIDsPage)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return s.wrap(op, err)
		}
		if page = append(page, id); len(page) == nodeIDsPage {
			if err := fn(page); err != nil {
				return err
			}
			page = page[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap(op, err)
	}
	if len(page) == 0 {
		return nil
	}
	return fn(page)
}

// Count returns the number of stored nodes.
func (s *Store) Count(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM nodes`).Scan(&n); err != nil {
		return 0, s.wrap("count nodes", err)
	}
	return n, nil
}

// Close closes the database. It waits for running calls to finish; calling
// it again returns the first call's result. A store opened for writing
// copies its -wal into the database file first: when a full disk keeps it
// from doing so, nothing is lost (the -wal keeps every write, and the next
// open copies it), and Close returns a *FileError of ErrFull that says so.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		// Wait for the running write; the writes waiting behind it then
		// find the store closed (lockWrite).
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		s.stmts.close()
		var errs []error
		if !s.readOnly {
			// Let SQLite refresh its query planner statistics; failure is
			// harmless.
			_, _ = s.db.Exec(`PRAGMA optimize`)
			// The last checkpoint, which closing would run too but
			// without a word if the disk is full.
			if err := checkpoint(context.Background(), s.db); fileFault(err) == ErrFull {
				errs = append(errs, &FileError{Path: s.path, Op: opCheckpoint, Err: err, Kind: ErrFull})
			}
		}
		if err := s.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("local: close %s: %w", s.path, err))
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// lockWrite takes writeMu, or fails with ErrClosed once Close has begun.
func (s *Store) lockWrite() error {
	s.writeMu.Lock()
	if s.closed.Load() {
		s.writeMu.Unlock()
		return ErrClosed
	}
	return nil
}

// writeTx runs fn in a write transaction under writeMu and commits it. It
// fails with ErrClosed once Close has begun, and with wrap's explanation of
// a read-only database when the store was opened by OpenReadOnly; wrap
// explains the errors of beginning and committing, and fn returns its own
// errors ready to return.
func (s *Store) writeTx(ctx context.Context, wrap func(error) error, fn func(*sql.Tx) error) error {
	if err := s.lockWrite(); err != nil {
		return err
	}
	if s.readOnly {
		s.writeMu.Unlock()
		return wrap(readOnlyError{})
	}
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return wrap(err)
	}
	return nil
}

// wrap names the operation and the database in err; an error of the
// database file itself becomes a *FileError that says what to do.
func (s *Store) wrap(op string, err error) error {
	if s.closed.Load() {
		return fmt.Errorf("local: %s: %w", op, ErrClosed)
	}
	if s.unlocked && fileFault(err) == ErrDamaged {
		err = &sqliteread.UnlockedError{Err: err}
	}
	if ferr := asFileError(s.path, op, err); ferr != nil {
		return ferr
	}
	return fmt.Errorf("local: %s in %s: %w", op, s.path, err)
}
