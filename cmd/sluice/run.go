package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/reader"
)

type runFlags struct {
	include, exclude []string
	report           string
	dryRun           bool
	full             bool
	verify           bool
	json             bool
}

// addSelectFlags defines --include and --exclude, which select the files
// of a command that reads the folder.
func (f *runFlags) addSelectFlags(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.include, "include", nil, "glob of files to read (repeatable; replaces source.include)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "glob of files or folders to skip (repeatable; added to source.exclude)")
}

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [DIR]",
		Short: "Ingest a folder into the vector store",
		Long: "Ingest a folder: walk it, split each document into chunks, embed them in batches and write\n" +
			"them to the configured vector store. DIR overrides source.dir. Exit code 3 means the run\n" +
			"finished but some documents failed; they are listed in the summary and the report.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.run(cmd, args, f) },
	}
	f.addSelectFlags(cmd.Flags())
	cmd.Flags().StringVar(&f.report, "report", "", "write the run report as JSON to `FILE`")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "read and split only: report the chunks and tokens a run would embed, without embedding or writing")
	cmd.Flags().BoolVar(&f.full, "full", false, "re-embed and rewrite every document, even unchanged ones (needed after a change of embedding model)")
	cmd.Flags().BoolVar(&f.verify, "verify", false, "check that the store still holds every chunk the manifest records, and write again those it lost (deleted from the index behind Sluice's back)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the run report as one JSON object on stdout instead of the summary")
	return cmd
}

func (a *app) run(cmd *cobra.Command, args []string, f runFlags) error {
	ctx := cmd.Context()
	cfg, err := a.configForDir(args, f.include, f.exclude, true)
	if err != nil {
		return err
	}
	if err := checkReportPath(f.report); err != nil {
		return err // before anything is opened or created
	}
	in, err := a.newIngester(ctx, cfg, ingestMode{dryRun: f.dryRun, full: f.full, verify: f.verify})
	if err != nil {
		return a.notStarted(ctx, f, err)
	}
	defer in.Close()
	opts := in.opts
	opts.Prescan = true
	return a.report(ctx, opts, f)
}

// notStarted reports a run that err stopped before it read any document:
// the store, the embedder or the manifest could not be opened, or another
// process holds the index. --report and --json then say so (complete
// false, error), rather than leave an earlier run's report in place for a
// nightly job to read. It returns err, joined with any error writing the
// report.
func (a *app) notStarted(ctx context.Context, f runFlags, err error) error {
	rep := &pipeline.Report{DryRun: f.dryRun, Failures: []pipeline.Failure{}, Error: err.Error(), Interrupted: ctx.Err() != nil}
	if werr := a.emitReport(rep, f, false); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// emitReport writes rep to the --report file, if one is named, and prints
// it as JSON with --json. It prints nothing otherwise: the caller prints
// its own summary if summary is true, and the error of writing the file
// then says that the summary is on standard output.
func (a *app) emitReport(rep *pipeline.Report, f runFlags, summary bool) error {
	var err error
	if f.report != "" {
		if err = writeReport(f.report, rep); err != nil {
			switch {
			case f.json:
				err = fmt.Errorf("%w; the report is on standard output", err)
			case summary:
				err = fmt.Errorf("%w; the summary is on standard output", err)
			}
		}
	}
	if f.json {
		err = errors.Join(err, json.NewEncoder(a.stdout).Encode(rep))
	}
	return err
}

// report runs the pipeline with a progress display and prints its report.
// The caller has refused a --report file that cannot be written
// (checkReportPath, exit 2); if writing it still fails at the end, the
// summary is printed all the same and the error is fatal (exit 1, not 3:
// exit 3 promises the failures are in the report).
func (a *app) report(ctx context.Context, opts pipeline.Options, f runFlags) error {
	if opts.Source == nil {
		a.warnUnescaped(opts.Reader)
	}
	prog := startProgress(ctx, a.stderr, opts.Stats, a.log)
	report, runErr := pipeline.Run(ctx, opts)
	prog.Stop()
	if report == nil {
		return a.notStarted(ctx, f, runErr)
	}
	reportErr := a.emitReport(report, f, true)
	if !f.json {
		printSummary(a.stdout, report)
	}
	if opts.Source == nil && report.Complete && report.FilesSeen == 0 {
		a.warnIfNothingMatches(ctx, opts.Reader, "--include (such as --include '**/*.txt') or source.include")
	}
	if runErr != nil && ctx.Err() != nil {
		runErr = &interruptedError{fmt.Sprintf("interrupted after %d documents; the store is consistent, run again to finish", report.FilesIngested), runErr}
	}
	if reportErr != nil {
		return errors.Join(runErr, reportErr) // never errPartial: exit 1 (or 2 for a run stopped by a configuration error)
	}
	if runErr != nil {
		return runErr
	}
	if report.FilesFailed > 0 {
		return errPartial
	}
	return nil
}

// checkReportPath makes sure that the --report file can be written, so
// that a run does not do all its work only to fail at the end. It opens
// the file for writing, creating it if need be, and removes it again if
// it created it: a run that fails leaves no empty report behind.
func checkReportPath(path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return usagef("--report %s cannot be written: %v; name a file in a folder that exists and that you may write to", path, unwrapPathError(err))
	}
	err = f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		err = errors.Join(err, os.Remove(path))
	}
	if err != nil {
		return fmt.Errorf("checking --report %s: %w", path, err)
	}
	return nil
}

