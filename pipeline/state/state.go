// Package state is the durable manifest of incremental runs: for each
// document of a sink, the content hash, size and modification time it was
// ingested with, the ids of its nodes, and whether it failed. It also
// records which embedder built the index, so that a model change is caught
// before it mixes vectors of two models in one index.
//
// The manifest lives in an SQLite database (by default .sluice/state.db).
// Every change is one transaction, so a process killed at any moment leaves
// either the old or the new record, never half of one. Records are kept per
// scope — one scope per sink and index — so one state file can serve
// several indexes.
//
// # One writer per index
//
// Two processes writing one index through one manifest would corrupt it
// for good: each would take the other's recorded chunks for those of a dead
// run and delete them from the store, and the manifest would then call the
// damaged documents unchanged. So a Store writes only under its scope's
// write lock: an exclusive OS lock — flock(2) on unix, LockFileEx on
// Windows — on a lock file of the index, whichever state file reaches it: a
// local store's is beside its file (index.db.lock, symbolic links
// resolved); a search service's index has one in the user's cache folder
// (on Linux ~/.cache/sluice/locks/5d41402abc4b.lock) and one next to the
// state file, so that the writers sharing a state file exclude each other
// even when one of them has no cache folder. So two configurations whose
// state files differ still cannot write one index at once (for a search
// service: as long as they run as one user with a cache folder). That holds
// for the scopes LocalScope and ServiceScope build; any other scope is taken
// for a name private to its state file, and its lock is next to that file.
// The lock is taken without waiting, by OpenForWriting when it opens the
// manifest, by a Store from Open at its first write, or by LockIndex
// without a manifest, and held until Close. While another writer holds it,
// taking it fails with a *LockedError (errors.Is ErrLocked) that says which
// process holds it, as that process recorded itself in the lock file.
// The operating system releases the lock when its process exits, however it
// exits (kill -9 included), so a lock is never left stale; the lock file
// stays, and its content is only a hint. Readers take no lock: they work
// while a writer runs, and see each of its transactions whole. Writers of
// different indexes sharing a state file do not exclude each other. On a
// system with neither flock nor LockFileEx nothing is locked.
package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/sluice-dev/sluice/sink"
)

// ErrModelChanged marks an index built with another embedder than the
// configured one.
var ErrModelChanged = errors.New("state: embedder changed")

// Doc is the manifest record of one ingested document.
type Doc struct {
	ID string // document id (root-relative path)
	Stamp
	NodeIDs []string // ids of its nodes in the store, sorted
}

// Node is one chunk of a document as the manifest records it while a run
// writes it.
type Node struct {
	ID  string // node id in the sink
	Key string // text key its embedding is journalled under (see SaveVectors)
}

// Failure is a dead-letter record: a document that failed, why, and how
// many runs have tried it.
type Failure struct {
	ID       string    `json:"path"`
	Reason   string    `json:"error"`
	Attempts int       `json:"attempts"`
	LastTry  time.Time `json:"last_try"`
}

// Embedder identifies the embedder an index was built with.
type Embedder struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// Key identifies the embedder in the vector journal.
func (e Embedder) Key() string { return fmt.Sprintf("%s/%s/%d", e.Provider, e.Model, e.Dimensions) }

// String returns the Embedder as text.
func (e Embedder) String() string {
	s := e.Provider
	if e.Model != "" {
		s += " model " + e.Model
	}
	return fmt.Sprintf("%s with %d dimensions", s, e.Dimensions)
}

// ModelChangedError reports that the configured embedder differs from the
// one the index was built with.
type ModelChangedError struct {
	Scope       string
	Built, Want Embedder
}

// Error returns the message of the ModelChangedError. Its remedy depends on
// what changed: another model with the same dimensions is re-embedded into
// the same index by --full; other dimensions need a new index, because an
// index's vector length is fixed once it holds vectors (the local store's
// as much as a Cloud AI Search index's vector field).
func (e *ModelChangedError) Error() string {
	msg := fmt.Sprintf("state: the index %s was built with %s, but the configuration asks for %s; ", e.Scope, e.Built, e.Want)
	if e.Built.Dimensions != e.Want.Dimensions {
		return msg + fmt.Sprintf("an index holds vectors of one length, so --full alone cannot change its dimensions: "+
			"delete the index (`sluice index delete`, with this command's --config if it has one; it clears the index's records here too) and run again, or point the sink at a new index "+
			"(a new sink.local.path, or a new sink.cloudsearch.indexName with embeddingDimensionality %d) and run again; "+
			"or set embedder.dimensions back to %d", e.Want.Dimensions, e.Built.Dimensions)
	}
	return msg + "vectors of two models cannot be mixed in one index: run again with --full to re-embed everything into it, or point the sink at a new index"
}

// Unwrap returns ErrModelChanged.
func (e *ModelChangedError) Unwrap() error { return ErrModelChanged }

// Store is an open manifest bound to one scope. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	path  string // absolute, for messages
	scope string

	readOnly bool // opened by OpenReadOnly: never writes, never locks
	unlocked bool // read with immutable=1, without SQLite's locks

	mu      sync.Mutex // serialises writers; guards what follows
	lock    *writeLock // the scope's write lock once taken; held until Close
	lastRun int64      // the latest run tag Begin handed out
	closed  bool
}

// schema is the current layout. A document's committed node ids are rows of
// doc_nodes, and the ids a run is writing are rows of pending tagged with
// the run, so that no list of a document's chunks is ever held in memory
// or in one value: a single document may have hundreds of thousands.
const schema = `
CREATE TABLE IF NOT EXISTS docs (
	scope     TEXT NOT NULL,
	id        TEXT NOT NULL,
	hash      TEXT NOT NULL,
	size      INTEGER NOT NULL,
	mtime_ns  INTEGER NOT NULL,
	meta_hash TEXT NOT NULL,
	change_stamp TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (scope, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS doc_nodes (
	scope   TEXT NOT NULL,
	doc     TEXT NOT NULL,
	node_id TEXT NOT NULL,
	key     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (scope, doc, node_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending (
	scope   TEXT NOT NULL,
	id      TEXT NOT NULL,
	node_id TEXT NOT NULL,
	acked   INTEGER NOT NULL,
	key     TEXT NOT NULL DEFAULT '',
	run     INTEGER NOT NULL DEFAULT 0,
	found   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, id, node_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
	scope TEXT NOT NULL,
	model TEXT NOT NULL,
	key   TEXT NOT NULL,
	vec   BLOB NOT NULL,
	PRIMARY KEY (scope, model, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (
	scope    TEXT NOT NULL,
	id       TEXT NOT NULL,
	reason   TEXT NOT NULL,
	attempts INTEGER NOT NULL,
	last_ns  INTEGER NOT NULL,
	PRIMARY KEY (scope, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedders (
	scope TEXT PRIMARY KEY,
	info  TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS splitters (
	scope TEXT PRIMARY KEY,
	info  TEXT NOT NULL
) WITHOUT ROWID;
`

