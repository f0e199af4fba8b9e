package pipeline

import (
	"hash/maphash"
	"sync"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
)

// document tracks one source file through the stages. It is complete when
// the splitter has sealed it (emitted its last chunk) and every emitted
// chunk has been accounted for: written, reused, or dropped because the
// document failed. Completion happens exactly once, in whichever goroutine
// accounts for the last chunk.
type document struct {
	file     reader.File
	budget   int64  // bytes held in the memory budget until completion
	metaHash string // hash of file.Metadata

	// Set before the first chunk is emitted, read-only afterwards.
	prev  *state.Stamp // the manifest record's stamp, nil for a new document; its node ids are in nodes (less those a dry run with Verify found missing)
	nodes *nodeSet     // node ids the store may hold, for a document the manifest knows; nil for another

	// Owned by the splitting goroutine.
	kept    []state.Node   // reused chunks not yet acknowledged to the manifest
	planned []plannedChunk // a dry run's chunks to embed, not yet looked up in the manifest (flushPlanned)
	reused  int            // chunks already in the store as they are
	matched int            // chunks whose node id is in nodes
	clear   bool           // its earlier nodes are to be deleted before its first chunk is emitted
	cleared bool           // its record was dropped and its earlier nodes deleted (read by commit after sealing)
	found   bool           // the node ids the store held for it were recorded in the manifest (read by commit after sealing)
	rewrote bool           // a chunk rewriting one of its committed nodes was emitted (read by rollback after sealing)
	read    int64          // bytes counted in Stats.BytesRead so far
	partial int64          // bytes counted in Stats.BytesPartial (read by finish after sealing)

	mu       sync.Mutex
	emitted  int
	settled  int
	sealed   bool
	finished bool
	hash     string
	err      error // first failure
	// The ordinals of texts seen so far, by a 64-bit hash of the text.
	// Nothing else is held per chunk: a single huge document may have
	// hundreds of thousands, and the manifest keeps their ids (keying by
	// the texts themselves would also keep whole stream windows alive).
	// Two texts whose hashes collide only number their ordinals together,
	// which keeps ids unique.
	ordinals *ordinals
}

// chunk is one piece of a document on its way to the store.
type chunk struct {
	doc     *document
	id      string
	text    string
	start   int // offsets in UTF-16 code units, as sink.Node.StartChar
	end     int
	tokens  int
	ordinal int
	vector  []float32
	key     string // textKey(text) when vectors are journalled, else ""
	// reuse marks a chunk already in the store: it is not embedded again;
	// with update set, its metadata and offsets are rewritten.
	reuse, update bool
}

func newDocument(f reader.File, budget int64) *document {
	return &document{file: f, budget: budget, metaHash: metadataHash(f.Metadata), ordinals: new(ordinals)}
}

// nextOrdinal registers the next chunk with this text and returns its
// ordinal among identical chunks of the document, for content-addressed
// node ids.
func (d *document) nextOrdinal(text string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := maphash.String(ordinalSeed, text)
	d.emitted++
	return d.ordinals.next(k)
}

// inManifest reports whether the manifest knew the document when the run
// planned it: a record, or node ids of a dead run (plan loads nodes then).
func (d *document) inManifest() bool { return d.nodes != nil }

// unmatched returns the number of the document's recorded or pending node
// ids that no chunk of this run matched; node ids are unique within a
// document.
func (d *document) unmatched() int { return d.nodes.len() - d.matched }

// seal marks the end of the document's chunks and reports whether the
// document is now complete.
func (d *document) seal(hash string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sealed = true
	d.hash = hash
	d.ordinals = nil // only needed while emitting
	return d.completeLocked()
}

// fail records the document's first error. Its chunks still have to be
// settled before it completes.
func (d *document) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

// failed reports whether the document has failed.
func (d *document) failed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err != nil
}

// settle accounts for n chunks and reports whether the document is now
// complete.
func (d *document) settle(n int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.settled += n
	return d.completeLocked()
}

func (d *document) completeLocked() bool {
	if d.finished || !d.sealed || d.settled < d.emitted {
		return false
	}
	d.finished = true
	return true
}

// outcome is a completed document's result.
type outcome struct {
	chunks, reused int
	hash           string
	err            error
}

func (d *document) outcome() outcome {
	d.mu.Lock()
	defer d.mu.Unlock()
	return outcome{chunks: d.emitted, reused: d.reused, hash: d.hash, err: d.err}
}

// ordinalSeed seeds the hashes that number ordinals; ordinals depend only
// on the texts, not on the seed.
var ordinalSeed = maphash.MakeSeed()
