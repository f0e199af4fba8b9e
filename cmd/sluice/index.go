package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

func (a *app) indexCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index create|validate|delete|stats",
		Short: "Manage the configured index (Cloud AI Search index or local store)",
	}
	requireSubcommand(cmd)
	var asJSON bool
	sub := func(use, short string, fn func(ctx context.Context, cfg Config) error) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				cfg, err := a.config()
				if err != nil {
					return err
				}
				return fn(cmd.Context(), cfg)
			},
		}
	}
	stats := sub("stats", "Show the index's document count, size and dimensions", func(ctx context.Context, cfg Config) error {
		return a.indexStats(ctx, cfg, asJSON)
	})
	stats.Flags().BoolVar(&asJSON, "json", false, "print the statistics as one JSON object")
	cmd.AddCommand(
		sub("create", "Create the index from the configuration (an existing index is validated instead)", a.indexCreate),
		sub("validate", "Check that the index exists and matches the configuration", a.indexValidate),
		sub("delete", "Delete the index and everything in it", a.indexDelete),
		stats,
	)
	return cmd
}

// cloudStore opens the Cloud AI Search store without applying its index
// management, so that index commands and doctor decide what happens to the
// index (they create none, except `index create`). The store still knows
// the configured indexManagement: with CreateIfNotExists, doctor reports a
// missing index as one the first run creates, and the error of `index
// validate` or `index stats` on it says so instead of advising the setting.
func (a *app) cloudStore(ctx context.Context, cfg Config) (*cloudsearch.Store, error) {
	return cloudsearch.New(ctx, cfg.Sink.CloudSearch, cloudsearch.WithLogger(a.log), cloudsearch.WithoutIndexManagement())
}

func (a *app) indexCreate(ctx context.Context, cfg Config) error {
	if cfg.Sink.Type != sinkCloudSearch {
		s, err := local.Open(ctx, cfg.Sink.Local)
		if err != nil {
			return err
		}
		defer s.Close()
		fmt.Fprintf(a.stdout, "local store ready at %s\n", s.Path())
		return nil
	}
	s, err := a.cloudStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	switch err := s.ValidateIndex(ctx); {
	case err == nil:
		fmt.Fprintf(a.stdout, "index %s already exists and matches the configuration\n", cfg.Sink.CloudSearch.IndexName)
		return nil
	case !errors.Is(err, cloudsearch.ErrIndexNotFound):
		return err
	}
	if err := s.CreateIndex(ctx); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "created index %s\n", cfg.Sink.CloudSearch.IndexName)
	return nil
}

func (a *app) indexValidate(ctx context.Context, cfg Config) error {
	if cfg.Sink.Type != sinkCloudSearch {
		return a.localCheck(ctx, cfg)
	}
	s, err := a.cloudStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.ValidateIndex(ctx); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "index %s exists and matches the configuration\n", cfg.Sink.CloudSearch.IndexName)
	return nil
}

