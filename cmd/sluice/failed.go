package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
)

func (a *app) failedCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "failed list|retry",
		Short: "Show or replay the documents that failed (the dead-letter table)",
	}
	requireSubcommand(cmd)
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List failed documents with their reason and attempt count",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			fails, err := readFailures(ctx, cfg)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				for _, f := range fails {
					if err := enc.Encode(f); err != nil {
						return err
					}
				}
				return nil
			}
			if len(fails) == 0 {
				fmt.Fprintln(a.stdout, "no failed documents")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DOCUMENT\tATTEMPTS\tLAST TRY\tERROR")
			for _, f := range fails {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", reader.Printable(f.ID), f.Attempts, f.LastTry.Format(time.RFC3339), reader.Printable(f.Reason))
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per document: path, error, attempts, last_try")

	var rf runFlags
	retry := &cobra.Command{
		Use:   "retry [DIR]",
		Short: "Ingest again only the documents that failed",
		Long: "Ingest again only the documents of the dead-letter table. DIR is the folder the failed run read\n" +
			"(default source.dir), since documents are named by their path relative to it.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := a.configForDir(args, rf.include, rf.exclude, true)
			if err != nil {
				return err
			}
			if err := checkReportPath(rf.report); err != nil {
				return err
			}
			if manifestMissing(cfg) { // nothing failed, and nothing to create
				return a.nothingToRetry(rf, 0)
			}
			in, err := a.newIngester(ctx, cfg, ingestMode{dryRun: rf.dryRun})
			if err != nil {
				return a.notStarted(ctx, rf, err)
			}
			defer in.Close()
			var fails []state.Failure
			if in.opts.State != nil { // nil: a dry run whose manifest was deleted meanwhile
				if fails, err = in.opts.State.Failures(ctx); err != nil {
					return err
				}
			}
			if len(fails) == 0 {
				return a.nothingToRetry(rf, 0)
			}
			ids, skipped := retryable(cfg.Source, fails)
			if len(skipped) > 0 {
				fmt.Fprintf(a.stderr, "not retrying %s (folders, or documents that source.include/exclude do not select): %s; a whole-folder `sluice run` retries the folders, --include with a pattern that selects the documents retries them (here or in a run), and --exclude or deleting their files clears them\n",
					plural(len(skipped), "entry", "entries"), strings.Join(skipped, ", "))
			}
			if len(ids) == 0 {
				return a.nothingToRetry(rf, len(skipped))
			}
			if noneUnder(cfg.Source, ids) {
				// Retried, each would be recorded as vanished in place of
				// its real reason.
				return usagef("none of the %s to retry is under %s (%s, say): pass the folder the failed run read, as in `sluice failed retry DIR`",
					plural(len(ids), "failed document", "failed documents"), cfg.Source.Dir, ids[0])
			}
			opts := in.opts
			opts.Source = filesByID(cfg.Source, ids)
			// A gone file stays failed: DIR may not be the folder the
			// failed run read, and only a walk of it proves it gone.
			opts.KeepVanished = true
			return a.report(ctx, opts, rf)
		},
	}
	rf.addSelectFlags(retry.Flags())
	retry.Flags().StringVar(&rf.report, "report", "", "write the run report as JSON to `FILE`")
	retry.Flags().BoolVar(&rf.json, "json", false, "print the run report as JSON")
	retry.Flags().BoolVar(&rf.dryRun, "dry-run", false, "show the plan without embedding or writing")
	cmd.AddCommand(list, retry)
	return cmd
}

// nothingToRetry ends a retry that has no document to replay as a run over
// no file would: the line "no failed documents to retry", or with --json
// an empty, complete report; and the same report in --report's file.
// skipped is the number of dead letters the retry left alone.
func (a *app) nothingToRetry(rf runFlags, skipped int) error {
	if err := a.emitReport(&pipeline.Report{Failures: []pipeline.Failure{}, Complete: true}, rf, false); err != nil || rf.json {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(a.stdout, "no failed documents to retry with these settings; %s left as they are (see above)\n", plural(skipped, "failed entry is", "failed entries are"))
		return nil
	}
	fmt.Fprintln(a.stdout, "no failed documents to retry")
	return nil
}

// readFailures returns the dead letters of cfg's index, reading the
// manifest without creating it: none if it does not exist.
func readFailures(ctx context.Context, cfg Config) ([]state.Failure, error) {
	st, err := readManifest(ctx, cfg)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	return st.Failures(ctx)
}

// retryable splits the dead letters into the ids a retry replays and those
// it skips: documents the source settings do not select (the configuration
// no longer asks for them; a full run forgets those the exclude settings
// leave out) and folders the walk could not read (only a walk reads a
// folder: a full run retries them, and forgets them once they can be read).
func retryable(cfg reader.Config, fails []state.Failure) (ids, skipped []string) {
	cfg = cfg.WithDefaults()
	for _, f := range fails {
		fi, err := os.Stat(filepath.Join(cfg.Dir, filepath.FromSlash(f.ID)))
		if !cfg.Match(f.ID) || (err == nil && fi.IsDir()) {
			skipped = append(skipped, f.ID)
			continue
		}
		ids = append(ids, f.ID)
	}
	return ids, skipped
}

// noneUnder reports whether no file of the documents ids is under the
// source folder.
func noneUnder(cfg reader.Config, ids []string) bool {
	cfg = cfg.WithDefaults()
	for _, id := range ids {
		if _, err := os.Lstat(filepath.Join(cfg.Dir, filepath.FromSlash(id))); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// filesByID is a pipeline source of named documents under the source folder.
// A document whose file is gone is reported as a per-file failure, so it
// stays visible until a full run removes it from the index.
func filesByID(cfg reader.Config, ids []string) pipeline.FileSource {
	return func(ctx context.Context, fn func(reader.File, error) error) error {
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := reader.Stat(cfg, id)
			var ferr *reader.FileError
			if err != nil && !errors.As(err, &ferr) {
				return err
			}
			if errors.Is(err, reader.ErrVanished) {
				err = fmt.Errorf("%w; if %s is not the folder the failed run read, pass that folder: sluice failed retry DIR; "+
					"if the file is gone for good, a `sluice run` over the whole folder removes its chunks and this entry", err, cfg.Dir)
			}
			if err != nil && f.ID == "" {
				f.ID = id
			}
			if err := fn(f, err); err != nil {
				return err
			}
		}
		return nil
	}
}
