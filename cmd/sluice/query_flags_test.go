package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestQueryFlagErrorsNameTheFlag checks that a query refused for a flag's
// value names the flag, as the README promises of every usage error.
func TestQueryFlagErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := sluice(t, dir, "index", "create"); code != exitOK {
		t.Fatalf("index create: exit %d: %s", code, stderr)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown mode", []string{"query", "x", "--mode", "fuzzy"}, []string{"--mode", `"fuzzy"`, "vector, hybrid, semantic_hybrid, sparse"}},
		{"top-k below 1", []string{"query", "x", "--top-k", "0"}, []string{"--top-k is 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := sluice(t, dir, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not name %q", stderr, w)
				}
			}
		})
	}
}

// TestFlagHelpNames checks the names --help gives flags' values: those of
// the usage lines, the README and DESIGN.md's contract (--config FILE,
// --doc-id REF_DOC_ID, --top-k N, ...) rather than pflag's "string" and
// "int", and get and delete show --doc-id alike.
func TestFlagHelpNames(t *testing.T) {
	tests := []struct {
		cmd  []string
		flag string // the flag and its value's name, as the flag's line starts
	}{
		{[]string{"get"}, "--doc-id REF_DOC_ID"},
		{[]string{"delete"}, "--doc-id REF_DOC_ID"},
		{[]string{"run"}, "--config FILE"},
		{[]string{"run"}, "--log-format FORMAT"},
		{[]string{"query"}, "--mode MODE"},
		{[]string{"query"}, "--top-k N"},
		{[]string{"split"}, "--chunk-size N"},
		{[]string{"split"}, "--chunk-overlap N"},
		{[]string{"devserver", "search"}, "--key KEY"},
		{[]string{"devserver", "search"}, "--spec-dir DIR"},
		{[]string{"devserver", "embeddings"}, "--key KEY"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.cmd, " ")+" "+tt.flag, func(t *testing.T) {
			out, stderr, code := sluice(t, "", append(tt.cmd, "--help")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// The flag's own line, not a usage line that names it.
			if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(tt.flag) + `\s`).MatchString(out) {
				t.Errorf("%s --help does not list %s:\n%s", strings.Join(tt.cmd, " "), tt.flag, out)
			}
		})
	}
}