// migrate2 upgrades a schema 2 file, which kept a document's node ids as
// one JSON array in docs.node_ids and did not tag pending rows with a run.
// It runs after schema, which creates doc_nodes.
const migrate2 = `
INSERT OR IGNORE INTO doc_nodes (scope, doc, node_id)
	SELECT d.scope, d.id, j.value FROM docs AS d, json_each(d.node_ids) AS j;
ALTER TABLE docs DROP COLUMN node_ids;
ALTER TABLE pending ADD COLUMN key TEXT NOT NULL DEFAULT '';
ALTER TABLE pending ADD COLUMN run INTEGER NOT NULL DEFAULT 0;
`

// addFound adds the column that marks the ids Found recorded.
const addFound = `
ALTER TABLE pending ADD COLUMN found INTEGER NOT NULL DEFAULT 0;
`

// migrate3 upgrades a schema 3 file, which told the ids Found recorded by
// their run tag, 0, alone: a run writing such a node again replaced the
// tag, and a rollback then deleted a node the sink held before the run.
// Rows tagged 0 keep the meaning schema 3 gave them. (A schema 2 file has
// no found ids: its pending rows are a dead run's, which migrate2 tags 0.)
const migrate3 = addFound + `
UPDATE pending SET found = 1 WHERE run = 0;
`

// migrate4 upgrades a schema 4 file, whose records had no change stamp
// (reader.File.Change): the first run after it reads each file's content
// hash once, finds it unchanged and records the stamp (Touch).
const migrate4 = `
ALTER TABLE docs ADD COLUMN change_stamp TEXT NOT NULL DEFAULT '';
`

// nodeKeys gives each committed node the key of its text (textKey in the
// pipeline, pending.key), as runs with an embedder that is not local
// record it, so that a chunk whose text the index already holds under
// another node (a file copied or renamed) is written with that node's
// vector instead of being embedded again (NodesOfTexts). The column came
// within schema 5, whose files are compatible both ways: a file created
// before has it added when opened for writing (addNodeKeys), and a Sluice
// that predates it names its columns and leaves it empty, which only means
// that those nodes lend no vector.
const nodeKeys = `
ALTER TABLE doc_nodes ADD COLUMN key TEXT NOT NULL DEFAULT '';
`

// nodeKeysIndex finds committed nodes by text key; local embedders record
// no keys, which the partial index leaves out.
const nodeKeysIndex = `
CREATE INDEX IF NOT EXISTS doc_nodes_key ON doc_nodes (scope, key) WHERE key != '';
`

// schemaVersion is stored in the database's user_version.
const schemaVersion = 5

// Open opens (creating if needed) the manifest at path for scope. Errors of
// the database file name it and the state.path setting and say what to do:
// check its permissions, replace a damaged file, or free space on a full
// disk (see FileError).
//
// The Store takes the scope's write lock (see the package documentation)
// before its first write, Begin included, and holds it until Close; while
// another writer holds it, writes fail with a *LockedError and reads work.
// A command that is going to write uses OpenForWriting instead, so that it
// fails before doing any work.
func Open(ctx context.Context, path, scope string) (*Store, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("state: creating the folder of state.path %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("state: opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(2)
	s := &Store{db: db, path: abs, scope: scope}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// absPath returns the absolute path of the state file at path, the
// state.path setting, which must not be empty.
func absPath(path string) (string, error) {
	if path == "" {
		return "", errors.New("state: state.path is empty; set it to a file such as .sluice/state.db")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("state: state.path %s: %w", path, err)
	}
	return abs, nil
}

// OpenForWriting opens the manifest at path for scope like Open and takes
// the scope's write lock at once, without waiting: while another writer (a
// process, or another Store of this one) holds it, it fails with a
// *LockedError, which errors.Is reports as ErrLocked. The lock is held until
// Close, or until the process exits, however it exits.
func OpenForWriting(ctx context.Context, path, scope string) (*Store, error) {
	s, err := Open(ctx, path, scope)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	err = s.acquire(ctx)
	s.mu.Unlock()
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// acquire takes the scope's write lock unless the Store holds it already,
// then adopts the records of other spellings of the scope (adoptSpellings).
// The caller holds s.mu.
func (s *Store) acquire(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("state: %s is closed", s.path)
	}
	if s.readOnly {
		return &FileError{Path: s.path, Op: "writing", Err: ErrReadOnly, Kind: ErrAccess}
	}
	if s.lock != nil {
		return nil
	}
	l, err := lock(s.path, s.scope)
	if err != nil {
		return err
	}
	s.lock = l
	if err := s.adoptSpellings(ctx); err != nil {
		return s.fail(fmt.Errorf("adopting the records of %s written under another spelling: %w", s.scope, err))
	}
	return nil
}

// scopeTables are the tables whose rows belong to a scope.
var scopeTables = []string{"docs", "doc_nodes", "pending", "journal", "failures", "embedders", "splitters"}

// adoptSpellings moves to the Store's scope, a search service's index, the
// records kept under another spelling of it: an address whose scheme or
// host differs in letter case only, as manifests written before
// ServiceScope lower-cased them hold. Without this, a run would take every
// document for new and never delete the index's nodes of documents removed
// meanwhile. The other spelling is found by its documents, dead letters or
// embedder record; when the scope has records of its own, or two other
// spellings have some, nothing is moved. The caller holds the scope's
// write lock.
//
// It runs once per Store, when the lock is taken: the scope's own records
// are looked up first (an index seek each), so that a scope that has them,
// as on every run after the first, is not scanned.
func (s *Store) adoptSpellings(ctx context.Context) error {
	if !isServiceScope(s.scope) {
		return nil
	}
	var own bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM docs WHERE scope = ?1) OR EXISTS (SELECT 1 FROM failures WHERE scope = ?1)
		OR EXISTS (SELECT 1 FROM embedders WHERE scope = ?1)`, s.scope).Scan(&own); err != nil || own {
		return err
	}
	kind, _, _ := strings.Cut(s.scope, ":")
	var others []string
	for _, t := range []string{"docs", "failures", "embedders"} {
		// Index names are lower case: only scopes equal but for case can
		// be spellings of this one. The range keeps the scan to this kind.
		ids, err := s.ids(ctx, `SELECT DISTINCT scope FROM `+t+` WHERE scope > ? AND scope < ? AND lower(scope) = lower(?) AND scope <> ?`,
			kind+":", kind+";", s.scope, s.scope)
		if err != nil {
			return err
		}
		for _, sc := range ids {
			k, address, _ := strings.Cut(sc, ":")
			if ServiceScope(k, address) == s.scope && !slices.Contains(others, sc) {
				others = append(others, sc)
			}
		}
	}
	if len(others) != 1 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range scopeTables {
		if _, err := tx.ExecContext(ctx, `UPDATE `+t+` SET scope = ? WHERE scope = ?`, s.scope, others[0]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dsn builds the driver's data source name for the file at the absolute
// path: a file: URI, so that any byte of the path (a '#' or a '?' among
// them) is escaped instead of starting the URI's query or fragment, and the
// connection settings every pooled connection applies. sink/local builds its
// own the same way.
func dsn(path string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "cache_size(-1024)", "journal_size_limit(16777216)"} {
		q.Add("_pragma", p)
	}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// init checks the schema version of the file, upgrading a file of an older
// schema that migrations lists, and creates the tables.
func (s *Store) init(ctx context.Context) error {
	db, path := s.db, s.path
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return s.fileError("reading", err, "is it a Sluice state file? check state.path")
	}
	if version == 0 {
		// A file written before schema versions were recorded has tables
		// but no version.
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'docs'`).Scan(&n); err != nil {
			return s.fileError("reading", err, "is it a Sluice state file? check state.path")
		}
		if n > 0 {
			version = 1
		}
	}
	if migration, ok := migrations[version]; ok {
		if err := upgrade(ctx, db, migration); err != nil {
			return s.fileError("upgrading", fmt.Errorf("from schema %d: %w", version, err), "")
		}
		version = schemaVersion
	}
	if version != 0 && version != schemaVersion {
		return fmt.Errorf("state: %s was written by another version of Sluice (schema %d, want %d): delete it and run with --full, or set state.path to a new file", path, version, schemaVersion)
	}
	if _, err := db.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return s.fileError("preparing", err, "is it a Sluice state file? check state.path")
	}
	if err := s.addNodeKeys(ctx); err != nil {
		return s.fileError("preparing", err, "is it a Sluice state file? check state.path")
	}
	return nil
}

// addNodeKeys adds the key column to doc_nodes of a file created before it
// (see nodeKeys), and its index.
func (s *Store) addNodeKeys(ctx context.Context) error {
	has := func() (bool, error) {
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('doc_nodes') WHERE name = 'key'`).Scan(&n)
		return n > 0, err
	}
	ok, err := has()
	if err == nil && !ok {
		if _, err = s.db.ExecContext(ctx, nodeKeys); err != nil {
			if ok, _ := has(); ok {
				err = nil // another process added it meanwhile
			}
		}
	}
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, nodeKeysIndex)
	return err
}

// migrations upgrade a file of an older schema version to the current one.
var migrations = map[int]string{
	2: migrate2 + addFound + migrate4,
	3: migrate3 + migrate4,
	4: migrate4,
}

// upgrade creates the tables schema adds, runs a migration and records the
// current schema version, in one transaction.
func upgrade(ctx context.Context, db *sql.DB, migration string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema+migration+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database and releases the write lock, if the Store took
// it; calling it twice is harmless. A Store opened for writing copies its
// -wal into the state file first: when a full disk keeps it from doing so,
// nothing is lost (the -wal keeps every write, and the next open copies
// it), and Close returns a *FileError of ErrFull that says so.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if !s.readOnly {
		// The last checkpoint, which closing would run too but without a
		// word if the disk is full.
		if err := checkpoint(context.Background(), s.db); fileFault(err) == ErrFull {
			errs = append(errs, newFileError(s.path, opCheckpoint, err, ErrFull))
		}
	}
	errs = append(errs, s.db.Close())
	if s.lock != nil {
		// After the database: every write of this Store is done.
		errs = append(errs, s.lock.release())
		s.lock = nil
	}
	return errors.Join(errs...)
}

// Scope returns the scope the store is bound to.
func (s *Store) Scope() string { return s.scope }

// Doc returns the record of a document, if any, with its committed node ids.
// Their list is as long as the document: a caller that only looks at each
// id once uses Stamp and EachNodeID instead.
func (s *Store) Doc(ctx context.Context, id string) (Doc, bool, error) {
	st, ok, err := s.Stamp(ctx, id)
	if err != nil || !ok {
		return Doc{}, false, err
	}
	ids, err := s.ids(ctx, `SELECT node_id FROM doc_nodes WHERE scope = ? AND doc = ? ORDER BY node_id`, s.scope, id)
	if err != nil {
		return Doc{}, false, err
	}
	return Doc{ID: id, Stamp: st, NodeIDs: ids}, true, nil
}

// Stamp returns the stamp of a document's record, if any, without its node
// ids.
func (s *Store) Stamp(ctx context.Context, id string) (Stamp, bool, error) {
	row := s.db.QueryRowContext(ctx, `SELECT hash, size, mtime_ns, meta_hash, change_stamp FROM docs WHERE scope = ? AND id = ?`, s.scope, id)
	var st Stamp
	var mtime int64
	switch err := row.Scan(&st.Hash, &st.Size, &mtime, &st.MetaHash, &st.Change); {
	case errors.Is(err, sql.ErrNoRows):
		return Stamp{}, false, nil
	case err != nil:
		return Stamp{}, false, s.fail(fmt.Errorf("reading %s: %w", id, err))
	}
	st.ModTime = time.Unix(0, mtime)
	return st, true, nil
}

// NodeCounts returns how many node ids the manifest holds for a document:
// those of its record (committed), and those runs recorded since that did
// not commit it (pending; see Pending). An id may be counted in both.
func (s *Store) NodeCounts(ctx context.Context, id string) (committed, pending int, err error) {
	row := s.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM doc_nodes WHERE scope = ?1 AND doc = ?2),
		(SELECT count(*) FROM pending WHERE scope = ?1 AND id = ?2)`, s.scope, id)
	if err := row.Scan(&committed, &pending); err != nil {
		return 0, 0, s.fail(fmt.Errorf("counting the node ids of %s: %w", id, err))
	}
	return committed, pending, nil
}

// EachNodeID calls fn with each committed node id of a document, in order,
// without holding their list, which is as long as the document (see Doc).
func (s *Store) EachNodeID(ctx context.Context, id string, fn func(nodeID string)) error {
	return s.each(ctx, func(rows *sql.Rows) error {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		fn(n)
		return nil
	}, `SELECT node_id FROM doc_nodes WHERE scope = ? AND doc = ? ORDER BY node_id`, s.scope, id)
}

// EachPending calls fn with each node id recorded for a document since its
// record was last committed, in order, and whether it is acknowledged: the
// ids Pending returns, without holding their list.
func (s *Store) EachPending(ctx context.Context, id string, fn func(nodeID string, acked bool)) error {
	return s.each(ctx, func(rows *sql.Rows) error {
		var n string
		var acked bool
		if err := rows.Scan(&n, &acked); err != nil {
			return err
		}
		fn(n, acked)
		return nil
	}, `SELECT node_id, acked FROM pending WHERE scope = ? AND id = ? ORDER BY node_id`, s.scope, id)
}

// RecordedIDs returns, sorted, up to n of the node ids the manifest
// records for a document above after (the empty string for the first
// page), each once: those of its record, and those runs recorded since
// that did not commit it (acknowledged, intended or found; see
// PendingFound). Removing the document deletes them, a page at a time,
// without holding their list, which is as long as the document.
func (s *Store) RecordedIDs(ctx context.Context, id, after string, n int) ([]string, error) {
	return s.ids(ctx, `SELECT node_id FROM doc_nodes WHERE scope = ?1 AND doc = ?2 AND node_id > ?3
		UNION SELECT node_id FROM pending WHERE scope = ?1 AND id = ?2 AND node_id > ?3
		ORDER BY 1 LIMIT ?4`, s.scope, id, after, n)
}

