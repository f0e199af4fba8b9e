package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/splitter"
)

// ingester holds what an ingesting command (run, failed retry, watch)
// opens: the splitter, the embedder, the store and the manifest.
type ingester struct {
	opts    pipeline.Options
	closers []func() error
}

// Close closes what newIngester opened. A failure to close, which comes
// after the run's report and changes neither its outcome nor its exit
// code, is logged as a warning: such as a manifest or local store whose
// last checkpoint a full disk kept from being made, which loses nothing
// but leaves its -wal for the next command to copy. Close returns the
// failures too.
func (in *ingester) Close() error {
	var errs []error
	for i := len(in.closers) - 1; i >= 0; i-- {
		if err := in.closers[i](); err != nil {
			errs = append(errs, err)
			if in.opts.Logger != nil {
				in.opts.Logger.Warn(err.Error())
			}
		}
	}
	in.closers = nil
	return errors.Join(errs...)
}

// ingestMode is what an ingesting command asks of the pipeline beyond the
// configuration: `run`'s --dry-run, --full and --verify, and watch's
// --verify.
type ingestMode struct {
	dryRun, full, verify bool
}

// newIngester opens everything a run over cfg in mode needs. The embedder
// and the store's settings and credentials are checked first, without
// writing anything (a missing key names its variable); then the manifest
// is opened, for writing: while another process writes the same index (a
// `sluice watch`, another run) it fails at once with state.ErrLocked (exit
// 1), before the store is opened or anything is read or embedded. In a dry
// run the embedder is not opened, the manifest is only read (it takes no
// lock and runs beside a writer), and the store is opened only to be read,
// when the plan needs it (openStoreToPlan). A store that holds vectors of
// other dimensions than the embedder's is a configuration error found
// here, before anything is embedded.
func (a *app) newIngester(ctx context.Context, cfg Config, mode ingestMode) (*ingester, error) {
	setMemoryLimit(cfg.Pipeline.MemoryBudgetMB)
	split, err := splitter.New(cfg.Splitter)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	in := &ingester{opts: pipeline.Options{
		Reader:                cfg.Source,
		Splitter:              split,
		BatchSize:             cfg.Embedder.BatchSize,
		MaxBatchTokens:        cfg.Embedder.Limits().MaxTokens,
		EmbedConcurrency:      cfg.Embedder.Concurrency,
		SplitConcurrency:      cfg.Pipeline.SplitConcurrency,
		MemoryBudget:          int64(cfg.Pipeline.MemoryBudgetMB) << 20,
		DryRun:                mode.dryRun,
		PlanCopies:            mode.dryRun && isLocalSink(cfg),
		Full:                  mode.full,
		Verify:                mode.verify,
		EmbedderInfo:          embedderInfo(cfg),
		PricePerMillionTokens: cfg.Embedder.PricePerMillionTokens,
		Stats:                 new(pipeline.Stats),
		Logger:                a.log,
	}}
	if mode.dryRun {
		// A dry run writes nothing: it takes no lock, and creates no
		// manifest; without one, every document is new.
		st, err := readManifest(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if st != nil {
			in.closers = append(in.closers, st.Close)
			in.opts.State = st
		} else if in.opts.Verify {
			// No manifest: no node recorded to look for, and every
			// document is new. The store is still listed, as for
			// --full, to plan the removal of documents whose files are
			// gone, as the run removes them.
			in.opts.Verify, in.opts.Full = false, true
		}
		if err := a.openStoreToPlan(ctx, cfg, in); err != nil {
			in.Close()
			return nil, err
		}
		return in, nil
	}
	// The settings and keys first: a run refused for them writes nothing,
	// neither a manifest nor a lock.
	emb, err := a.openEmbedder(ctx, cfg)
	if err != nil {
		return nil, err
	}
	in.opts.Embedder = emb
	if err := checkStoreSettings(ctx, cfg); err != nil {
		return nil, err
	}
	st, err := state.OpenForWriting(ctx, cfg.State.Path, sinkScope(cfg))
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, st.Close)
	in.opts.State = st
	store, err := a.openStore(ctx, cfg)
	if err != nil {
		in.Close()
		return nil, err
	}
	in.closers = append(in.closers, store.Close)
	in.opts.Store = store
	if err := a.checkDimensions(ctx, cfg, store); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// checkStoreSettings checks, before a run takes the index's lock, what
// opening cfg's store would check without the network: for Cloud AI Search
// the settings, the endpoint and the credential's variables (a missing
// endpoint or key names its variable). It writes nothing and logs nothing:
// the store opened after the lock does that.
func checkStoreSettings(ctx context.Context, cfg Config) error {
	if cfg.Sink.Type != sinkCloudSearch {
		return nil
	}
	s, err := cloudsearch.New(ctx, cfg.Sink.CloudSearch, cloudsearch.WithoutIndexManagement())
	if err != nil {
		return err
	}
	return s.Close()
}

// openStoreToPlan opens the store of a dry run, to read it, when its plan
// needs it: with --verify, to ask which recorded nodes the store holds, and
// with --verify or --full, to list the documents it would remove because
// the manifest forgot them and, with --verify, the chunks it would delete
// because their records do not list them (pipeline.NodeScanner). A local store is opened
// as openLocalToRead does; a
// Cloud AI Search index is checked as a run would (ValidateIndex,
// CreateIfNotExists), never created. A store the run would create (a local
// store's missing file, a missing index with CreateIfNotExists) holds no
// node: noStore.
func (a *app) openStoreToPlan(ctx context.Context, cfg Config, in *ingester) error {
	switch {
	case !in.opts.Verify && !in.opts.Full:
		return nil
	case cfg.Sink.Type == sinkCloudSearch:
		s, err := a.cloudStore(ctx, cfg)
		if err != nil {
			return err
		}
		in.closers = append(in.closers, s.Close)
		in.opts.Store = s
		mode := s.Config().IndexManagement
		if mode == cloudsearch.NoValidation {
			return nil
		}
		err = s.ValidateIndex(ctx)
		if mode == cloudsearch.CreateIfNotExists && errors.Is(err, cloudsearch.ErrIndexNotFound) {
			in.opts.Store = noStore{} // the run creates it empty
			return nil
		}
		return err
	case checkLocalStoreExists(cfg) != nil:
		if in.opts.Verify {
			in.opts.Store = noStore{} // the run creates it empty
		}
		return nil
	}
	s, err := openLocalToRead(ctx, cfg)
	if err != nil {
		return err
	}
	in.closers = append(in.closers, s.Close)
	in.opts.Store = s
	return nil
}

// noStore stands for a store that does not exist yet (a local store's
// missing file, a missing index that CreateIfNotExists would create), in a
// dry run: it holds no node. A dry run never writes, so its Writer
// methods are never called.
type noStore struct{ pipeline.Writer }

// ExistingIDs makes noStore a pipeline.NodeChecker that holds nothing.
func (noStore) ExistingIDs(context.Context, []string) (map[string]bool, error) {
	return map[string]bool{}, nil
}

// sinkScope names the sink and index a manifest scope belongs to.
func sinkScope(cfg Config) string {
	if cfg.Sink.Type == sinkCloudSearch {
		cs := cfg.Sink.CloudSearch.WithDefaults()
		endpoint := cs.Endpoint
		if endpoint == "" { // set in the environment: the store reads it there
			endpoint = os.Getenv(cs.EndpointEnv)
		}
		return state.ServiceScope("cloudsearch", strings.TrimRight(endpoint, "/")+"/indexes/"+cs.IndexName)
	}
	return state.LocalScope(cfg.Sink.Local.Path)
}

// embedderInfo identifies the configured embedder for the manifest.
func embedderInfo(cfg Config) state.Embedder {
	e := cfg.Embedder
	model := e.Model
	if e.Provider == "azure-openai" && model == "" {
		model = "deployment " + e.Deployment
	}
	return state.Embedder{Provider: e.Provider, Model: model, Dimensions: e.Dimensions}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// setMemoryLimit tunes the garbage collector for a flat, small footprint
// (unless GOMEMLIMIT or GOGC is set): a collection starts when the heap has
// grown by 40% of what is live instead of doubling (most of what a run
// allocates is short-lived: texts, batches, vectors), and the soft memory
// limit is the pipeline's byte budget plus room for the rest of the process.
func setMemoryLimit(budgetMB int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(budgetMB+memoryHeadroomMB) << 20)
	}
}

// gcPercent is the GOGC Sluice runs with: against the default of 100 it
// lowers peak RSS by 10 to 15 MiB at no measurable cost in throughput (see
// benchmarks/RESULTS.md, section 3).
const gcPercent = 40

// memoryHeadroomMB is the memory limit above pipeline.memoryBudgetMB: the
// tokenizer's tables, embeddings in flight, the stores' buffers.
const memoryHeadroomMB = 48
