package pipeline

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// TestOptionsOutOfRange: options too large for memory are refused, naming
// the option, its setting and the allowed range, before any channel or
// worker is made (they used to panic in makechan or exhaust memory).
func TestOptionsOutOfRange(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Options)
		want string // "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"largest batch", func(o *Options) { o.BatchSize = MaxBatchSize }, ""},
		{"largest split concurrency", func(o *Options) { o.SplitConcurrency = MaxSplitConcurrency }, ""},
		{"batch of max int", func(o *Options) { o.BatchSize = math.MaxInt }, "Options.BatchSize (embedder.batchSize)"},
		{"batch of 10^12", func(o *Options) { o.BatchSize = 1e12 }, "Options.BatchSize (embedder.batchSize)"},
		{"batch just above", func(o *Options) { o.BatchSize = MaxBatchSize + 1 }, "Options.BatchSize (embedder.batchSize)"},
		{"split concurrency of 10^12", func(o *Options) { o.SplitConcurrency = 1e12 }, "Options.SplitConcurrency (pipeline.splitConcurrency)"},
		{"embed concurrency of 10^12", func(o *Options) { o.EmbedConcurrency = 1e12 }, "Options.EmbedConcurrency (embedder.concurrency)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, map[string]string{"a.md": "Alpha text."})
			o := in.options()
			tt.mod(&o)
			rep, err := Run(context.Background(), o)
			if tt.want == "" {
				if err != nil || rep.FilesIngested != 1 {
					t.Fatalf("Run = %+v, %v", rep, err)
				}
				return
			}
			var ce *ConfigError
			if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Setting != tt.want {
				t.Fatalf("Run = %v, want a *ConfigError naming %s", err, tt.want)
			}
			if !strings.Contains(err.Error(), "between 1 and") {
				t.Errorf("message %q does not give the allowed range", err)
			}
			if in.emb.requests != 0 {
				t.Error("the run embedded before refusing its options")
			}
		})
	}
}

// TestChannelsDoNotGrowWithBatchSize: the queues between the stages do not
// grow with the batch size, and stay small whatever the number of workers.
func TestChannelsDoNotGrowWithBatchSize(t *testing.T) {
	for _, o := range []Options{
		{BatchSize: 1, SplitConcurrency: 1, EmbedConcurrency: 1},
		{BatchSize: 100, SplitConcurrency: 8, EmbedConcurrency: 4},
		{BatchSize: MaxBatchSize, SplitConcurrency: MaxSplitConcurrency, EmbedConcurrency: MaxEmbedConcurrency},
	} {
		files, chunks, batches := o.queues()
		if files > fileQueue || chunks > chunkQueue || batches > MaxEmbedConcurrency {
			t.Errorf("batch size %d, %d splitters, %d embedders: queues of %d files, %d chunks, %d batches",
				o.BatchSize, o.SplitConcurrency, o.EmbedConcurrency, files, chunks, batches)
		}
	}
	in := newIncr(t, corpus(3))
	rep := in.run(func(o *Options) { o.BatchSize, o.SplitConcurrency = MaxBatchSize, MaxSplitConcurrency })
	if rep.FilesIngested != 3 {
		t.Errorf("report %+v", rep)
	}
	in.assertEqualsCleanRun()
}

// dimsStore is a memStore that holds vectors of dims dimensions
// (DimensionChecker).
type dimsStore struct {
	*memStore
	dims int
}

func (s dimsStore) CheckDimensions(_ context.Context, dims int) error {
	if s.dims != 0 && dims != s.dims {
		return &sink.DimensionError{Want: s.dims, Got: dims}
	}
	return nil
}

// TestStoreDimensionsCheckedBeforeEmbedding: a store that holds vectors of
// other dimensions stops the run before the first embedding request, with
// --full too (which cannot change a store's dimensions).
func TestStoreDimensionsCheckedBeforeEmbedding(t *testing.T) {
	for _, tt := range []struct {
		name      string
		dims      int
		full, dry bool
		wantErr   bool
	}{
		{"same dimensions", 8, false, false, false},
		{"empty store", 0, false, false, false},
		{"other dimensions", 16, false, false, true},
		{"other dimensions, full", 16, true, false, true},
		{"other dimensions, dry run", 16, false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newIncr(t, corpus(2))
			_, err := Run(context.Background(), func() Options {
				o := in.options()
				o.Store = dimsStore{in.store, tt.dims}
				o.Full, o.DryRun = tt.full, tt.dry
				return o
			}())
			if got := errors.Is(err, sink.ErrDimensionMismatch); got != tt.wantErr {
				t.Fatalf("Run = %v; want a dimension mismatch: %v", err, tt.wantErr)
			}
			if tt.wantErr && (in.emb.requests != 0 || len(in.store.nodes) != 0) {
				t.Errorf("%d embedding requests and %d nodes written before the refusal", in.emb.requests, len(in.store.nodes))
			}
		})
	}
}
