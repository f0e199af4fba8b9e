package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// ErrNothingEmbedded is returned (wrapped) by Harness.Measure when a whole
// pass over the corpus embedded no token: every document failed or held no
// text, so the trial could never measure anything.
var ErrNothingEmbedded = errors.New("bench: no document could be embedded")

// progress follows the documents of a trial, so that a corpus from which
// nothing can be embedded ends the trial after one pass over it instead of
// being cycled through forever.
type progress struct {
	tokens *atomic.Int64 // the run's pipeline.Stats.Tokens
	files  []reader.File

	mu       sync.Mutex
	done     int64  // documents completed, ingested or failed
	firstErr error  // the error of the failed document first by id, with its id
	firstID  string // that document's id
	notify   chan struct{}
}

func newProgress(tokens *atomic.Int64, files []reader.File) *progress {
	return &progress{tokens: tokens, files: files, notify: make(chan struct{}, 1)}
}

// onDocument is the run's pipeline.Options.OnDocument: it counts the
// document and keeps the error of the failed document first by id, so that
// the message does not depend on which document the pipeline finished
// first.
func (p *progress) onDocument(_ context.Context, d pipeline.DocumentResult) error {
	p.mu.Lock()
	p.done++
	if d.Err != nil && (p.firstErr == nil || d.File.ID < p.firstID) {
		p.firstErr, p.firstID = fmt.Errorf("%s: %w", d.File.ID, d.Err), d.File.ID
	}
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default: // the waiter has a wake-up pending already
	}
	return nil
}

// endOfPass is cycle's hook. Once a token has been embedded it returns at
// once. Before that, it waits until the yielded documents have completed
// (or a token is embedded) and then, if still no token was embedded, ends
// the source with an error wrapping ErrNothingEmbedded.
func (p *progress) endOfPass(ctx context.Context, yielded int64) error {
	for p.tokens.Load() == 0 {
		p.mu.Lock()
		done, firstErr := p.done, p.firstErr
		p.mu.Unlock()
		if done >= yielded {
			if p.tokens.Load() > 0 {
				return nil
			}
			return p.nothingEmbedded(firstErr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.notify:
		}
	}
	return nil
}

func (p *progress) nothingEmbedded(firstErr error) error {
	why := "every document held no text to embed (are the files empty?)"
	if firstErr != nil {
		why = "the first document error: " + firstErr.Error()
	}
	files := fmt.Sprintf("its %d files", len(p.files))
	if len(p.files) == 1 {
		files = "its one file"
	}
	return fmt.Errorf("%w from %s: a whole pass over %s embedded no token; %s. Check that source.include selects text files that can be read and embedded",
		ErrNothingEmbedded, corpusDir(p.files), files, why)
}

// corpusDir is the folder the files were found in: a file's Path is the
// root joined with its ID.
func corpusDir(files []reader.File) string {
	if len(files) == 0 {
		return "the corpus"
	}
	f := files[0]
	dir := strings.TrimSuffix(f.Path, filepath.FromSlash(f.ID))
	if dir == f.Path {
		return filepath.Dir(f.Path)
	}
	if d := strings.TrimRight(dir, `/\`); d != "" {
		return d
	}
	if dir == "" {
		return "."
	}
	return dir // the file system root
}
