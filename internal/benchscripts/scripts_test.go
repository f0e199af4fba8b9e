package benchscripts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestScriptArguments checks that every benchmark script prints its usage
// for -h and --help, and refuses an option or a malformed number with exit
// code 2 and its usage, before it builds or downloads anything: a user who
// asks for help must not start a corpus build of minutes. The environment
// points the scripts at an empty shared folder and a missing binary, so
// that a script that went on would fail at once instead (exit 1), and
// runs them in a temporary folder.
func TestScriptArguments(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripts need bash")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	empty := t.TempDir()
	here := benchmarksDir(t)
	run := func(t *testing.T, script string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, append([]string{filepath.Join(here, script)}, args...)...)
		cmd.Dir = empty // where a script that went on would write
		cmd.Env = append(os.Environ(), "SLUICE_SHARED="+empty, "SLUICE_BIN="+filepath.Join(empty, "no-sluice"), "TMPDIR="+empty)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("%s %q: %v", script, args, err)
		}
		return out.String(), errOut.String(), code
	}
	tests := []struct {
		script string
		bad    [][]string // each refused with exit 2
		want   string     // in the error of bad[0]
	}{
		{"compare.sh", [][]string{{"ten"}, {"0"}, {"1", "2"}, {"-k"}}, "SIZE_MB must be a number above 0, got 'ten'"},
		{"memory.sh", [][]string{{"10", "big"}, {"0.5"}, {"--keep"}}, "SIZES_MB must be a whole number above 0, got 'big'"},
		{"removal.sh", [][]string{{"fifty"}, {"50", "docs", "extra"}}, "SIZE_MB must be a number above 0, got 'fifty'"},
		{"copies.sh", [][]string{{"1e3"}, {"-1"}}, "SIZE_MB must be a number above 0, got '1e3'"},
		{"watch-churn.sh", [][]string{{"1.5"}, {"0"}, {"3", "4"}}, "TRIALS must be a whole number above 0, got '1.5'"},
		{"bench-sim.sh", [][]string{{"-o"}, {"out", "more"}}, "unknown option -o"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			usageLine := "benchmarks/" + tt.script
			for _, flag := range []string{"-h", "--help"} {
				stdout, stderr, code := run(t, tt.script, flag)
				if code != 0 || !strings.HasPrefix(stdout, tt.script+" — ") || !strings.Contains(stdout, usageLine) {
					t.Errorf("%s %s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and the usage", tt.script, flag, code, stdout, stderr)
				}
			}
			for i, args := range tt.bad {
				_, stderr, code := run(t, tt.script, args...)
				if code != 2 || !strings.Contains(stderr, usageLine) {
					t.Errorf("%s %q: exit %d, stderr:\n%s\nwant exit 2 and the usage", tt.script, args, code, stderr)
				}
				if i == 0 && !strings.Contains(stderr, tt.want) {
					t.Errorf("%s %q: stderr lacks %q:\n%s", tt.script, args, tt.want, stderr)
				}
			}
		})
	}
}

// TestParityUsage checks that splitter/parity.mjs without its two files
// prints its usage and exits 2, instead of a stack trace about an
// undefined path.
func TestParityUsage(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	for _, args := range [][]string{nil, {"only.jsonl"}, {"--help"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, node, append([]string{filepath.Join(benchmarksDir(t), "splitter", "parity.mjs")}, args...)...).CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(string(out), "usage: node parity.mjs LLAMAINDEX.jsonl SLUICE.jsonl") {
			t.Errorf("node parity.mjs %q: %v, output:\n%s\nwant exit 2 and the usage", args, err, out)
		}
	}
}

// benchmarksDir returns the absolute path of the repository's benchmarks
// folder.
func benchmarksDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "benchmarks"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