// WithdrawDocs records, before their nodes are deleted from the sink, that
// the documents ids may no longer have them stored. The node ids of their
// records, and the ids runs that did not finish acknowledged, become
// pending ids as Run.Found leaves them: StoredCount still counts them, and
// RecordedIDs still returns them, but no run takes them for stored any
// more, nor deletes them as its own writes when a document fails. Each
// record's size becomes LostSize, as Lost leaves it. A removal that stops
// part-way (the sink fails, the process dies) before Forget is done again
// by the next run, which finds the file still gone, and counts the nodes
// once; should the file come back as it was (a revert, a branch switched
// back), the next run reads it again and writes its chunks again, where
// the record would have had them kept although the store lacks them.
func (s *Store) WithdrawDocs(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	docs, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.withdrawDocs(ctx, tx, string(docs), len(ids))
	})
}

// withdrawDocs does the work of WithdrawDocs in tx, for the n documents
// whose ids the JSON array docs lists, or for every document of the scope
// when docs is "".
func (s *Store) withdrawDocs(ctx context.Context, tx *sql.Tx, docs string, n int) error {
	// The condition on ids, none for the whole scope: a condition
	// that could be true regardless (?2 IS NULL OR ...) would keep SQLite
	// from using the indexes on the ids.
	in := func(column string) string {
		if docs == "" {
			return ""
		}
		return " AND " + column + " IN (SELECT value FROM json_each(?2))"
	}
	for _, query := range []string{
		`UPDATE pending SET acked = 0, found = 1 WHERE scope = ?1 AND acked = 1` + in("id"),
		`INSERT INTO pending (scope, id, node_id, acked, key, run, found)
			SELECT scope, doc, node_id, 0, '', 0, 1 FROM doc_nodes WHERE scope = ?1` + in("doc") + `
			ON CONFLICT (scope, id, node_id) DO UPDATE SET found = 1`,
		`DELETE FROM doc_nodes WHERE scope = ?1` + in("doc"),
		`UPDATE docs SET size = ?3 WHERE scope = ?1` + in("id"),
	} {
		if _, err := tx.ExecContext(ctx, query, s.scope, docs, LostSize); err != nil {
			if docs == "" {
				return fmt.Errorf("withdrawing the nodes of every document: %w", err)
			}
			return fmt.Errorf("withdrawing the nodes of %d documents: %w", n, err)
		}
	}
	return nil
}

// StoredCount returns how many of the node ids the manifest records for a
// document the store holds for sure: those of its record and those a run
// acknowledged, each once, and the intended ones a listing of the store
// found (see PendingFound). The other pending ids were only intended, and
// may or may not be stored.
func (s *Store) StoredCount(ctx context.Context, id string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM doc_nodes WHERE scope = ?1 AND doc = ?2)
		+ (SELECT count(*) FROM pending AS p WHERE scope = ?1 AND id = ?2 AND acked = 1
			AND NOT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1 AND doc = ?2 AND node_id = p.node_id))
		+ (SELECT count(*) FROM pending WHERE scope = ?1 AND id = ?2 AND acked = 0 AND found = 1)`, s.scope, id).Scan(&n)
	if err != nil {
		return 0, s.fail(fmt.Errorf("counting the stored nodes of %s: %w", id, err))
	}
	return n, nil
}

// DocIDs returns the ids of every recorded document, sorted.
func (s *Store) DocIDs(ctx context.Context) ([]string, error) {
	return s.ids(ctx, `SELECT id FROM docs WHERE scope = ? UNION SELECT id FROM pending WHERE scope = ? ORDER BY 1`, s.scope, s.scope)
}

// DocIDsUnder returns the ids the manifest records below the folder dir,
// a root-relative path without a trailing '/' (committed documents,
// documents of a run that did not finish them, and dead letters), sorted.
func (s *Store) DocIDsUnder(ctx context.Context, dir string) ([]string, error) {
	lo, hi := dir+"/", dir+"0" // '0' follows '/': [lo, hi) holds the ids that start with lo
	return s.ids(ctx, `SELECT id FROM docs WHERE scope = ?1 AND id >= ?2 AND id < ?3
		UNION SELECT id FROM pending WHERE scope = ?1 AND id >= ?2 AND id < ?3
		UNION SELECT id FROM failures WHERE scope = ?1 AND id >= ?2 AND id < ?3 ORDER BY 1`, s.scope, lo, hi)
}

// NodeRef names one node the manifest records as stored: the document it
// belongs to and its id in the sink.
type NodeRef struct {
	Doc, ID string
}

// Nodes returns up to limit of the nodes committed documents hold, ordered
// by document id then node id, starting after after (the zero NodeRef for
// the first page). Pending ids of unfinished runs are not among them: the
// next run finishes their documents whatever the store holds.
func (s *Store) Nodes(ctx context.Context, after NodeRef, limit int) ([]NodeRef, error) {
	var out []NodeRef
	err := s.each(ctx, func(rows *sql.Rows) error {
		var n NodeRef
		if err := rows.Scan(&n.Doc, &n.ID); err != nil {
			return err
		}
		out = append(out, n)
		return nil
	}, `SELECT doc, node_id FROM doc_nodes WHERE scope = ?1 AND (doc, node_id) > (?2, ?3) ORDER BY doc, node_id LIMIT ?4`,
		s.scope, after.Doc, after.ID, limit)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LostSize is the size a record takes when Lost finds nodes of its
// document missing from the store: no file has it, so the next run of any
// kind (a watch round, a retry) reads the document again and writes the
// chunks its record no longer lists.
const LostSize = -1

// Lost records that the store no longer holds nodes: they leave their
// documents' records, whose size becomes LostSize. The manifest then says
// what the store holds, and each such document stays to be read again until
// a run writes its chunks back and commits it, whether or not that run
// checks the store, and however it ends (a failure keeps the record as
// Lost left it, a killed run leaves it to the next).
func (s *Store) Lost(ctx context.Context, nodes []NodeRef) error {
	if len(nodes) == 0 {
		return nil
	}
	refs, err := refPairs(nodes)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM doc_nodes WHERE scope = ?1 AND (doc, node_id) IN
			(SELECT doc, node_id FROM `+refRows+`)`, s.scope, refs); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE docs SET size = ?3 WHERE scope = ?1 AND id IN (SELECT doc FROM `+refRows+`)`,
			s.scope, refs, LostSize)
		return err
	})
}

// LostAll records that the store lost every node of the scope (an index
// deleted, emptied or created again behind the manifest): as Lost for
// every recorded node, and the node ids a run that did not finish had
// acknowledged count as not known to be stored.
func (s *Store) LostAll(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE docs SET size = ?2 WHERE scope = ?1 AND id IN (SELECT doc FROM doc_nodes WHERE scope = ?1)`,
			s.scope, LostSize); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM doc_nodes WHERE scope = ?1`, s.scope); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE pending SET acked = 0 WHERE scope = ?1 AND acked = 1`, s.scope)
		return err
	})
}

// Uncommitted returns, sorted, the ids of documents that have pending node
// ids but no record: a run wrote some of their chunks and stopped before
// committing them.
func (s *Store) Uncommitted(ctx context.Context) ([]string, error) {
	return s.ids(ctx, `SELECT DISTINCT id FROM pending WHERE scope = ?1 AND id NOT IN (SELECT id FROM docs WHERE scope = ?1) ORDER BY 1`, s.scope)
}