// unwrapPathError returns the cause of a *fs.PathError, whose path the
// message names already.
func unwrapPathError(err error) error {
	var perr *fs.PathError
	if errors.As(err, &perr) {
		return perr.Err
	}
	return err
}

// writeReport writes r to the --report file at path. When that fails, a
// regular file there, which holds part of the report or nothing (the
// writing truncated any earlier report), is removed, so that no truncated
// report is left for a nightly job to read; the error names the file and,
// for a full disk, says to free space.
func writeReport(path string, r *pipeline.Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	err = writeFile(path, append(data, '\n'), 0o644)
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("writing --report %s: %v", path, unwrapPathError(err))
	if fi, serr := os.Lstat(path); serr == nil && fi.Mode().IsRegular() && os.Remove(path) == nil {
		msg += ", so it was removed"
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		msg += "; free space on its disk, or name a file on another with --report"
	}
	return errors.New(msg)
}

// writeFile is os.WriteFile; a variable so that tests can make it fail.
var writeFile = os.WriteFile

// warnUnescaped warns about each include or exclude pattern of cfg that
// names an existing file literally but, being a glob, does not match it
// (see reader.Config.Unescaped), naming the flag that gave the pattern, if
// one did, or else its setting.
func (a *app) warnUnescaped(cfg reader.Config) {
	for _, w := range cfg.Unescaped() {
		if f, ok := a.sourceFlags[w.Setting]; ok {
			a.log.Warn(f.Flag + " " + w.Text)
			continue
		}
		a.log.Warn(w.String())
	}
}

// warnIfNothingMatches warns when cfg's include patterns match no file of
// the folder although it holds files (the default reads only Markdown): it
// counts those files, names a few and says how to select them, with how
// (the flag or setting the command takes).
func (a *app) warnIfNothingMatches(ctx context.Context, cfg reader.Config, how string) {
	// A walk as the run's, stopped at its first file: it enters the
	// folders the patterns name, hidden ones too.
	errMatch := errors.New("a file matches")
	if err := reader.Walk(ctx, cfg, func(reader.File, error) error { return errMatch }); err != nil {
		return // a file matches, or the walk fails as the run will say
	}
	all := cfg
	all.Include = []string{"*"}
	var n int
	var some []string
	err := reader.Walk(ctx, all, func(f reader.File, _ error) error {
		if n++; len(some) < 3 {
			some = append(some, f.ID)
		}
		return nil
	})
	if err != nil || n == 0 {
		return
	}
	a.log.Warn(fmt.Sprintf("no file of %s matches source.include %s, so nothing is read; it holds %s that the patterns leave out (%s); select them with %s",
		cfg.Dir, cfg.WithDefaults().Include, plural(n, "file", "files"), strings.Join(some, ", "), how))
}

// interruptedError is the error of a run stopped by Ctrl-C or SIGTERM. Its
// message says what was done and what to do, and not "context canceled",
// which it wraps for errors.Is.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }
