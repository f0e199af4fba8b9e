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

// TestDocIDFlagHelp checks that get and delete show --doc-id alike, with
// the REF_DOC_ID of their usage lines and of DESIGN.md's contract rather
// than pflag's "string".
func TestDocIDFlagHelp(t *testing.T) {
	for _, cmd := range []string{"get", "delete"} {
		t.Run(cmd, func(t *testing.T) {
			out, stderr, code := sluice(t, "", cmd, "--help")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !regexp.MustCompile(`(?m)^\s+--doc-id REF_DOC_ID\s`).MatchString(out) { // the flag's line, not the usage line
				t.Errorf("%s --help does not show --doc-id REF_DOC_ID:\n%s", cmd, out)
			}
		})
	}
}