// Unsettled returns, sorted, the ids of recorded documents that also have
// pending node ids: a run wrote some of their chunks, or rewrote the
// metadata of some of the record's, and stopped before committing them, or
// a removal of theirs stopped part-way. Their records no longer say all
// that the store holds of them, whatever their files say.
func (s *Store) Unsettled(ctx context.Context) ([]string, error) {
	return s.ids(ctx, `SELECT DISTINCT id FROM pending WHERE scope = ?1 AND id IN (SELECT id FROM docs WHERE scope = ?1) ORDER BY 1`, s.scope)
}

// Pending returns the node ids recorded for a document since its record was
// last committed, by a run that did not finish it: acked ids are stored in
// the sink; intended ids were being written when that run stopped and may or
// may not be stored.
func (s *Store) Pending(ctx context.Context, id string) (acked, intended []string, err error) {
	acked, intended, _, err = s.PendingFound(ctx, id)
	return acked, intended, err
}

// PendingFound is Pending, with how many of the intended ids a listing of
// the store found there (Run.Found) and no run acknowledged since: nodes
// the store holds although no run wrote them.
func (s *Store) PendingFound(ctx context.Context, id string) (acked, intended []string, found int, err error) {
	err = s.each(ctx, func(rows *sql.Rows) error {
		var n string
		var ok, wasFound bool
		if err := rows.Scan(&n, &ok, &wasFound); err != nil {
			return err
		}
		if ok {
			acked = append(acked, n)
			return nil
		}
		intended = append(intended, n)
		if wasFound {
			found++
		}
		return nil
	}, `SELECT node_id, acked, found FROM pending WHERE scope = ? AND id = ? ORDER BY node_id`, s.scope, id)
	if err != nil {
		return nil, nil, 0, err
	}
	return acked, intended, found, nil
}

// ids returns the first column of the rows of query.
func (s *Store) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	var out []string
	err := s.each(ctx, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		out = append(out, id)
		return nil
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each runs query and calls scan on each of its rows; an error of the
// query, of scan or of reading the rows ends it, wrapped by fail.
func (s *Store) each(ctx context.Context, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return s.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return s.fail(err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(err)
	}
	return nil
}

// Run is one ingestion run's view of the manifest. The node ids it records
// are told apart from those recorded by earlier runs that died, so that
// committing a document needs no list of its chunks in memory.
//
// Under the write lock the runs of a scope follow one another, so every
// other run's rows belong to a run that stopped. Should two runs overlap
// all the same (a platform without the lock), a run leaves alone the rows
// of runs that began after it: it neither deletes their nodes as stale nor
// clears their rows when it commits.
type Run struct {
	s  *Store
	id int64
}

// Begin starts a run, taking the scope's write lock if the Store does not
// hold it yet. Its tag is later than every tag in the manifest and than
// that of any run the Store began before.
func (s *Store) Begin(ctx context.Context) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	var last int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(run), 0) FROM pending WHERE scope = ?`, s.scope).Scan(&last); err != nil {
		return nil, s.fail(err)
	}
	s.lastRun = max(time.Now().UnixNano(), last+1, s.lastRun+1)
	return &Run{s: s, id: s.lastRun}, nil
}

// Intend records nodes about to be written to the sink, keyed by document
// id, before the write: if the process dies during the write, the next run
// knows to delete them should they be stale.
func (r *Run) Intend(ctx context.Context, nodes map[string][]Node) error {
	return r.record(ctx, nodes, false)
}

// Ack records nodes the sink holds, keyed by document id: those it has
// acknowledged, and those the run found already there. The next run may
// reuse them without embedding them again, and Commit makes them the
// document's nodes.
func (r *Run) Ack(ctx context.Context, nodes map[string][]Node) error {
	return r.record(ctx, nodes, true)
}

func (r *Run) record(ctx context.Context, nodes map[string][]Node, acked bool) error {
	s := r.s
	return s.tx(ctx, func(tx *sql.Tx) error {
		// A row Found recorded stays marked found when the run writes its
		// node again: the sink held the node before the run.
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO pending (scope, id, node_id, acked, key, run) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (scope, id, node_id) DO UPDATE SET acked = excluded.acked, key = excluded.key, run = excluded.run`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for id, ns := range nodes {
			for _, n := range ns {
				if _, err := stmt.ExecContext(ctx, s.scope, id, n.ID, acked, n.Key, r.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Stale returns the node ids of a document that the store may hold but this
// run did not acknowledge: its committed ids and those of dead runs (runs
// that began before this one), minus this run's. They are to be deleted
// from the sink before Commit. Their list is as long as the document when
// most of its chunks go stale: a caller that deletes them uses StalePage.
func (r *Run) Stale(ctx context.Context, id string) ([]string, error) {
	return r.StalePage(ctx, id, "", -1)
}

// StalePage returns, sorted, up to n of the ids Stale returns above after
// (the empty string for the first page; n < 0 for no limit): the stale ids
// of a document a page at a time, without holding their list. Each page is
// to be withdrawn (Withdraw) before it is deleted from the sink.
func (r *Run) StalePage(ctx context.Context, id, after string, n int) ([]string, error) {
	return r.s.ids(ctx, `SELECT node_id FROM doc_nodes WHERE scope = ?1 AND doc = ?2 AND node_id > ?4
		UNION SELECT node_id FROM pending WHERE scope = ?1 AND id = ?2 AND run < ?3 AND node_id > ?4
		EXCEPT SELECT node_id FROM pending WHERE scope = ?1 AND id = ?2 AND run = ?3 AND acked = 1 AND node_id > ?4
		ORDER BY 1 LIMIT ?5`, r.s.scope, id, r.id, after, n)
}

// Withdraw records, before they are deleted from the sink, that stale node
// ids of a document (a page of StalePage) may no longer be stored: those of
// its record leave it and become ids a run that died intended, maybe
// stored, as do those a dead run acknowledged; the record's size becomes
// LostSize, as Lost leaves it. Stale still returns them, so a run whose
// deletes stop part-way (the sink fails, the process dies) before Commit
// leaves them for the next run to delete again, but no run takes them for
// stored any more: one that reads the document again (its file restored to
// the version they belong to) writes such a chunk again instead of keeping
// it, and a document that fails keeps a record of only the nodes the sink
// still holds, which the next run reads again. The rows of runs that began
// after this one are left alone.
func (r *Run) Withdraw(ctx context.Context, id string, nodeIDs []string) error {
	if len(nodeIDs) == 0 {
		return nil
	}
	ids, err := json.Marshal(nodeIDs)
	if err != nil {
		return err
	}
	s := r.s
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, query := range []string{
			`UPDATE pending SET acked = 0 WHERE scope = ?1 AND id = ?2 AND run < ?4 AND acked = 1
				AND node_id IN (SELECT value FROM json_each(?3))`,
			`INSERT OR IGNORE INTO pending (scope, id, node_id, acked, key, run)
				SELECT scope, doc, node_id, 0, '', 0 FROM doc_nodes WHERE scope = ?1 AND doc = ?2
				AND node_id IN (SELECT value FROM json_each(?3))`,
			`DELETE FROM doc_nodes WHERE scope = ?1 AND doc = ?2 AND node_id IN (SELECT value FROM json_each(?3))`,
			`UPDATE docs SET size = ?5 WHERE scope = ?1 AND id = ?2`,
		} {
			if _, err := tx.ExecContext(ctx, query, s.scope, id, string(ids), r.id, LostSize); err != nil {
				return err
			}
		}
		return nil
	})
}

// Found records nodes that the sink holds although the manifest may not
// list them for their documents (a Full run's, those of a document the
// manifest has no record of, those a scan of the store turned up), as a
// run that died while writing them would have left them: Stale returns
// those that this run does not acknowledge, so they are deleted only once
// their document's new nodes are stored, and a run that dies first leaves
// them to the next one. Ids among their document's committed nodes, or
// already pending, are not recorded again. The record of a document that
// gets such ids takes LostSize, as Lost leaves it: it no longer says
// what the store holds, so the next run of any kind reads the document
// again, and deletes them when it commits it.
func (r *Run) Found(ctx context.Context, nodes []NodeRef) error {
	if len(nodes) == 0 {
		return nil
	}
	refs, err := refPairs(nodes)
	if err != nil {
		return err
	}
	s := r.s
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE docs SET size = ?3 WHERE scope = ?1 AND id IN (
			SELECT r.doc FROM `+refRows+` AS r
			WHERE NOT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1 AND doc = r.doc AND node_id = r.node_id)
			AND NOT EXISTS (SELECT 1 FROM pending WHERE scope = ?1 AND id = r.doc AND node_id = r.node_id))`,
			s.scope, refs, LostSize); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pending (scope, id, node_id, acked, key, run, found)
			SELECT ?1, r.doc, r.node_id, 0, '', 0, 1 FROM `+refRows+` AS r
			WHERE NOT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1 AND doc = r.doc AND node_id = r.node_id)`,
			s.scope, refs)
		return err
	})
}

