// Package local is Sluice's embedded, on-disk vector store: the default sink.
//
// A Store keeps nodes in one SQLite database file (through the pure-Go
// modernc.org/sqlite driver, so no C toolchain is needed). Each node is a row
// of the nodes table with its text, its embedding as a little-endian float32
// BLOB, and its metadata as JSON; an FTS5 table over the text, kept in step by
// triggers, serves BM25 full-text search.
//
// Query modes:
//
//   - sink.Vector: exact cosine similarity over every candidate row. Rows are
//     streamed and a top-k heap keeps the best, so memory stays flat however
//     large the store is.
//   - sink.Sparse: FTS5 BM25. The query text is split into words and each word
//     is quoted, so punctuation in the text never causes an FTS syntax error;
//     the words are ORed. The score is the negated bm25() value (higher is
//     better). The text "*" alone matches every node the filters keep, each
//     scored 1, in the order they were stored, as Cloud AI Search's simple
//     query syntax does.
//   - sink.Hybrid: reciprocal rank fusion (k = 60) of the vector and BM25
//     rankings, each cut to max(50, 2*topK) candidates; a node's score is the
//     sum of 1/(60+rank) over the rankings it appears in, ranks starting at 1.
//     The text "*" ranks nothing: the vector ranking alone decides.
//   - sink.SemanticHybrid: not supported; the local store has no semantic
//     ranker. Query returns a *sink.UnsupportedError.
//
// Metadata filters (sink.MetadataFilters with EQ and IN, joined by AND or OR)
// have exactly the semantics of (*sink.MetadataFilters).Match, which decides
// every row: a list value matches EQ when it contains the value and IN when
// it shares an element with the list, and numbers compare by value. A SQL
// condition over json_each narrows the rows Match has to look at. Filtering
// happens before ranking, so a query returns topK matching nodes whenever
// that many exist.
//
// # Metadata types
//
// Metadata values may be strings, numbers, bools, nil, or lists of strings,
// numbers or bools ([]string, []int, []float64, []any). They are stored as
// JSON, so reading them back yields string, float64 (for every number, int
// or not), bool, nil, []string (a list of strings), []float64 (a list of
// numbers) or []any (any other list). Maps and nested lists are rejected by
// Add.
//
// # Write cost
//
// Most of the cost of Add is SQLite's: tokenizing the text for FTS5,
// writing the index segments and merging them, and writing each page to the
// WAL and then to the database file. Add therefore writes a batch with one
// multi-row upsert statement (up to 512 nodes per statement), prepared once
// per batch size, so that FTS5 writes one new index segment per Add; FTS5
// merges segments 16 at a time (automerge 16, crisismerge 32, kept in the
// index and applied by Open to existing files too) instead of 4; and new
// files use 8 KiB pages, in which a node's row of about 10 KiB takes one
// overflow page instead of two. None of this changes what queries return.
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL. Each Add, Delete
// and DeleteNodes is one transaction: it is all written or, after a crash or
// an error, not at all; the database is never left half-updated. FULL makes
// a transaction durable when it commits, power failures included, as
// sink.VectorStore's Add promises: the run manifest (pipeline/state)
// records a document as done once its nodes are committed, in a file of its
// own that is flushed to disk on its own schedule, so a store that could
// lose its last commits after a power failure could leave the manifest
// calling documents unchanged whose nodes are gone. The price is one fsync
// per commit: about 9% of a bulk load's store throughput with 4 KB chunks, 28%
// with 1 KB ones (BenchmarkAdd, see benchmarks/RESULTS.md).
//
// Writers are serialised inside the process by a mutex and across processes
// by SQLite's lock with a busy timeout; readers run concurrently with them.
//
// # Dimensions
//
// The first Add into an empty store records the length of its vectors;
// every later vector must have it, until the store is emptied. A change of
// embedder.dimensions therefore needs a new store (`sluice index delete`, or
// a new sink.local.path); a run with --full alone cannot change it.
// CheckDimensions tells before a run embeds anything; Add and Query return a
// *DimensionsError that says so.
//
// # Errors of the database file
//
// When the file itself is at fault, errors are a *FileError naming it and
// sink.local.path: ErrAccess (it cannot be opened or written: check its
// permissions and its folder's) or ErrDamaged (it is not a sound SQLite
// database: delete it with `sluice index delete` and run again, or
// use a new sink.local.path) or ErrFull (the disk holding it has no room:
// the write rolled back whole; free space and write again).
//
// # Reading without write access
//
// A process that may read the database file but not write it or its
// folder can still read the store: Open fails for it with a *FileError
// (ErrAccess), and OpenReadOnly opens the store for reading only (ReadOnly
// reports it, and writes fail with ErrAccess and ErrReadOnly). See
// OpenReadOnly for how such a reader copes with SQLite's -wal and -shm
// files, and what it risks when no writer keeps them.
//
// # Pipeline capabilities
//
// Store implements the pipeline's optional interfaces: Empty
// (pipeline.EmptyReporter: a first load into an empty store deletes
// nothing by document), DeleteDocs (pipeline.DocsDeleter: many documents
// removed in one transaction), NodeIDs (pipeline.NodeLister), ScanNodes
// (pipeline.NodeScanner: a --full or --verify run removes the documents
// whose files are gone even when the manifest was lost, and --verify the
// chunks the manifest does not list) and CheckDimensions (pipeline.DimensionChecker).
package local
