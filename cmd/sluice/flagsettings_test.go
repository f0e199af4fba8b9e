package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/splitter"
)

// TestFlagErrorsNameTheFlag checks that an invalid --include or --exclude
// is reported as the flag and its value, not as the setting it overrides.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	tests := []struct {
		name   string
		config string // sluice.yaml in the folder, if any
		args   []string
		want   string
	}{
		{"include", "", []string{"--include", "[abc"}, `--include '[abc': "[abc" is not a valid glob pattern; check its brackets [] and braces {} (source.include)`},
		{"second include", "", []string{"--include", "*.md", "--include", ""}, "--include '': is an empty pattern"},
		{"exclude after the file's", "source: {exclude: [\"*.tmp\", \"*.bak\"]}\n", []string{"--exclude", "{a,b"}, `--exclude '{a,b': "{a,b" is not a valid glob pattern`},
		{"a quote in the value", "", []string{"--include", "it's["}, `--include 'it'\''s[':`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.config != "" {
				writeFiles(t, dir, map[string]string{"sluice.yaml": tt.config})
			}
			stdout, stderr, code := sluice(t, dir, append([]string{"run", "."}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q\nstdout %s", code, stderr, tt.want, stdout)
			}
			if strings.Contains(stderr, "source.include[") || strings.Contains(stderr, "source.exclude[") {
				t.Errorf("stderr %q names the setting's index instead of the flag", stderr)
			}
		})
	}
	// The file's own patterns are still named as settings.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"sluice.yaml": "source: {exclude: [\"[\"]}\n"})
	if _, stderr, code := sluice(t, dir, "run", ".", "--exclude", "*.tmp", "--config", filepath.Join(dir, "sluice.yaml")); code != exitUsage || !strings.Contains(stderr, "source.exclude[0]") {
		t.Errorf("a bad pattern in the file: exit %d, %q; want it named source.exclude[0]", code, stderr)
	}
}

// TestFlagSettingsExplain checks the helper on its own, with a splitter
// setting too (for a command such as split whose flags override them).
func TestFlagSettingsExplain(t *testing.T) {
	flags := flagSettings{}
	flags.add("splitter.chunkOverlap", "--chunk-overlap", "2000", "splitter.chunkOverlap")
	flags.add("source.include[1]", "--include", "**/*.md", "source.include")

	cfg := splitter.DefaultConfig()
	cfg.ChunkOverlap = 2000
	err := flags.explain(cfg.Validate())
	if got, want := err.Error(), "--chunk-overlap 2000: must be smaller than splitter.chunkSize (1024)"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start with %q", got, want)
	}
	if !errors.Is(err, splitter.ErrInvalidConfig) || exitCodeOf(err) != exitUsage {
		t.Errorf("%v: not a usage error wrapping the splitter's (exit %d)", err, exitCodeOf(err))
	}

	// A setting no flag gave is left alone.
	rerr := &reader.ConfigError{Setting: "source.include[0]", Reason: "is an empty pattern"}
	if got := flags.explain(rerr); got != error(rerr) {
		t.Errorf("setting from the file: got %v, want the error unchanged", got)
	}
	other := errors.New("other")
	if got := flags.explain(other); got != other {
		t.Errorf("other error: got %v", got)
	}
}
