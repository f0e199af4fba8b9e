package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

var errNotText = errors.New("not text")

// TestProgressEndOfPass checks the check cycle runs after each pass: it
// lets the next pass start once a token was embedded, waits for the pass's
// documents otherwise, and then ends the source with ErrNothingEmbedded
// naming the folder and the first document error.
func TestProgressEndOfPass(t *testing.T) {
	files := []reader.File{{ID: "a.md", Path: "/corpus/a.md"}, {ID: "sub/b.md", Path: "/corpus/sub/b.md"}}
	tests := []struct {
		name      string
		tokens    int64
		completed []error // documents completed before the check, by their error
		later     []error // completed while the check waits
		cancel    bool
		want      error
		wantText  []string
	}{
		{"a token: next pass", 10, nil, nil, false, nil, nil},
		{"no token, all done, failed", 0, []error{errNotText, nil}, nil, false, ErrNothingEmbedded, []string{"/corpus", "2 files", "a.md: not text"}},
		{"no token, all done, empty", 0, []error{nil, nil}, nil, false, ErrNothingEmbedded, []string{"no text to embed"}},
		{"waits for the pass", 0, []error{nil}, []error{errNotText}, false, ErrNothingEmbedded, []string{"sub/b.md: not text"}},
		{"cancelled while waiting", 0, []error{nil}, nil, true, context.Canceled, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tokens atomic.Int64
			tokens.Store(tt.tokens)
			p := newProgress(&tokens, files)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			complete := func(i int, err error) {
				_ = p.onDocument(ctx, pipeline.DocumentResult{File: files[i%len(files)], Err: err})
			}
			for i, err := range tt.completed {
				complete(i, err)
			}
			done := make(chan error, 1)
			go func() { done <- p.endOfPass(ctx, int64(len(files))) }()
			for i, err := range tt.later {
				complete(len(tt.completed)+i, err)
			}
			if tt.cancel {
				cancel()
			}
			err := <-done
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("endOfPass() = %v, want %v", err, tt.want)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestNothingEmbeddedOneFile checks the message's grammar for a corpus of
// a single file: "its one file", not "its 1 files".
func TestNothingEmbeddedOneFile(t *testing.T) {
	var tokens atomic.Int64
	p := newProgress(&tokens, []reader.File{{ID: "a.md", Path: "/corpus/a.md"}})
	_ = p.onDocument(t.Context(), pipeline.DocumentResult{File: p.files[0]})
	err := p.endOfPass(t.Context(), 1)
	if !errors.Is(err, ErrNothingEmbedded) || !strings.Contains(err.Error(), "a whole pass over its one file embedded") {
		t.Errorf("endOfPass() = %v, want ErrNothingEmbedded over its one file", err)
	}
}

// TestCycleStopsAtEndOfPass checks that cycle yields each file once per
// pass and ends when endOfPass fails, instead of looping over files that
// all fail.
func TestCycleStopsAtEndOfPass(t *testing.T) {
	files := []reader.File{{ID: "a.md"}, {ID: "b.md"}, {ID: "c.md"}}
	stop := errors.New("stop")
	var passes []int64
	var yields int
	err := cycle(files, func(_ context.Context, yielded int64) error {
		passes = append(passes, yielded)
		if len(passes) == 2 {
			return stop
		}
		return nil
	})(t.Context(), func(reader.File, error) error { yields++; return nil })
	if !errors.Is(err, stop) || yields != 6 || len(passes) != 2 || passes[0] != 3 || passes[1] != 6 {
		t.Errorf("cycle() = %v after %d files and passes %v; want stop after 6 files and passes [3 6]", err, yields, passes)
	}
}
