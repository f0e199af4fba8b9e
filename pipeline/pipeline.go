// Package pipeline wires Sluice's stages: read → split → batch → embed →
// write. Stages are joined by bounded channels and run fixed pools of
// workers, so a run's memory stays flat however large the corpus is: a byte
// budget is taken when a document is read and given back when its last chunk
// is written, and files larger than a threshold are split as a stream.
//
// A document counts as ingested only when every one of its chunks is in the
// store. A bad document (unreadable, not text, rejected by the embedder or
// the store) fails alone and is listed in the run's Report; the run goes on.
// Errors that concern every document — a cancelled context, a dimension
// mismatch, an embedder that refuses the credentials, a store that cannot
// write — stop the run.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/semaphore"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/splitter"
)

// Writer is the part of a vector store the pipeline writes to. If it also
// implements sink.MetadataUpdater, incremental runs rewrite the metadata of
// unchanged chunks instead of embedding them again.
type Writer interface {
	Add(ctx context.Context, nodes []sink.Node) ([]string, error)
	DeleteNodes(ctx context.Context, ids []string) error
	Delete(ctx context.Context, refDocID string) error
}

// VectorSource lends vectors embedded before: Vectors returns those it
// holds of the chunk texts keys (TextKey) for the embedder model
// (state.Embedder.Key), leaving out the others. It is called from several
// goroutines at once.
type VectorSource interface {
	Vectors(model string, keys []string) map[string][]float32
}

// FileSource produces the files of a run: it calls fn for each file, or for
// each per-file problem with a non-nil error, and stops when fn returns an
// error. reader.Walk bound to a reader.Config is the usual source; watch
// mode feeds the files named by file-system events.
type FileSource func(ctx context.Context, fn func(reader.File, error) error) error

// Defaults of Options.
const (
	DefaultBatchSize        = 100
	DefaultEmbedConcurrency = 4
	DefaultMaxWait          = 50 * time.Millisecond
	DefaultMemoryBudget     = 64 << 20
)

// Upper bounds of Options, which Run refuses to exceed with a *ConfigError:
// each worker, and each chunk of a batch, holds memory, and larger values
// gain no throughput.
const (
	// MaxBatchSize is embedder.MaxBatchSize, the largest embedding request.
	MaxBatchSize = embedder.MaxBatchSize
	// MaxEmbedConcurrency is embedder.MaxConcurrency.
	MaxEmbedConcurrency = embedder.MaxConcurrency
	// MaxSplitConcurrency bounds the documents read and split at once; the
	// default, GOMAXPROCS, is capped at it.
	MaxSplitConcurrency = 1024
)

// Queue lengths between the stages. They do not grow with the batch size:
// a queue only decouples its two stages, and the batcher, not the queue,
// gathers a batch.
const (
	fileQueue  = 64  // at most this many files walked ahead of the splitters
	chunkQueue = 256 // chunks split ahead of the batcher
)

// queues returns the lengths of the queues of files, chunks and batches.
// The batch queue holds one batch per embedding worker, whose count
// validate bounds.
func (o *Options) queues() (files, chunks, batches int) {
	return min(2*o.SplitConcurrency, fileQueue), chunkQueue, o.EmbedConcurrency
}

