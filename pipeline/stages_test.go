package pipeline

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

// addSignal is a memStore that closes added on its first Add.
type addSignal struct {
	*memStore
	added chan struct{}
	once  sync.Once
}

func (s *addSignal) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	ids, err := s.memStore.Add(ctx, nodes)
	s.once.Do(func() { close(s.added) })
	return ids, err
}

// TestPartialBatchIsSentAfterMaxWait checks that a batch far from full is
// embedded and written once no chunk has come for MaxWait, while the source
// is still open (as in watch mode), not only when the source ends.
func TestPartialBatchIsSentAfterMaxWait(t *testing.T) {
	const limit = 10 * time.Second
	tests := []struct {
		name    string
		body    string
		maxWait time.Duration
	}{
		{name: "one chunk", body: "A single short sentence.", maxWait: 5 * time.Millisecond},
		{name: "several chunks, default MaxWait", body: paragraphText("trickle", 12)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const batchSize = 100
			want := len(newSplitter(t, 64, 8).Split(tt.body))
			if want == 0 || want >= batchSize {
				t.Fatalf("a.md gives %d chunks; the test needs a partly filled batch", want)
			}
			root := writeTree(t, map[string]string{"a.md": tt.body})
			store := &addSignal{memStore: newMemStore(), added: make(chan struct{})}
			opts := baseOptions(t, root, &fakeEmbedder{dims: 4}, store)
			opts.BatchSize = batchSize
			opts.MaxWait = tt.maxWait
			// The source lists the folder, then waits for more files, as
			// watch mode does, until it is released.
			release := make(chan struct{})
			walk := opts.Reader
			opts.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
				if err := reader.Walk(ctx, walk, fn); err != nil {
					return err
				}
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			ingested := make(chan DocumentResult)
			opts.OnDocument = func(ctx context.Context, d DocumentResult) error {
				select {
				case ingested <- d:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}

			type result struct {
				rep *Report
				err error
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan result, 1)
			go func() {
				rep, err := Run(ctx, opts)
				done <- result{rep, err}
			}()
			returned := false
			defer func() {
				cancel()
				if returned {
					return
				}
				select {
				case <-done:
				case <-time.After(limit):
					t.Errorf("Run did not stop within %v of cancellation", limit)
				}
			}()

			select {
			case <-store.added:
			case res := <-done:
				returned = true
				t.Fatalf("Run returned (%v) while its source was still open", res.err)
			case <-time.After(limit):
				t.Fatalf("nothing was written within %v while the source stayed open: a partly filled batch must be sent after MaxWait", limit)
			}
			select {
			case d := <-ingested:
				if d.File.ID != "a.md" || d.Err != nil || d.Chunks != want {
					t.Errorf("document result = %s, %d chunks, err %v; want a.md, %d chunks, no error", d.File.ID, d.Chunks, d.Err, want)
				}
			case <-time.After(limit):
				t.Fatalf("a.md was not completed within %v while the source stayed open", limit)
			}
			if n := len(store.byDoc()["a.md"]); n != want {
				t.Errorf("store holds %d nodes of a.md before the source ended, want %d", n, want)
			}

			close(release)
			select {
			case res := <-done:
				returned = true
				if res.err != nil {
					t.Fatalf("Run: %v", res.err)
				}
				if res.rep.FilesIngested != 1 || res.rep.ChunksWritten != want {
					t.Errorf("report: %d files ingested, %d chunks written; want 1 and %d", res.rep.FilesIngested, res.rep.ChunksWritten, want)
				}
			case <-time.After(limit):
				t.Fatalf("Run did not finish within %v of its source's end", limit)
			}
		})
	}
}

// tokenRecorder is a fakeEmbedder that records, for each Embed call in
// order, the token counts of its inputs.
type tokenRecorder struct {
	*fakeEmbedder
	mu    sync.Mutex
	calls [][]int
}

func (e *tokenRecorder) Embed(ctx context.Context, in []embedder.Input) ([][]float32, error) {
	tokens := make([]int, len(in))
	for i, x := range in {
		tokens[i] = x.Tokens
	}
	e.mu.Lock()
	e.calls = append(e.calls, tokens)
	e.mu.Unlock()
	return e.fakeEmbedder.Embed(ctx, in)
}

