// Command sluice loads folders of documents into vector indexes and keeps
// them in step with the folder. See README.md for the quick start and
// ../shared/DESIGN.md (the command-line contract) for every command.
//
// Exit codes: 0 success; 1 fatal error; 2 usage or configuration error;
// 3 finished, but some documents failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
)

// Exit codes of the command-line contract.
const (
	exitOK      = 0
	exitFatal   = 1
	exitUsage   = 2
	exitPartial = 3
)

// errPartial reports a run that finished with failed documents (exit 3).
var errPartial = errors.New("some documents failed")

// usageError is a command-line mistake (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError of the formatted message.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// app holds what every command shares.
type app struct {
	stdout, stderr io.Writer
	configPath     string
	envFile        string // --env-file
	debug          bool
	logFormat      string // --log-format
	log            *slog.Logger
	// sourceFlags are the source settings that --include and --exclude
	// set, once configForDir has read them, for warnings to name the flag.
	sourceFlags flagSettings
}

// execute runs the command line and returns the exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	code := exitCodeOf(err)
	if f, ok := logFormatArg(args); ok && err != nil {
		a.logFormat = f // parsing may have stopped before it: a bad flag, say
	}
	switch {
	case err == nil || errors.Is(err, errPartial):
	case a.logFormat == "json":
		log := a.log
		if log == nil { // an error in the arguments, before the logger was made
			h, _ := newLogHandler(a.logFormat, stderr, nil)
			log = slog.New(h)
		}
		log.Error(err.Error(), "exit_code", code) // one more line for the log collector
	default:
		fmt.Fprintln(stderr, "sluice:", err)
	}
	return code
}

// logFormatArg returns the valid value of the last --log-format in args
// (before a "--"), found without parsing the others.
func logFormatArg(args []string) (string, bool) {
	format, found := "", false
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		v, ok := strings.CutPrefix(args[i], "--log-format=")
		if !ok && args[i] == "--log-format" && i+1 < len(args) {
			v, ok = args[i+1], true
			i++
		}
		if ok && (v == "json" || v == "text") {
			format, found = v, true
		}
	}
	return format, found
}

func exitCodeOf(err error) int {
	var (
		uerr *usageError
		cerr *ConfigError
		derr *dimensionsError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errPartial):
		return exitPartial
	case errors.As(err, &uerr), errors.As(err, &cerr), errors.As(err, &derr), errors.Is(err, state.ErrModelChanged),
		errors.Is(err, embedder.ErrConfig), errors.Is(err, embedder.ErrMissingKey), errors.Is(err, cloudsearch.ErrConfig),
		errors.Is(err, cloudsearch.ErrIndexMismatch), // the settings disagree with the index they name
		errors.Is(err, pipeline.ErrConfig),
		// a query, filter or mode the configured store cannot take
		errors.Is(err, sink.ErrUnsupported), errors.Is(err, sink.ErrInvalidQuery), errors.Is(err, sink.ErrInvalidFilter):
		return exitUsage
	}
	return exitFatal
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Load folders of documents into vector indexes and keep them in step",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			level := slog.LevelInfo
			if a.debug {
				level = slog.LevelDebug
			}
			h, err := newLogHandler(a.logFormat, a.stderr, &slog.HandlerOptions{Level: level})
			if err != nil {
				return err
			}
			a.log = slog.New(h)
			return loadEnvFile(a.envFile, cmd.Flags().Changed("env-file"))
		},
	}
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "read the configuration from `FILE` (default: $"+configEnv+" if set, else ./sluice.yaml if present, else the embedded default)")
	root.PersistentFlags().StringVar(&a.envFile, "env-file", defaultEnvFile, "dotenv `FILE` whose variables (API keys, endpoints) are set unless the environment sets them; read only if present unless given")
	root.PersistentFlags().BoolVar(&a.debug, "debug", false, "verbose logs of document processing, embedding calls and queries")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "text", "the `FORMAT` of the log lines on stderr: text (key=value) or json (one object per line, for log collectors)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagParseError(err) })
	requireSubcommand(root)
	root.AddCommand(
		a.runCommand(),
		a.watchCommand(),
		a.queryCommand(),
		a.getCommand(),
		a.deleteCommand(),
		a.splitCommand(),
		a.benchCommand(),
		a.failedCommand(),
		a.devserverCommand(),
		a.indexCommand(),
		a.doctorCommand(),
		a.versionCommand(),
	)
	requireCompletionShell(root)
	requireHelpTopic(root)
	return root
}

// requireCompletionShell adds cobra's completion command now, instead of
// when the root runs, so that it checks its arguments as the others do:
// `sluice completion` alone or with an unknown shell exits 2 instead of
// printing its help and succeeding, and `sluice completion bash x` exits 2
// with the usage line instead of 1.
func requireCompletionShell(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		requireSubcommand(c)
		for _, shell := range c.Commands() {
			shell.Args = noArgs
		}
	}
}