// Options configure a run.
type Options struct {
	// Source lists the files to ingest; default: reader.Walk over Reader.
	Source FileSource
	// Reader selects files when Source is nil; its zero value is invalid.
	Reader reader.Config
	// Splitter cuts documents into chunks. Required.
	Splitter *splitter.Splitter
	// Embedder embeds chunks. Required unless DryRun.
	Embedder embedder.Embedder
	// Store receives the nodes. Required unless DryRun; a dry run writes
	// nothing to it and only reads it: with Verify it asks which recorded
	// nodes the store holds (NodeChecker), and with Full or Verify it lists
	// a NodeScanner store, to plan the removal of documents whose files
	// are gone and of chunks the manifest does not list.
	Store Writer
	// BatchSize is the number of chunks per embedding request (default 100).
	BatchSize int
	// MaxBatchTokens caps the tokens of one embedding request (0: no cap).
	MaxBatchTokens int
	// MaxWait is how long a partly filled batch waits for more chunks
	// before it is sent (default 50ms).
	MaxWait time.Duration
	// EmbedConcurrency is the number of embedding requests in flight (default
	// 4; at most GOMAXPROCS with a local embedder such as embedder.Hash).
	EmbedConcurrency int
	// SplitConcurrency is the number of documents read and split at once
	// (default GOMAXPROCS).
	SplitConcurrency int
	// MemoryBudget bounds the bytes of source text held in memory at once
	// (default 64 MiB).
	MemoryBudget int64
	// StreamThreshold is the file size above which a document is split as a
	// stream in windows instead of read whole (default MemoryBudget/32). The
	// document's "document split" debug log says which with "streamed".
	StreamThreshold int64
	// DryRun reads and splits but neither embeds nor writes; the report
	// gives the plan: documents to add, update and delete, and the chunks
	// and tokens a real run would embed.
	DryRun bool
	// PlanCopies tells a dry run without a Store (one that only plans)
	// that the store a run would write to reads vectors back (a
	// VectorReader): its plan then counts the chunks whose text a
	// committed node holds as copied (Report.ChunksCopied), not as to
	// embed. A dry run with a Store asks the Store.
	PlanCopies bool
	// State, if set, makes the run incremental: unchanged documents are
	// skipped, only new chunks are embedded, stale chunks and the chunks of
	// deleted sources are removed, and failures go to the dead-letter table.
	State *state.Store
	// EmbedderInfo identifies the embedder for State, which refuses a run whose
	// embedder differs from the one the index was built with (unless Full).
	EmbedderInfo state.Embedder
	// Full re-embeds every document, even unchanged ones. With State, each
	// document's earlier nodes that it does not write again are deleted,
	// also those the manifest does not know of (left by a lost or emptied
	// state file): after its new ones are acknowledged if the store is a
	// NodeLister, else before they are written (Writer.Delete by its id);
	// and if the store is a NodeScanner, its nodes are listed once instead
	// of once per document, and the nodes of documents whose files are
	// gone are deleted even when the manifest does not know them.
	Full bool
	// Verify checks, before a whole-folder run (Source nil) with State
	// walks the folder, that the store holds every node the manifest
	// records: a document with nodes missing is not taken as unchanged,
	// and its chunks that are missing are embedded and written again
	// while those still stored are kept (see NodeChecker, which the store
	// must implement). It also lists a NodeScanner store's nodes, as
	// Full does, so that documents whose files are gone are deleted even
	// when the manifest does not know them, and so that a recorded
	// document's nodes the manifest does not list (written behind its
	// back) are deleted: the document is read again, and they go with its
	// stale chunks. Report.Verify says what it found.
	// In a dry run it plans the writes. Unneeded with Full.
	Verify bool
	// KeepVanished fails a document whose file vanished after the source
	// listed it (reader.ErrVanished) and is still gone, as other unreadable
	// files fail, keeping its nodes. By default, with State, such a
	// document is deleted instead, as a walk that no longer lists it would
	// delete it: an rm -rf or a branch switch running during the walk
	// leaves no failures behind. A source that names files rather than
	// listing a folder, whose folder may not be the one the documents came
	// from (`sluice failed retry DIR`), sets it.
	KeepVanished bool
	// PricePerMillionTokens, if set, gives the report's estimated cost.
	PricePerMillionTokens float64
	// Prescan walks the source once more, concurrently, to fill
	// Stats.FilesTotal and BytesTotal for progress and ETA displays.
	Prescan bool
	// Vectors, if set, is asked for the vectors of the chunks to embed
	// before the embedder is (with State): a chunk whose text it knows, for
	// this embedder, is not embedded again (and its tokens are not counted
	// as embedded). A watch lends the vectors of the documents it removed
	// lately, so that a file or folder that comes back, or is renamed, is
	// not paid for twice.
	Vectors VectorSource
	// Stats, if set, receives live counters.
	Stats *Stats
	// Logger receives debug logs of document processing and embedding calls
	// (default: discard).
	Logger *slog.Logger
	// OnDocument, if set, is called once per document when it completes,
	// successfully or not, before the report counts it. An error stops the run.
	OnDocument func(ctx context.Context, d DocumentResult) error
}

// DocumentResult is the outcome of one document.
type DocumentResult struct {
	File   reader.File
	Hash   string // hex SHA-256 of the source bytes ("" if never read whole)
	Chunks int    // chunks emitted by the splitter
	Err    error  // nil when every chunk was written, or when Deleted
	// Deleted reports a document whose file vanished while the run read
	// it: its nodes were deleted (see Options.KeepVanished).
	Deleted bool
}

