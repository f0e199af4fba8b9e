package pipeline

import (
	"sync"

	"github.com/sluice-dev/sluice/reader"
)

// document tracks one source file through the stages. It is complete when
// the splitter has sealed it (emitted its last chunk) and every emitted
// chunk has been accounted for: written, or dropped because the document
// failed. Completion happens exactly once, in whichever goroutine accounts
// for the last chunk.
type document struct {
	file   reader.File
	budget int64 // bytes held in the memory budget until completion

	mu       sync.Mutex
	emitted  int
	settled  int
	sealed   bool
	finished bool
	hash     string
	err      error // first failure
	ids      map[string]int
}

// chunk is one piece of a document on its way to the store.
type chunk struct {
	doc     *document
	id      string
	text    string
	start   int
	end     int
	tokens  int
	vector  []float32
	ordinal int
}

func newDocument(f reader.File, budget int64) *document {
	return &document{file: f, budget: budget, ids: make(map[string]int)}
}

// nextOrdinal returns how many chunks with this text the document has
// emitted before, for content-addressed node ids.
func (d *document) nextOrdinal(text string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.ids[text]
	d.ids[text] = n + 1
	d.emitted++
	return n
}

// seal marks the end of the document's chunks and reports whether the
// document is now complete.
func (d *document) seal(hash string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sealed = true
	d.hash = hash
	d.ids = nil // only needed while emitting
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

// result returns the outcome once the document is complete.
func (d *document) result() (chunks int, hash string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.emitted, d.hash, d.err
}