// requireSubcommand makes a command that only groups subcommands fail with
// a usage error (exit 2) when it is run alone or with an unknown
// subcommand, instead of printing its help and succeeding: a script's typo
// must not look like success.
func requireSubcommand(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs // let RunE name the unknown subcommand
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs a subcommand: %s (see %s --help)", cmd.CommandPath(), subcommandNames(cmd), cmd.CommandPath())
		}
		return unknownSubcommand(cmd, args[0])
	}
}

// unknownSubcommand is the usage error of a name that is none of cmd's
// subcommands: it suggests the nearest one, else lists them.
func unknownSubcommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	} else {
		msg += "; the commands are " + subcommandNames(cmd)
	}
	return usagef("%s", msg)
}

// requireHelpTopic makes `sluice help TOPIC` fail with a usage error (exit
// 2) when TOPIC names no command, instead of printing the nearest parent's
// help and succeeding, as cobra's help command does under a root that
// takes arguments (requireSubcommand).
func requireHelpTopic(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" {
			continue
		}
		help := c.Run
		c.Run = nil
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if found, rest, err := root.Find(args); err == nil && len(rest) > 0 {
				return unknownSubcommand(found, rest[0])
			}
			help(cmd, args)
			return nil
		}
	}
}

// subcommandNames lists the available subcommands of cmd, comma-separated.
func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// config loads and validates the configuration for a command.
func (a *app) config() (Config, error) {
	cfg, path, err := loadConfig(a.configPath)
	if err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &ConfigError{File: path, Err: err}
	}
	a.warnEnvOverrides(cfg)
	a.warnUnusedCloudSearch(cfg)
	return cfg, nil
}

// warnUnusedCloudSearch warns when sink.cloudsearch holds settings the
// store would refuse while sink.type is local, which ignores them: the
// mistake would otherwise show only once sink.type is switched.
func (a *app) warnUnusedCloudSearch(cfg Config) {
	cs := cfg.Sink.CloudSearch
	if cfg.Sink.Type == sinkCloudSearch || reflect.ValueOf(cs).IsZero() {
		return
	}
	if cs.IndexName == "" {
		cs.IndexName = "unused" // required once used; not a mistake now
	}
	if err := cs.Validate(); err != nil {
		a.log.Warn(fmt.Sprintf("sink.cloudsearch is not used while sink.type is %s, but the Cloud AI Search store would refuse it: %v; fix it before switching sink.type", cfg.Sink.Type, err))
	}
}

// noArgs checks the positional arguments of a command that takes none, as
// argCount does.
func noArgs(cmd *cobra.Command, args []string) error {
	return argCount(cmd, args, 0, 0)
}

// maxArgs returns the check of the positional arguments of a command that
// takes at most n, as argCount does.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return argCount(cmd, args, 0, n)
	}
}

// minArgs returns the check of the positional arguments of a command that
// takes at least n, as argCount does.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return argCount(cmd, args, n, -1)
	}
}

// argCount checks that cmd was given from lo to hi positional arguments
// (hi < 0: no limit). Otherwise it returns a usage error that names the
// command, says what it takes and what it was given, and shows its usage
// line, where cobra's checks say only "accepts at most 1 arg(s), received 2".
func argCount(cmd *cobra.Command, args []string, lo, hi int) error {
	var takes string
	switch n := len(args); {
	case n < lo:
		takes = "needs at least " + plural(lo, "argument", "arguments")
	case hi == 0 && n > 0:
		takes = "takes no arguments"
	case hi > 0 && n > hi:
		takes = "takes at most " + plural(hi, "argument", "arguments")
	default:
		return nil
	}
	return usagef("%s %s, got %s; usage: %s", cmd.CommandPath(), takes, argsWords(args), cmd.UseLine())
}

// argsWords describes the positional arguments a command was given: their
// number and the first three, quoted.
func argsWords(args []string) string {
	if len(args) == 0 {
		return "none"
	}
	quoted := make([]string, 0, 4)
	for i, a := range args {
		if i == 3 {
			quoted = append(quoted, "...")
			break
		}
		quoted = append(quoted, strconv.Quote(a))
	}
	return fmt.Sprintf("%d (%s)", len(args), strings.Join(quoted, ", "))
}

// newLogHandler returns the slog handler of --log-format: "text" for
// key=value lines, "json" for one JSON object per line, whose durations are
// seconds (as eta_seconds is), not slog's nanoseconds.
func newLogHandler(format string, w io.Writer, opts *slog.HandlerOptions) (slog.Handler, error) {
	switch format {
	case "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		o := slog.HandlerOptions{}
		if opts != nil {
			o = *opts
		}
		o.ReplaceAttr = durationSeconds
		return slog.NewJSONHandler(w, &o), nil
	}
	return nil, usagef("--log-format %q is not a log format; use text or json", format)
}

// durationSeconds is a slog ReplaceAttr that writes a duration as seconds.
func durationSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key, a.Value.Duration().Seconds())
	}
	return a
}
