package bench

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

// SampleBytes is how much of the corpus `sluice bench` splits to learn the
// size of its chunks (Harness.ChunkTokens): about what a trial at a quota
// of a million tokens a minute embeds in a minute, split in a fraction of
// a second.
const SampleBytes = 1 << 20

// ChunkTokens returns the mean tokens of the chunks the pipeline cuts from
// the corpus's first files, up to maxBytes of them (a file larger than
// what is left is skipped), found by a dry run of h.Pipeline: the chunks
// a trial, which feeds the corpus from its first file, embeds first. It is
// what Workload.TokensPerChunk needs. It returns 0 when no file fits or the
// sample gives no chunk.
func (h *Harness) ChunkTokens(ctx context.Context, maxBytes int64) (float64, error) {
	var sample []reader.File
	left := maxBytes
	for _, f := range h.Files {
		if f.Size <= left {
			sample = append(sample, f)
			left -= f.Size
		}
	}
	if len(sample) == 0 {
		return 0, nil
	}
	po := h.Pipeline
	po.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, f := range sample {
			if err := fn(f, nil); err != nil {
				return err
			}
		}
		return nil
	}
	po.DryRun, po.Embedder, po.Store, po.State, po.Full, po.Prescan = true, nil, nil, nil, false, false
	po.Stats, po.OnDocument = nil, nil
	rep, err := pipeline.Run(ctx, po)
	if err != nil {
		return 0, fmt.Errorf("bench: splitting a sample of the corpus: %w", err)
	}
	if rep.ChunksPlanned == 0 {
		return 0, nil
	}
	return float64(rep.TokensPlanned) / float64(rep.ChunksPlanned), nil
}