// sumTokens returns the tokens of one embedding request.
func sumTokens(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestMaxBatchTokensCapsEmbeddingRequests checks that no embedding request
// holds more than MaxBatchTokens tokens, except a single chunk larger than
// the cap, which is sent alone; that batches are filled up to the cap; and
// that 0 means no cap.
func TestMaxBatchTokensCapsEmbeddingRequests(t *testing.T) {
	files := map[string]string{
		"a.md": paragraphText("alpha", 12),
		"b.md": "A single short sentence.",
		"c.md": paragraphText("beta", 3),
	}
	sp := newSplitter(t, 64, 8)
	var chunkTokens []int
	for _, body := range files {
		for _, c := range sp.Split(body) {
			chunkTokens = append(chunkTokens, c.Tokens)
		}
	}
	slices.Sort(chunkTokens)
	tests := []struct {
		name      string
		cap       int
		oversized bool // some chunk has more tokens than the cap
	}{
		{name: "no cap", cap: 0},
		{name: "several chunks a request", cap: 200},
		{name: "chunks fitting the cap exactly", cap: 2 * 48},
		{name: "cap below the largest chunk", cap: 50, oversized: true},
		{name: "cap below every chunk", cap: 1, oversized: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if over := tt.cap > 0 && chunkTokens[len(chunkTokens)-1] > tt.cap; over != tt.oversized {
				t.Fatalf("chunk tokens %v: a chunk over the cap %d is %t, the case needs %t", chunkTokens, tt.cap, over, tt.oversized)
			}
			emb := &tokenRecorder{fakeEmbedder: &fakeEmbedder{dims: 4}}
			store := newMemStore()
			opts := baseOptions(t, writeTree(t, files), emb, store)
			opts.MaxBatchTokens = tt.cap
			// Only the cap, and the end of the chunks, end a batch. The
			// chunks come in walk order (a.md's 64, 48, 48, 32 tokens
			// first), and one worker embeds the batches in the order they
			// were made.
			opts.BatchSize = 1000
			opts.MaxWait = time.Hour
			opts.SplitConcurrency = 1
			opts.EmbedConcurrency = 1
			rep, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.FilesIngested != len(files) || rep.ChunksWritten != len(chunkTokens) {
				t.Errorf("report: %d files ingested, %d chunks written, failures %v; want %d and %d",
					rep.FilesIngested, rep.ChunksWritten, rep.Failures, len(files), len(chunkTokens))
			}

			emb.mu.Lock()
			calls := slices.Clone(emb.calls)
			emb.mu.Unlock()
			var sent []int
			for _, c := range calls {
				sent = append(sent, c...)
			}
			slices.Sort(sent)
			if !slices.Equal(sent, chunkTokens) {
				t.Fatalf("embedded chunks of %v tokens, want each chunk once: %v", sent, chunkTokens)
			}
			if tt.cap == 0 {
				if len(calls) != 1 {
					t.Errorf("without a cap, %d requests %v; want all chunks in one", len(calls), calls)
				}
				return
			}
			alone := 0
			for i, c := range calls {
				if sumTokens(c) <= tt.cap {
					continue
				}
				if len(c) > 1 {
					t.Errorf("request %d holds %d chunks, %d tokens: over the cap %d", i, len(c), sumTokens(c), tt.cap)
				} else {
					alone++
				}
			}
			overCap := 0
			for _, n := range chunkTokens {
				if n > tt.cap {
					overCap++
				}
			}
			if alone != overCap {
				t.Errorf("%d requests of one chunk over the cap %d, want %d (one per such chunk): %v", alone, tt.cap, overCap, calls)
			}
			for i := range len(calls) - 1 {
				if next := calls[i+1][0]; sumTokens(calls[i])+next <= tt.cap {
					t.Errorf("request %d was sent with %d tokens though the next chunk (%d tokens) fit under the cap %d: %v", i, sumTokens(calls[i]), next, tt.cap, calls)
				}
			}
		})
	}
}