// Unlisted returns, in their order, the nodes among nodes that the
// manifest does not list for their documents: neither among the committed
// nodes of their records nor among the ids a run intended or acknowledged
// (the ids Found recorded count as unlisted). A scan of the store finds the
// nodes written behind the manifest's back with it.
func (s *Store) Unlisted(ctx context.Context, nodes []NodeRef) ([]NodeRef, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	refs, err := refPairs(nodes)
	if err != nil {
		return nil, err
	}
	var out []NodeRef
	err = s.each(ctx, func(rows *sql.Rows) error {
		var n NodeRef
		if err := rows.Scan(&n.Doc, &n.ID); err != nil {
			return err
		}
		out = append(out, n)
		return nil
	}, `SELECT r.doc, r.node_id FROM `+refRows+` AS r
		WHERE NOT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1 AND doc = r.doc AND node_id = r.node_id)
		AND NOT EXISTS (SELECT 1 FROM pending WHERE scope = ?1 AND id = r.doc AND node_id = r.node_id AND found = 0)
		ORDER BY r.k`, s.scope, refs)
	return out, err
}

// refRows is the table of the nodes that refPairs wrote into parameter ?2,
// in their order (k): (k, doc, node_id).
const refRows = `(SELECT j.key AS k, j.value ->> 0 AS doc, j.value ->> 1 AS node_id FROM json_each(?2) AS j)`

// refPairs writes nodes as a JSON array of [document, node id] pairs, for
// refRows: one parameter, read in one pass.
func refPairs(nodes []NodeRef) (string, error) {
	pairs := make([][2]string, len(nodes))
	for k, n := range nodes {
		pairs[k] = [2]string{n.Doc, n.ID}
	}
	b, err := json.Marshal(pairs)
	return string(b), err
}

// Retract starts the rollback of a failed document: every id runs recorded
// for it beyond its committed nodes (those Found recorded aside) is marked
// as maybe stored, as if intended by a run that died, so that a run killed
// during the rollback, after deleting some of them, leaves ids to be
// written again, never acknowledged ids of nodes that are gone. With
// rewritten set (the run rewrote committed nodes: their metadata, or whole
// nodes in a Full run), the record's metadata hash is cleared too, so that
// the next run rewrites the document's nodes even if its file is back as
// recorded. So it is when a run that died left pending ids of committed
// nodes (it may have rewritten their metadata; see Unsettled), which
// Abandon drops. It returns how many ids the sink had acknowledged.
func (r *Run) Retract(ctx context.Context, id string, rewritten bool) (int, error) {
	s := r.s
	var acked int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE docs SET meta_hash = '' WHERE scope = ?1 AND id = ?2 AND (?3
			OR EXISTS (SELECT 1 FROM pending AS p WHERE scope = ?1 AND id = ?2 AND run < ?4 AND found = 0
				AND EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1 AND doc = ?2 AND node_id = p.node_id)))`,
			s.scope, id, rewritten, r.id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE pending SET acked = 0 WHERE scope = ?1 AND id = ?2 AND found = 0 AND acked = 1
			AND node_id NOT IN (SELECT node_id FROM doc_nodes WHERE scope = ?1 AND doc = ?2)`, s.scope, id)
		if err != nil {
			return err
		}
		acked, err = res.RowsAffected()
		return err
	})
	return int(acked), err
}

// Written returns, sorted, up to n node ids above after that runs (this
// one, or runs that died) recorded for a document beyond its committed
// nodes, acknowledged or not (a refused write may have replaced the row of
// a node a dead run did store); not the ids Found recorded. When the
// document fails, these are the nodes to delete from the sink, after
// Retract, so that it holds the document as last committed; then Abandon.
func (r *Run) Written(ctx context.Context, id, after string, n int) ([]string, error) {
	return r.s.ids(ctx, `SELECT node_id FROM pending WHERE scope = ?1 AND id = ?2 AND found = 0 AND node_id > ?3
		AND node_id NOT IN (SELECT node_id FROM doc_nodes WHERE scope = ?1 AND doc = ?2)
		ORDER BY node_id LIMIT ?4`, r.s.scope, id, after, n)
}