// localCheck validates the local store: it must exist and hold vectors of
// the embedder's dimensions.
func (a *app) localCheck(ctx context.Context, cfg Config) error {
	if err := checkLocalStoreExists(cfg); err != nil {
		return err
	}
	path := cfg.Sink.Local.Path
	s, err := openLocalToRead(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := a.checkDimensions(ctx, cfg, s); err != nil {
		return err
	}
	if s.Dimensions() == 0 {
		fmt.Fprintf(a.stdout, "local store %s is valid (no vectors yet: the first write sets their length, embedder.dimensions %d)\n", path, cfg.Embedder.Dimensions)
	} else {
		fmt.Fprintf(a.stdout, "local store %s is valid (vector dimensions %d)\n", path, s.Dimensions())
	}
	return nil
}

// localStoreToBe reports, for doctor, a local store whose file does not
// exist yet but that the first run can create: the nearest folder on its
// path that exists is a folder. A store before its first run is not a
// failure; anything else is left to localCheck.
func localStoreToBe(cfg Config) (string, bool) {
	path := cfg.Sink.Local.Path
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Sprintf("%s (sink.local.path) does not exist yet: the first `sluice run` creates it", path), true
		case err == nil || !errors.Is(err, fs.ErrNotExist):
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func (a *app) indexDelete(ctx context.Context, cfg Config) error {
	var cloud *cloudsearch.Store
	if cfg.Sink.Type == sinkCloudSearch {
		// Settings and credentials first: a refused delete changes nothing.
		s, err := a.cloudStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer s.Close()
		cloud = s
	}
	// Hold the writers' lock, so that no run or watch writes into the index
	// while it is deleted.
	w, err := a.lockIndex(ctx, cfg)
	if err != nil {
		return err
	}
	defer w.Close()
	exists := true
	if cloud != nil {
		// Reach the service before the manifest is cleared: an unreachable
		// service or a refused key changes nothing either.
		_, err := cloud.GetIndex(ctx)
		if err != nil && !errors.Is(err, cloudsearch.ErrIndexNotFound) {
			return err
		}
		exists = err == nil
	}
	// The manifest's records go first: should the delete fail or die after
	// this, the next run finds no record and replaces what the index holds.
	manifest, err := w.drop(ctx)
	if err != nil {
		return err
	}
	if cloud == nil {
		path := cfg.Sink.Local.Path
		what := "there was no local store at "
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			switch err := os.Remove(p); {
			case err == nil:
				what = "deleted local store "
			case !errors.Is(err, fs.ErrNotExist):
				return err
			}
		}
		fmt.Fprintf(a.stdout, "%s%s%s\n", what, path, manifest)
		return nil
	}
	if err := cloud.DeleteIndex(ctx); err != nil {
		return err
	}
	what := "deleted index "
	if !exists { // a misspelt name or another service's endpoint, perhaps
		what = "there was no index "
	}
	fmt.Fprintf(a.stdout, "%s%s%s\n", what, cfg.Sink.CloudSearch.IndexName, manifest)
	return nil
}

// indexWriter holds the writers' lock of an index for `index delete`:
// through its manifest, or without it when there is none or it cannot be
// opened (openErr).
type indexWriter struct {
	path    string // the state file
	st      *state.Store
	lock    *state.IndexLock
	openErr error
}

// lockIndex takes the writers' lock of cfg's index. A manifest that does
// not exist is not created; one that cannot be opened (damaged, say) does
// not stop the delete, since deleting is often how one starts over, but the
// index's lock is taken all the same.
func (a *app) lockIndex(ctx context.Context, cfg Config) (*indexWriter, error) {
	w := &indexWriter{path: cfg.State.Path}
	scope := sinkScope(cfg)
	if !manifestMissing(cfg) {
		st, err := state.OpenForWriting(ctx, w.path, scope)
		switch {
		case err == nil:
			w.st = st
			return w, nil
		case errors.Is(err, state.ErrLocked):
			return nil, err
		}
		a.log.Warn("the manifest could not be opened to clear the index's records", "state", w.path, "err", err)
		w.openErr = err
	}
	l, err := state.LockIndex(w.path, scope)
	if err != nil {
		return nil, err
	}
	w.lock = l
	return w, nil
}

// drop clears the index's records in the manifest, if there is one, and
// says what became of them, for the message.
func (w *indexWriter) drop(ctx context.Context) (string, error) {
	switch {
	case w.st != nil:
		if err := w.st.Drop(ctx); err != nil {
			return "", err
		}
		return " and its records in the manifest " + w.path + "; `sluice run` rebuilds it", nil
	case w.openErr != nil:
		return "; the manifest " + w.path + " could not be opened (see the warning above), so it may still list the index's documents: delete it and run, or repair it and run with --full", nil
	}
	return "; `sluice run` rebuilds it", nil
}

// Close releases the lock.
func (w *indexWriter) Close() error {
	if w.st != nil {
		return w.st.Close()
	}
	return w.lock.Close()
}

// indexStatsView is the output of `index stats`.
type indexStatsView struct {
	Sink            string `json:"sink"`
	Index           string `json:"index"`
	Nodes           int64  `json:"nodes"`     // the nodes (chunks) stored
	Documents       int64  `json:"documents"` // the same count, the service's name for it (each node is an index document); kept for scripts
	StorageBytes    int64  `json:"storage_bytes"`
	VectorIndexSize int64  `json:"vector_index_bytes,omitempty"`
	Dimensions      *int   `json:"dimensions"` // nil (null) for a local store that holds no vector yet
}

func (a *app) indexStats(ctx context.Context, cfg Config, asJSON bool) error {
	var v indexStatsView
	if cfg.Sink.Type == sinkCloudSearch {
		s, err := a.cloudStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer s.Close()
		st, err := s.Stats(ctx)
		if err != nil {
			return err
		}
		dims, err := s.Dimensions(ctx)
		if err != nil {
			return err
		}
		v = indexStatsView{Sink: "cloudsearch", Index: cfg.Sink.CloudSearch.IndexName, Nodes: st.DocumentCount, Documents: st.DocumentCount,
			StorageBytes: st.StorageSize, VectorIndexSize: st.VectorIndexSize, Dimensions: &dims}
	} else {
		if err := checkLocalStoreExists(cfg); err != nil {
			return err
		}
		s, err := openLocalToRead(ctx, cfg)
		if err != nil {
			return err
		}
		defer s.Close()
		n, err := s.Count(ctx)
		if err != nil {
			return err
		}
		var size int64
		for _, p := range []string{s.Path(), s.Path() + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				size += fi.Size()
			}
		}
		v = indexStatsView{Sink: "local", Index: s.Path(), Nodes: int64(n), Documents: int64(n), StorageBytes: size}
		if d := s.Dimensions(); d > 0 {
			v.Dimensions = &d
		}
	}
	if asJSON {
		return json.NewEncoder(a.stdout).Encode(v)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	dims := "none yet (no vectors stored)"
	if v.Dimensions != nil {
		dims = strconv.Itoa(*v.Dimensions)
	}
	fmt.Fprintf(tw, "sink\t%s\nindex\t%s\nnodes\t%d\nstorage\t%s\ndimensions\t%s\n", v.Sink, v.Index, v.Nodes, mb(v.StorageBytes), dims)
	if v.VectorIndexSize > 0 {
		fmt.Fprintf(tw, "vector index\t%s\n", mb(v.VectorIndexSize))
	}
	return tw.Flush()
}

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, the embedder and the sink, and say how to fix what fails",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			failed, misconfigured := 0, false
			report := func(name string, err error, detail string) {
				if err != nil {
					failed++
					misconfigured = misconfigured || exitCodeOf(err) == exitUsage
					// "✗ cloudsearch: endpoint ...", not "cloudsearch: cloudsearch: ...".
					fmt.Fprintf(a.stdout, "✗ %s: %s\n", name, strings.TrimPrefix(err.Error(), name+": "))
					return
				}
				fmt.Fprintf(a.stdout, "✓ %s: %s\n", name, detail)
			}
			report("configuration", nil, "valid")
			emb := cfg.Embedder
			emb.ApplyDefaults() // the provider as used, when the file left it empty
			report("embedder", a.checkEmbedder(ctx, cfg), fmt.Sprintf("%s returns %d-dimensional vectors", emb.Provider, emb.Dimensions))
			if cfg.Sink.Type == sinkCloudSearch {
				s, err := a.cloudStore(ctx, cfg)
				if err != nil {
					report("cloudsearch", err, "")
				} else {
					defer s.Close()
					for _, c := range s.Doctor(ctx, cfg.Embedder.Dimensions) {
						var cerr error
						if !c.OK {
							if cerr = c.Err; cerr == nil {
								cerr = errors.New(c.Detail)
							}
						}
						report(c.Name, cerr, c.Detail)
					}
				}
			} else {
				if note, ok := localStoreToBe(cfg); ok {
					report("local store", nil, note)
				} else {
					var out strings.Builder
					sub := &app{stdout: &out, configPath: a.configPath, log: a.log}
					err := sub.localCheck(ctx, cfg)
					report("local store", err, strings.TrimSpace(out.String()))
				}
			}
			detail, err := manifestCheck(ctx, cfg)
			report("manifest", err, detail)
			if failed > 0 {
				// A check that failed for a configuration reason (a
				// missing key, a setting the store refuses) exits 2, as
				// the same problem does in run.
				err := fmt.Errorf("%s failed", plural(failed, "check", "checks"))
				if misconfigured {
					return &usageError{err}
				}
				return err
			}
			return nil
		},
	}
}

// manifestCheck compares the embedder the manifest says built the index
// with the configured one, as `sluice run` does (a change of model needs
// --full): it reads the manifest only, and notes that a missing one is
// created by the first run.
func manifestCheck(ctx context.Context, cfg Config) (string, error) {
	found, err := compareManifestEmbedder(ctx, cfg)
	switch {
	case err != nil:
		return "", err
	case !found:
		return cfg.State.Path + " (state.path) does not exist yet: the first `sluice run` creates it", nil
	}
	return cfg.State.Path + " (state.path): the configured embedder is the one the index was built with, or none is recorded yet", nil
}

// checkEmbedder embeds a probe text and checks the vector's length.
func (a *app) checkEmbedder(ctx context.Context, cfg Config) error {
	emb, err := a.openEmbedder(ctx, cfg)
	if err != nil {
		return err
	}
	vecs, err := emb.Embed(ctx, embedder.Texts("sluice doctor probe"))
	if err != nil {
		return err
	}
	if len(vecs) != 1 || len(vecs[0]) != cfg.Embedder.Dimensions {
		got := 0
		if len(vecs) == 1 {
			got = len(vecs[0])
		}
		return &embedder.DimensionError{Want: cfg.Embedder.Dimensions, Got: got}
	}
	return nil
}
