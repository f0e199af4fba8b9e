package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// ErrNoFiles is returned when the corpus holds no file to benchmark with.
var ErrNoFiles = errors.New("bench: no files to benchmark with")

// Corpus lists the files cfg selects, skipping files that cannot be read.
// It returns an error wrapping ErrNoFiles when there are none, and one
// wrapping ctx.Err() when ctx is done.
func Corpus(ctx context.Context, cfg reader.Config) ([]reader.File, error) {
	var files []reader.File
	err := reader.Walk(ctx, cfg, func(f reader.File, err error) error {
		if err == nil {
			files = append(files, f)
		}
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, &interruptedError{"bench: interrupted while listing the corpus", ctx.Err()}
	case err != nil:
		return nil, fmt.Errorf("bench: listing the corpus: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: nothing in %s matches source.include; pass another DIR or check source.include and source.exclude", ErrNoFiles, cfg.Dir)
	}
	return files, nil
}

// cycle is a pipeline.FileSource that yields files again and again until
// ctx is done, so that a trial measures steady state and never the tail of
// a run. Re-ingested documents overwrite their earlier nodes. After each
// pass it calls endOfPass (if not nil) with the number of files yielded so
// far; an error from it ends the source, so that a corpus from which
// nothing can be embedded is not fed to the pipeline forever.
func cycle(files []reader.File, endOfPass func(ctx context.Context, yielded int64) error) pipeline.FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		var yielded int64
		for {
			for _, f := range files {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := fn(f, nil); err != nil {
					return err
				}
				yielded++
			}
			if endOfPass != nil {
				if err := endOfPass(ctx, yielded); err != nil {
					return err
				}
			}
		}
	}
}