func (o *Options) applyDefaults() {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.EmbedConcurrency <= 0 {
		o.EmbedConcurrency = DefaultEmbedConcurrency
	}
	if IsLocal(o.Embedder) {
		// A local embedder computes on the cores: more workers than cores
		// only hold more batches in memory.
		o.EmbedConcurrency = min(o.EmbedConcurrency, runtime.GOMAXPROCS(0))
	}
	if o.SplitConcurrency <= 0 {
		o.SplitConcurrency = min(runtime.GOMAXPROCS(0), MaxSplitConcurrency)
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.StreamThreshold <= 0 {
		o.StreamThreshold = o.MemoryBudget / 32
	}
	if o.Stats == nil {
		o.Stats = new(Stats)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Source == nil {
		cfg := o.Reader
		o.Source = func(ctx context.Context, fn func(reader.File, error) error) error {
			return reader.Walk(ctx, cfg, fn)
		}
	}
}

// validate checks the options, defaults applied; an option out of range is
// a *ConfigError naming it and the allowed range.
func (o *Options) validate() error {
	for _, c := range []struct {
		setting string
		v, most int
		def     string
	}{
		{"Options.BatchSize (embedder.batchSize)", o.BatchSize, MaxBatchSize, strconv.Itoa(DefaultBatchSize)},
		{"Options.EmbedConcurrency (embedder.concurrency)", o.EmbedConcurrency, MaxEmbedConcurrency, strconv.Itoa(DefaultEmbedConcurrency)},
		{"Options.SplitConcurrency (pipeline.splitConcurrency)", o.SplitConcurrency, MaxSplitConcurrency, "one per core"},
	} {
		if err := checkRange(c.setting, c.v, c.most, c.def); err != nil {
			return err
		}
	}
	switch {
	case o.Splitter == nil:
		return errors.New("pipeline: Options.Splitter is required")
	case o.Verify && o.State == nil:
		return errors.New("pipeline: Options.Verify needs Options.State: without a manifest every document is written anyway")
	case o.Verify && !CanVerify(o.Store):
		return fmt.Errorf("pipeline: Options.Verify needs a store that can tell which nodes it holds (NodeChecker); %T cannot", o.Store)
	case o.DryRun:
		return nil
	case o.Embedder == nil:
		return errors.New("pipeline: Options.Embedder is required")
	case o.Store == nil:
		return errors.New("pipeline: Options.Store is required")
	}
	return nil
}

// Run ingests the files of opts.Source and returns the run's report. Once
// the run has started, the report is returned even with an error, counting
// what was done before the run stopped. Per-document failures are not errors: they are listed in
// Report.Failures.
func Run(ctx context.Context, opts Options) (*Report, error) {
	fullWalk := opts.Source == nil
	if opts.Verify && !fullWalk {
		return nil, errors.New("pipeline: Options.Verify applies to a run over the whole folder (Options.Source nil)")
	}
	opts.applyDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := &run{
		opts:     opts,
		budget:   semaphore.NewWeighted(opts.MemoryBudget),
		report:   &Report{DryRun: opts.DryRun, Failures: []Failure{}},
		seen:     make(map[string]bool),
		fullWalk: fullWalk,
		rewrite:  opts.Full,
		racyFrom: time.Now().Add(-racyWindow),
	}
	r.updater, _ = opts.Store.(sink.MetadataUpdater)
	r.lister, _ = opts.Store.(NodeLister)
	r.selects = opts.Reader.Matcher()
	start := time.Now()
	sr, _ := opts.Embedder.(embedder.StatsReporter)
	var before embedder.Stats
	if sr != nil {
		before = sr.Stats() // a client may serve several runs, as a watch loop's rounds
	}
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	err := r.run(ctx)
	if err == nil {
		err = r.conclude(ctx)
	}
	r.report.setDuration(time.Since(start))
	if sr != nil && !opts.DryRun {
		after := sr.Stats()
		r.report.Embedding = &EmbeddingReport{Requests: after.Requests - before.Requests,
			Throttled: after.Throttled - before.Throttled, Retries: after.Retries - before.Retries}
	}
	// The documents a stopped run did not finish leave BytesPartial, which
	// is 0 between runs (Stats may serve several, as a watch loop's rounds).
	opts.Stats.BytesPartial.Add(-r.partial.Swap(0))
	r.report.BytesRead = r.read.Load()
	if opts.PricePerMillionTokens > 0 {
		r.report.priced = true
		tokens := r.report.TokensEmbedded
		if opts.DryRun {
			tokens = r.report.TokensPlanned
		}
		r.report.EstimatedCost = float64(tokens) / 1e6 * opts.PricePerMillionTokens
	}
	slices.SortFunc(r.report.Failures, func(a, b Failure) int { return cmp.Compare(a.Path, b.Path) })
	r.report.Complete = err == nil
	if err != nil {
		r.report.Error = err.Error()
		r.report.Interrupted = ctx.Err() != nil
		if r.report.Interrupted {
			r.report.Error = "interrupted (" + r.report.Error + ") before every file was done; the store is consistent: run again to finish"
		}
	}
	return r.report, err
}

type run struct {
	opts    Options
	budget  *semaphore.Weighted
	updater sink.MetadataUpdater // nil if the store cannot update metadata alone
	lister  NodeLister           // nil if the store cannot list a document's node ids
	selects func(id string) bool // Options.Reader.Match, compiled once
	missing *missingNodes        // the nodes Verify found missing from the store; nil without Verify
	stamps  map[string]state.Stamp
	// Loaded with stamps for a whole-folder run.
	failed       map[string]bool     // documents in the dead-letter table
	storeDocs    map[string]storeDoc // reference documents in the store that the manifest does not know, for a Full or Verify run (NodeScanner)
	storeEmpty   bool                // the store held no node when the run started (EmptyReporter)
	storeSettled bool                // a lagging store was waited for once (awaitStore)
	// resplit: the splitter settings differ from those the manifest
	// recorded, so no document counts as unchanged (see prepare).
	resplit bool
	// rewrite: no document counts as unchanged and no chunk is taken as
	// stored: a Full run, or a store found empty although the manifest
	// records nodes in it (see prepare).
	rewrite bool
	// racyFrom: files modified after it are recorded with racyModTime
	// (see recordedTimes).
	racyFrom time.Time

	mu          sync.Mutex
	report      *Report
	seen        map[string]bool // recorded document ids the source produced (see recorded)
	failedDirs  []string        // folders the walk could not read
	fullWalk    bool            // the source is the whole folder: missing documents are deleted
	pendingOnly map[string]bool // documents with pending chunks but no record
	unsettled   map[string]bool // recorded documents with pending chunks (state.Store.Unsettled): never unchanged
	model       string          // EmbedderInfo.Key(), for the vector journal
	manifest    *state.Run      // this run's records in State; nil without State or in a dry run
	journal     bool            // embeddings are journalled in State until their documents commit

	// This run's shares of Stats.BytesRead and Stats.BytesPartial, which
	// other runs may share.
	read    atomic.Int64 // bytes read, for Report.BytesRead
	partial atomic.Int64 // bytes in Stats.BytesPartial of documents not finished
}

// addRead counts n bytes read, in Stats.BytesRead and Report.BytesRead.
func (r *run) addRead(n int64) {
	r.opts.Stats.BytesRead.Add(n)
	r.read.Add(n)
}

// addPartial adds n (negative when a document leaves) to Stats.BytesPartial
// and to this run's share of it.
func (r *run) addPartial(n int64) {
	r.opts.Stats.BytesPartial.Add(n)
	r.partial.Add(n)
}

// localEmbedder is implemented by embedders that compute vectors in
// process (embedder.Hash, embedder.Instant): their vectors are not worth
// journalling, and more workers than cores gain nothing.
type localEmbedder interface {
	Local() bool
}

// IsLocal reports whether e computes its vectors in process (it has a
// method Local() bool that says so, as embedder.Hash and embedder.Instant
// do): their vectors cost less to compute again than to keep or read back,
// so a run neither journals them nor copies them from the store, and a
// watch does not park them.
func IsLocal(e embedder.Embedder) bool {
	l, ok := e.(localEmbedder)
	return ok && l.Local()
}

func (r *run) run(ctx context.Context) error {
	nf, nc, nb := r.opts.queues()
	files := make(chan reader.File, nf)
	chunks := make(chan *chunk, nc)
	batches := make(chan []*chunk, nb)

	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError()
	if r.opts.Prescan {
		p.Go(r.prescan)
	}
	p.Go(func(ctx context.Context) error { return r.walk(ctx, files) })
	p.Go(func(ctx context.Context) error {
		return stage(ctx, r.opts.SplitConcurrency, files, chunks, r.split)
	})
	if r.opts.DryRun {
		p.Go(func(ctx context.Context) error { return drain(ctx, chunks) })
		return p.Wait()
	}
	p.Go(func(ctx context.Context) error { return r.batch(ctx, chunks, batches) })
	// Each embedding worker writes its own batch as soon as it is embedded:
	// no queue of embedded-but-unwritten vectors, so memory stays low and
	// a killed run loses at most the requests in flight.
	p.Go(func(ctx context.Context) error {
		return stage(ctx, r.opts.EmbedConcurrency, batches, nil, func(ctx context.Context, b []*chunk, _ func(struct{}) error) error {
			return r.embed(ctx, b, func(b []*chunk) error { return r.write(ctx, b) })
		})
	})
	return p.Wait()
}

// stage runs n workers that apply fn to every value of in until in is
// closed, then closes out (if any). fn may emit values on out.
func stage[In, Out any](ctx context.Context, n int, in <-chan In, out chan<- Out, fn func(context.Context, In, func(Out) error) error) error {
	if out != nil {
		defer close(out)
	}
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError()
	for range n {
		p.Go(func(ctx context.Context) error {
			// Sends select on the worker's ctx, which a failing sibling
			// cancels too.
			emit := func(v Out) error { return send(ctx, out, v) }
			for {
				v, ok, err := recv(ctx, in)
				if err != nil || !ok {
					return err
				}
				if err := fn(ctx, v, emit); err != nil {
					return err
				}
			}
		})
	}
	return p.Wait()
}

func send[T any](ctx context.Context, ch chan<- T, v T) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func recv[T any](ctx context.Context, ch <-chan T) (T, bool, error) {
	select {
	case v, ok := <-ch:
		return v, ok, nil
	case <-ctx.Done():
		var zero T
		return zero, false, ctx.Err()
	}
}

func drain[T any](ctx context.Context, ch <-chan T) error {
	for {
		_, ok, err := recv(ctx, ch)
		if err != nil || !ok {
			return err
		}
	}
}

func (r *run) prescan(ctx context.Context) error {
	var n, bytes int64
	err := r.opts.Source(ctx, func(f reader.File, err error) error {
		// A per-file problem counts too: the walk reports it as a
		// document done and failed.
		n++
		if err == nil {
			bytes += f.Size
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.opts.Stats.FilesTotal.Store(n)
	r.opts.Stats.BytesTotal.Store(bytes)
	r.opts.Stats.ScanDone.Store(true)
	return nil
}

// recorded reports whether the manifest, as loaded for a whole-folder run,
// knows a document: only those can be missing at the end, so only those
// are remembered as seen, and a first run over a huge folder keeps no
// per-file set.
func (r *run) recorded(id string) bool {
	_, ok := r.stamps[id]
	_, stored := r.storeDocs[id]
	return ok || stored || r.pendingOnly[id] || r.failed[id]
}

func (r *run) walk(ctx context.Context, out chan<- reader.File) error {
	defer close(out)
	return r.opts.Source(ctx, func(f reader.File, err error) error {
		r.opts.Stats.FilesSeen.Add(1)
		r.mu.Lock()
		r.report.FilesSeen++
		if r.recorded(f.ID) {
			r.seen[f.ID] = true
		}
		if err != nil && isDirError(err) {
			r.failedDirs = append(r.failedDirs, f.ID)
		}
		r.mu.Unlock()
		if err != nil {
			return r.finish(ctx, &document{file: f, err: err, sealed: true, finished: true})
		}
		return send(ctx, out, f)
	})
}

// split reads one file and emits its chunks, or skips it if unchanged.
func (r *run) split(ctx context.Context, f reader.File, emit func(*chunk) error) error {
	hold := r.holdFor(f.Size)
	if err := r.budget.Acquire(ctx, hold); err != nil {
		return err
	}
	d := newDocument(f, hold)
	unchanged, err := r.plan(ctx, d)
	if err != nil || unchanged {
		r.budget.Release(hold)
		if err != nil {
			return err
		}
		return r.unchanged(ctx, d)
	}
	d.clear = r.mustClear(d)
	hash, err := r.readAndSplit(ctx, d, emit)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var stop *stopError
		if errors.As(err, &stop) {
			return stop.err
		}
		d.fail(err)
	}
	if d.seal(hash) {
		return r.finish(ctx, d)
	}
	return nil
}

// unsizedPeek is how much of a file that says 0 bytes when opened is read
// before it is known whether it is split whole or as a stream.
const unsizedPeek = 64 << 10

// holdFor returns the bytes of the memory budget that a document of size
// bytes holds until it completes: its size, but at least 1 and at most half
// the budget (a larger document is split as a stream).
func (r *run) holdFor(size int64) int64 { return min(max(size, 1), r.opts.MemoryBudget/2) }

// reserve raises the memory budget d holds to holdFor(size), for a file
// larger than when it was listed. It gives back what d holds before it
// waits for the whole, as no one may hold budget while waiting for more:
// documents being split that each wait for more than is left would wait
// for each other. It is called before d emits its first chunk, so before
// anything can complete d and give its budget back.
func (r *run) reserve(ctx context.Context, d *document, size int64) error {
	want := r.holdFor(size)
	if want <= d.budget {
		return nil
	}
	r.budget.Release(d.budget)
	d.budget = 0
	if err := r.budget.Acquire(ctx, want); err != nil {
		return err
	}
	d.budget = want
	return nil
}

func (r *run) readAndSplit(ctx context.Context, d *document, emit func(*chunk) error) (_ string, err error) {
	content, err := reader.Open(d.file)
	if err != nil {
		return "", err
	}
	defer content.Close()
	defer r.countRead(d, content)
	// A dry run's plan counts the chunks a failing document would have
	// embedded before its failure, as the run would.
	defer func() {
		if ferr := r.flushPlanned(ctx, d); err == nil {
			err = ferr
		}
	}()

	n := 0
	each := func(c splitter.Chunk) error {
		if err := r.clearEarlier(ctx, d); err != nil {
			return err
		}
		r.countRead(d, content)
		n++
		r.opts.Stats.Chunks.Add(1)
		ord := d.nextOrdinal(c.Text)
		var key string
		if r.journal || r.opts.Vectors != nil {
			key = textKey(c.Text)
		}
		id := sink.NodeID(d.file.ID, c.Text, ord)
		kind := d.nodes.kind(id)
		if kind != nodeUnknown {
			d.matched++
		}
		// In the store: a node of the record, or one a dead run acknowledged.
		recorded := kind == nodeRecorded || kind == nodeRewritten
		known := recorded || kind == nodeAcked
		reuse := !r.rewrite && known
		// A chunk written by a dead run (which may have rewritten the
		// metadata of a node of the record, and died before its commit),
		// or under other metadata, gets the document's current metadata.
		update := reuse && (kind != nodeRecorded || d.prev.MetaHash != d.metaHash)
		if update && r.updater == nil && !r.planOnly() {
			reuse, update = false, false // the store cannot rewrite metadata alone: embed again
		}
		if reuse {
			d.reused++
		}
		if recorded && (update || !reuse) && !r.opts.DryRun {
			d.rewrote = true // a committed node gets this run's metadata or vector
		}
		if reuse && !update {
			// Already in the store as it is: it stays one of the
			// document's nodes.
			if err := r.keep(ctx, d, id, key); err != nil {
				return err
			}
			r.opts.Stats.ChunksSkipped.Add(1)
			d.settle(1)
			return nil
		}
		if r.opts.DryRun {
			if !reuse {
				if err := r.planChunk(ctx, d, key, c.Tokens); err != nil {
					return err
				}
			}
			r.opts.Stats.ChunksSkipped.Add(1)
			d.settle(1)
			return nil
		}
		return emit(&chunk{
			doc: d, id: id, key: key, ordinal: ord, reuse: reuse, update: update,
			text: c.Text, start: c.CharStart, end: c.CharEnd, tokens: c.Tokens,
		})
	}
	// The file may have grown since it was listed: go by its size now, and
	// read no more than the threshold whole, whatever it says; one that
	// says 0 bytes (as the files of /proc do) may hold any amount, so only
	// a first block of it. A file found to hold more is split as a stream,
	// what was read first, holding what a document may hold. While reserve
	// waits for that, the text read is held outside the budget.
	size := max(d.file.Size, content.Size())
	streamed := size > r.opts.StreamThreshold
	var text strings.Builder
	if !streamed {
		limit := r.opts.StreamThreshold
		if content.Size() == 0 {
			limit = min(limit, unsizedPeek)
		}
		// Into a string of the file's size: one copy of the text, which
		// the chunks share, and no garbage from growing buffers.
		text.Grow(int(size) + 1)
		if _, err := io.Copy(&text, io.LimitReader(content, limit+1)); err != nil {
			return "", err
		}
		size = int64(text.Len())
		if size > limit {
			streamed, size = true, r.opts.MemoryBudget
		}
	}
	if streamed {
		if err := precheck(ctx, d.file); err != nil {
			return "", err
		}
	}
	if err := r.reserve(ctx, d, size); err != nil {
		return "", err
	}
	if streamed {
		src := io.MultiReader(strings.NewReader(text.String()), content)
		if err := r.opts.Splitter.SplitReader(ctx, src, each); err != nil {
			return "", err
		}
	} else {
		for _, c := range r.opts.Splitter.Split(text.String()) {
			if err := each(c); err != nil {
				return "", err
			}
		}
	}
	if err := r.clearEarlier(ctx, d); err != nil { // a document without chunks
		return "", err
	}
	if err := r.flushKept(ctx, d); err != nil {
		return "", err
	}
	r.opts.Logger.Debug("document split", "doc", d.file.ID, "bytes", content.BytesRead(), "chunks", n, "streamed", streamed)
	return content.Sum(), nil
}

// precheck reads the file f through once, without splitting it, and
// returns the error its read ends with, if any: not UTF-8 text, a NUL
// byte, only white space, or a file gone or unreadable (a
// *reader.FileError). readAndSplit calls it before it splits a file as a
// stream, so that a large file with a bad byte near its end fails before
// any of its chunks is embedded and written (to be deleted again), on every
// run that retries it, at the cost of reading it twice (from the page
// cache, the second time, for a file that fits in it).
func precheck(ctx context.Context, f reader.File) error {
	c, err := reader.Open(f)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, precheckBuf)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := c.Read(buf); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// precheckBuf is the size of precheck's reads.
const precheckBuf = 256 << 10

// planOnly reports whether this is a dry run without a store: its plan
// assumes that the run's store can rewrite a chunk's metadata without its
// embedding (sink.MetadataUpdater), as Sluice's stores can, so reused
// chunks whose metadata changed are not counted as chunks to embed.
func (r *run) planOnly() bool { return r.opts.DryRun && r.opts.Store == nil }

// countRead adds the bytes of d read since the last call to
// Stats.BytesRead and its share of the file read so far to
// Stats.BytesPartial, so that the throughput and the progress of a large
// document that is split as a stream show before it completes. finish
// moves its partial bytes to Stats.BytesDone.
func (r *run) countRead(d *document, content *reader.Content) {
	n := content.BytesRead()
	if n <= d.read {
		return
	}
	r.addRead(n - d.read)
	d.read = n
	if p := partialBytes(n, d.file.Size, content.Size()); p > d.partial {
		r.addPartial(p - d.partial)
		d.partial = p
	}
}

// partialBytes returns the progress of a document of listed bytes (its
// share of Stats.BytesTotal) once read bytes of it are read: as many, up
// to listed, unless the file held more when it was opened (opened bytes);
// then that fraction of listed, so that a file that grew after it was
// listed (a log being written, say) moves the progress all along its read,
// not only over its first listed bytes.
func partialBytes(read, listed, opened int64) int64 {
	if opened > listed && listed > 0 {
		read = int64(float64(read) / float64(opened) * float64(listed))
	}
	return min(read, listed)
}

// keptBatch is how many reused chunks are acknowledged to the manifest at a
// time.
const keptBatch = 256

// keep acknowledges a chunk the store already holds as it is, so that the
// document's commit keeps it; acknowledgements are sent in batches.
func (r *run) keep(ctx context.Context, d *document, id, key string) error {
	if r.manifest == nil {
		return nil
	}
	d.kept = append(d.kept, state.Node{ID: id, Key: key})
	if len(d.kept) < keptBatch {
		return nil
	}
	return r.flushKept(ctx, d)
}

// flushKept sends the reused chunks not yet acknowledged. It runs before the
// document is sealed, so before it can commit. An error of the manifest
// stops the run (a *stopError), as it does when written nodes are
// acknowledged: it is not the document's fault.
func (r *run) flushKept(ctx context.Context, d *document) error {
	if len(d.kept) == 0 {
		return nil
	}
	err := r.manifest.Ack(ctx, map[string][]state.Node{d.file.ID: d.kept})
	d.kept = d.kept[:0]
	if err != nil {
		return &stopError{err}
	}
	return nil
}

// plannedChunk is a chunk a dry run would embed unless a committed node of
// the same text lends it a vector (see copied).
type plannedChunk struct {
	key    string // textKey of its text
	tokens int
}

// planBatch is how many of a document's planned chunks a dry run looks up
// in the manifest at a time.
const planBatch = 256

// planChunk counts a chunk that a dry run would embed, or write with the vector
// of a committed node of the same text: that is looked up in the manifest
// by batches of planBatch chunks (flushPlanned), when the run's store
// lends vectors at all (lendsVectors).
func (r *run) planChunk(ctx context.Context, d *document, key string, tokens int) error {
	if key == "" || !r.lendsVectors() {
		r.countPlanned(0, 1, int64(tokens))
		return nil
	}
	d.planned = append(d.planned, plannedChunk{key: key, tokens: tokens})
	if len(d.planned) < planBatch {
		return nil
	}
	return r.flushPlanned(ctx, d)
}

// flushPlanned counts the planned chunks of d not yet counted, looking
// their texts up in the manifest.
func (r *run) flushPlanned(ctx context.Context, d *document) error {
	if len(d.planned) == 0 {
		return nil
	}
	keys := make([]string, len(d.planned))
	for i, p := range d.planned {
		keys[i] = p.key
	}
	refs, err := r.opts.State.NodesOfTexts(ctx, keys)
	var copied, planned int
	var tokens int64
	for _, p := range d.planned {
		if _, ok := refs[p.key]; ok {
			copied++
		} else {
			planned++
			tokens += int64(p.tokens)
		}
	}
	d.planned = d.planned[:0]
	r.countPlanned(copied, planned, tokens)
	return err
}

// countPlanned adds to a dry run's report.
func (r *run) countPlanned(copied, planned int, tokens int64) {
	r.mu.Lock()
	r.report.ChunksCopied += copied
	r.report.ChunksPlanned += planned
	r.report.TokensPlanned += tokens
	r.mu.Unlock()
}

// drop settles chunks that will not be written because their document
// failed, counting them in Stats.ChunksSkipped.
func (r *run) drop(ctx context.Context, cs []*chunk) error {
	r.opts.Stats.ChunksSkipped.Add(int64(len(cs)))
	return r.settle(ctx, cs)
}

// settle accounts for chunks that will not go further, completing their
// documents if they were the last. The caller has counted them in Stats.
func (r *run) settle(ctx context.Context, cs []*chunk) error {
	for _, c := range cs {
		if c.doc.settle(1) {
			if err := r.finish(ctx, c.doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish completes a document: on success its stale chunks are deleted and
// the manifest records it; if its file vanished, it is deleted (see
// Options.KeepVanished); on other failures the dead-letter table records
// it. Then its memory budget is given back and the report counts it.
func (r *run) finish(ctx context.Context, d *document) error {
	if d.budget > 0 {
		r.budget.Release(d.budget)
	}
	o := d.outcome()
	gone := o.err != nil && r.gone(d, o.err)
	var deleted int // stale chunks, or those of a failed or deleted document
	var err error
	switch {
	case gone:
		deleted, err = r.removeDocuments(ctx, []string{d.file.ID})
		o.err = nil
	case o.err == nil:
		deleted, err = r.commit(ctx, d, o)
	default:
		deleted, err = r.deadLetter(ctx, d, o.err)
	}
	if err != nil {
		return err
	}
	st := r.opts.Stats
	// Partial bytes first: Snapshot reads BytesDone before BytesPartial,
	// so it may miss the document's bytes for a moment but never counts
	// them twice.
	r.addPartial(-d.partial)
	st.BytesDone.Add(d.file.Size)
	st.FilesDone.Add(1)
	if o.err != nil {
		st.FilesFailed.Add(1)
		r.opts.Logger.Debug("document failed", "doc", d.file.ID, "err", o.err)
	}
	if r.opts.OnDocument != nil {
		res := DocumentResult{File: d.file, Hash: o.hash, Chunks: o.chunks, Err: o.err, Deleted: gone}
		if herr := r.opts.OnDocument(ctx, res); herr != nil {
			return fmt.Errorf("pipeline: recording %s: %w", d.file.ID, herr)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report.ChunksDeleted += deleted
	switch {
	case gone:
		r.report.FilesDeleted++
	case o.err != nil:
		r.report.FilesFailed++
		r.report.Failures = append(r.report.Failures, Failure{Path: d.file.ID, Error: o.err.Error()})
	default:
		r.report.FilesIngested++
		if d.prev != nil {
			r.report.FilesUpdated++
		} else {
			r.report.FilesAdded++
		}
		r.report.ChunksReused += o.reused
	}
	return nil
}