// Abandon drops the pending node ids of a failed document that runs
// recorded as written, keeping its record, its dead-letter entry and the
// ids Found recorded: the nodes Written listed have been deleted from the
// sink, and the others are committed ones or were there before the run.
// The found ids stay pending, as a dead run's would, so that the manifest
// still knows the document's nodes that its record does not list: the run
// that commits the document deletes those it does not write again, and a
// run that finds its file gone deletes them with it (a document without a
// record is then one Uncommitted returns).
func (r *Run) Abandon(ctx context.Context, id string) error {
	s := r.s
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM pending WHERE scope = ? AND id = ? AND found = 0`, s.scope, id)
		return err
	})
}

// Commit records a document as done, in one transaction: its record is
// replaced, its nodes become those this run acknowledged, the journal
// entries of their texts under model are released (none when model is
// empty), and its pending ids (those of this run and of dead runs, the
// ones Stale considered) and any dead-letter entry are cleared.
func (r *Run) Commit(ctx context.Context, id string, st Stamp, model string) error {
	s := r.s
	return s.tx(ctx, func(tx *sql.Tx) error {
		steps := []struct {
			query string
			args  []any
		}{
			{`INSERT OR REPLACE INTO docs (scope, id, hash, size, mtime_ns, meta_hash, change_stamp) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				[]any{s.scope, id, st.Hash, st.Size, st.ModTime.UnixNano(), st.MetaHash, st.Change}},
			{`DELETE FROM doc_nodes WHERE scope = ? AND doc = ?`, []any{s.scope, id}},
			{`INSERT INTO doc_nodes (scope, doc, node_id, key) SELECT scope, id, node_id, key FROM pending WHERE scope = ? AND id = ? AND run = ? AND acked = 1`,
				[]any{s.scope, id, r.id}},
			{`DELETE FROM journal WHERE scope = ?1 AND model = ?2 AND key IN (SELECT key FROM pending WHERE scope = ?1 AND id = ?3 AND run = ?4)`,
				[]any{s.scope, model, id, r.id}},
		}
		if model == "" {
			steps = steps[:len(steps)-1]
		}
		for _, step := range steps {
			if _, err := tx.ExecContext(ctx, step.query, step.args...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pending WHERE scope = ? AND id = ? AND run <= ?`, s.scope, id, r.id); err != nil {
			return err
		}
		return s.clear(ctx, tx, id, "failures")
	})
}

// Touch records a new modification time and change stamp for a document
// whose content did not change, and clears its dead-letter entry: the
// document is in the store as its record says, so whatever failed in
// between (say the file was briefly binary) is over.
func (s *Store) Touch(ctx context.Context, id string, mtime time.Time, change string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE docs SET mtime_ns = ?, change_stamp = ? WHERE scope = ? AND id = ?`, mtime.UnixNano(), change, s.scope, id); err != nil {
			return err
		}
		return s.clear(ctx, tx, id, "failures")
	})
}

// ClearFailure removes a document's dead-letter entry, if any: its file is
// fine again, gone, or no longer selected.
func (s *Store) ClearFailure(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.clear(ctx, tx, id, "failures")
	})
}

// Reset drops a document's record and pending node ids but keeps its
// dead-letter entry. A run calls it before deleting all of the document's
// nodes from the sink to write them again (a --full run): should the run
// die in between, the next run finds no record, takes the document for new
// and writes it whole, instead of trusting a record of nodes that are gone.
func (s *Store) Reset(ctx context.Context, id string) error {
	return s.forget(ctx, []string{id}, "docs", "pending")
}

// Forget removes every record of the documents ids (after their nodes were
// deleted from the sink), in one transaction: removing many documents
// costs one commit, not one each.
func (s *Store) Forget(ctx context.Context, ids ...string) error {
	return s.forget(ctx, ids, "docs", "pending", "failures")
}

// forget deletes, in one transaction, the committed node ids of the
// documents ids and their rows of tables.
func (s *Store) forget(ctx context.Context, ids []string, tables ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM doc_nodes WHERE scope = ? AND doc = ?`, s.scope, id); err != nil {
				return err
			}
			if err := s.clear(ctx, tx, id, tables...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Drop removes every record of the scope: documents, their node ids,
// pending ids, journalled vectors, dead letters and the embedder that built
// the index. A command deleting the index calls it first: should it die
// before the index is gone, the next run finds no record and replaces each
// document's earlier nodes, as after a lost manifest; once the index is
// gone, a plain run rebuilds it whole, with any embedder.
func (s *Store) Drop(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, t := range scopeTables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE scope = ?`, s.scope); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) clear(ctx context.Context, tx *sql.Tx, id string, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE scope = ? AND id = ?`, s.scope, id); err != nil {
			return err
		}
	}
	return nil
}

// Fail records a failed document in the dead-letter table, counting attempts.
func (s *Store) Fail(ctx context.Context, id, reason string, at time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO failures (scope, id, reason, attempts, last_ns) VALUES (?, ?, ?, 1, ?)
			ON CONFLICT (scope, id) DO UPDATE SET reason = excluded.reason, attempts = attempts + 1, last_ns = excluded.last_ns`,
			s.scope, id, reason, at.UnixNano())
		return err
	})
}

// Has reports whether the manifest holds any record of a document: a
// committed one, node ids of a run that did not finish it, or a dead letter.
func (s *Store) Has(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM docs WHERE scope = ?1 AND id = ?2)
		OR EXISTS (SELECT 1 FROM pending WHERE scope = ?1 AND id = ?2)
		OR EXISTS (SELECT 1 FROM failures WHERE scope = ?1 AND id = ?2)`, s.scope, id).Scan(&n)
	if err != nil {
		return false, s.fail(fmt.Errorf("reading %s: %w", id, err))
	}
	return n != 0, nil
}

// HasNodes reports whether the manifest records any node as stored: a
// committed document's, or one a run acknowledged or may have written.
func (s *Store) HasNodes(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1)
		OR EXISTS (SELECT 1 FROM pending WHERE scope = ?1)`, s.scope).Scan(&n)
	if err != nil {
		return false, s.fail(fmt.Errorf("reading the recorded nodes: %w", err))
	}
	return n != 0, nil
}

// HasStoredNodes reports whether the manifest records any node as known
// to be stored: a committed document's, or one a run acknowledged. Unlike
// HasNodes it leaves out the nodes a run only meant to write when it
// stopped, which a store that refused the write (a full disk) never held.
func (s *Store) HasStoredNodes(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM doc_nodes WHERE scope = ?1)
		OR EXISTS (SELECT 1 FROM pending WHERE scope = ?1 AND acked = 1)`, s.scope).Scan(&n)
	if err != nil {
		return false, s.fail(fmt.Errorf("reading the recorded nodes: %w", err))
	}
	return n != 0, nil
}

// Failures lists the dead-letter table, sorted by document id.
func (s *Store) Failures(ctx context.Context) ([]Failure, error) {
	var out []Failure
	err := s.each(ctx, func(rows *sql.Rows) error {
		var f Failure
		var last int64
		if err := rows.Scan(&f.ID, &f.Reason, &f.Attempts, &last); err != nil {
			return err
		}
		f.LastTry = time.Unix(0, last).UTC()
		out = append(out, f)
		return nil
	}, `SELECT id, reason, attempts, last_ns FROM failures WHERE scope = ? ORDER BY id`, s.scope)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CheckEmbedder compares the embedder the scope's index was built with to
// want. It returns a *ModelChangedError when they differ and the index holds
// documents; an empty index adopts want.
func (s *Store) CheckEmbedder(ctx context.Context, want Embedder) error {
	var built Embedder
	if ok, err := s.readInfo(ctx, "embedders", "embedder", &built); err != nil || !ok || built == want {
		return err
	}
	ids, err := s.DocIDs(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	return &ModelChangedError{Scope: s.scope, Built: built, Want: want}
}

// SetEmbedder records the embedder the scope's index is built with.
func (s *Store) SetEmbedder(ctx context.Context, e Embedder) error {
	return s.writeInfo(ctx, "embedders", e, nil)
}

// ChangeEmbedder is called by a run that is about to embed every document
// again with e (a --full run), before it writes anything. When another
// embedder is recorded as the one the index is built with, it records e
// instead and withdraws every document's nodes, as WithdrawDocs does, in
// one transaction: until the run has written a document again, its nodes
// may hold vectors of either model. So a run that stops part-way leaves an
// index that a run with the old embedder refuses (ErrModelChanged: the
// documents the run committed hold vectors of e), and that the next run
// with e completes, embedding again every document the stopped run did not
// commit, where the old record would have had that run's vectors mixed
// with the new ones, or the other way round, silently. With no embedder
// recorded, or e already, it changes nothing.
func (s *Store) ChangeEmbedder(ctx context.Context, e Embedder) error {
	var built Embedder
	if ok, err := s.readInfo(ctx, "embedders", "embedder", &built); err != nil || !ok || built == e {
		return err
	}
	// The whole scope in SQL: no list of the documents is held.
	return s.writeInfo(ctx, "embedders", e, func(tx *sql.Tx) error { return s.withdrawDocs(ctx, tx, "", 0) })
}

// readInfo decodes into v the scope's JSON record in table (embedders,
// splitters), what names the record in an error; false when there is none.
func (s *Store) readInfo(ctx context.Context, table, what string, v any) (bool, error) {
	var info string
	err := s.db.QueryRowContext(ctx, `SELECT info FROM `+table+` WHERE scope = ?`, s.scope).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, s.fail(err)
	}
	if err := json.Unmarshal([]byte(info), v); err != nil {
		return false, fmt.Errorf("state: %s record of %s is corrupt: %w", what, s.scope, err)
	}
	return true, nil
}

// writeInfo replaces the scope's record in table with v as JSON, in one
// transaction with before, if not nil, which runs first.
func (s *Store) writeInfo(ctx context.Context, table string, v any, before func(*sql.Tx) error) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO `+table+` (scope, info) VALUES (?, ?)`, s.scope, string(data))
		return err
	})
}

// Splitting identifies the splitter settings the scope's chunks were cut
// with.
type Splitting struct {
	ChunkSize    int `json:"chunk_size"`
	ChunkOverlap int `json:"chunk_overlap"`
}

// String returns the settings as text.
func (sp Splitting) String() string {
	return fmt.Sprintf("chunkSize %d, chunkOverlap %d", sp.ChunkSize, sp.ChunkOverlap)
}

// Splitting returns the splitter settings recorded by the last complete
// run over the whole folder (SetSplitting), or by a run that found none
// recorded or other ones, as it started (SetSplitting, ChangeSplitting);
// false when none did, as in a new manifest or one written before Sluice
// recorded them.
func (s *Store) Splitting(ctx context.Context) (Splitting, bool, error) {
	var sp Splitting
	ok, err := s.readInfo(ctx, "splitters", "splitter", &sp)
	return sp, ok, err
}

// SetSplitting records the splitter settings the scope's chunks are cut
// with: once a run has split every document with them, or before a run
// writes anything when none are recorded.
func (s *Store) SetSplitting(ctx context.Context, sp Splitting) error {
	return s.writeInfo(ctx, "splitters", sp, nil)
}

// ChangeSplitting is called by a run that is about to split documents
// again with sp, other settings than those recorded (every document, or
// the named files of a retry), before it writes anything: it records sp
// and gives every record LostSize, as Lost does, in one transaction. Each
// record then stays to be read again, by any run, until a run commits its
// document, cut with the recorded settings. So a run that stops part-way leaves
// records that the next run with sp reads again, and settings that a run
// with the old ones finds changed, splitting every document again, where
// the old settings would have had it take the documents the stopped run
// committed, cut with sp, for unchanged.
func (s *Store) ChangeSplitting(ctx context.Context, sp Splitting) error {
	return s.writeInfo(ctx, "splitters", sp, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE docs SET size = ? WHERE scope = ?`, LostSize, s.scope)
		return err
	})
}

// tx runs fn in a transaction, under the scope's write lock: every write of
// the manifest goes through it.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.acquire(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return s.fail(err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(err)
	}
	return nil
}

// Stamp is the part of a record that decides whether a document changed.
type Stamp struct {
	Hash     string
	Size     int64
	ModTime  time.Time
	MetaHash string
	// Change is the file's reader.File.Change when it was recorded; ""
	// where the platform has none, or in a record from before schema 5.
	Change string
}

// Stamps returns the stamp of every recorded document, for the unchanged
// fast path: one query however many documents there are.
func (s *Store) Stamps(ctx context.Context) (map[string]Stamp, error) {
	out := make(map[string]Stamp)
	err := s.each(ctx, func(rows *sql.Rows) error {
		var id string
		var st Stamp
		var mtime int64
		if err := rows.Scan(&id, &st.Hash, &st.Size, &mtime, &st.MetaHash, &st.Change); err != nil {
			return err
		}
		st.ModTime = time.Unix(0, mtime)
		out[id] = st
		return nil
	}, `SELECT id, hash, size, mtime_ns, meta_hash, change_stamp FROM docs WHERE scope = ?`, s.scope)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaveVectors journals embeddings that are not yet in the sink, keyed by
// model and a key of the chunk text, so that a run killed before writing
// them does not pay to embed them again. Commit releases them.
func (s *Store) SaveVectors(ctx context.Context, model string, vecs map[string][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO journal (scope, model, key, vec) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for k, v := range vecs {
			if _, err := stmt.ExecContext(ctx, s.scope, model, k, sink.EncodeVector(v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// LoadVectors returns the journalled embeddings of the given text keys.
func (s *Store) LoadVectors(ctx context.Context, model string, keys []string) (map[string][]float32, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32)
	err = s.each(ctx, func(rows *sql.Rows) error {
		var k string
		var b []byte
		if err := rows.Scan(&k, &b); err != nil {
			return err
		}
		out[k] = sink.DecodeVector(b)
		return nil
	}, `SELECT key, vec FROM journal WHERE scope = ? AND model = ? AND key IN (SELECT value FROM json_each(?))`, s.scope, model, string(list))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NodesOfTexts returns, for each of the text keys keys that a committed
// node of the scope was recorded with (Ack, Commit), one such node: its
// vector is one of the embedder the index is built with, as every
// committed node's is (ChangeEmbedder), so a chunk of the same text may
// be written with it instead of being embedded. The store may have lost
// the node since, or hold another text under its id if it was written
// behind the manifest's back: a caller reads it back and checks its text.
func (s *Store) NodesOfTexts(ctx context.Context, keys []string) (map[string]NodeRef, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]NodeRef)
	err = s.each(ctx, func(rows *sql.Rows) error {
		var k string
		var n NodeRef
		if err := rows.Scan(&k, &n.Doc, &n.ID); err != nil {
			return err
		}
		if _, ok := out[k]; !ok {
			out[k] = n
		}
		return nil
	}, `SELECT key, doc, node_id FROM doc_nodes WHERE scope = ?1 AND key != '' AND key IN (SELECT value FROM json_each(?2))`, s.scope, string(list))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClearVectors drops the journal of every model but keep (of this scope).
func (s *Store) ClearVectors(ctx context.Context, keep string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM journal WHERE scope = ? AND model != ?`, s.scope, keep)
		return err
	})
}
