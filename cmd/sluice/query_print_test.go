package main

import (
	"strings"
	"testing"
)

// TestPrintResultScores: the text output shows the score the results are
// ranked by; for semantic_hybrid that is the reranker's, shown first, so
// that the list does not look unsorted by the fusion score beside it; get,
// which ranks nothing, shows no score.
func TestPrintResultScores(t *testing.T) {
	reranked := 2.5
	tests := []struct {
		name string
		r    resultLine
		want string
	}{
		{"vector, sparse, hybrid", resultLine{ID: "0123456789abcdef", DocID: "a.md", Score: 0.0325, Text: "Alpha  beta\ngamma"},
			" 1. a.md  score=0.0325  id=0123456789ab\n    Alpha beta gamma\n"},
		{"semantic_hybrid", resultLine{ID: "0123456789abcdef", DocID: "a.md", Score: 0.0318, RerankerScore: &reranked, Text: "Alpha"},
			" 1. a.md  reranker_score=2.5000  score=0.0318  id=0123456789ab\n    Alpha\n"},
		{"get lists without ranking", resultLine{ID: "0123456789abcdef", DocID: "a.md", Text: "Alpha", Unranked: true},
			" 1. a.md  id=0123456789ab\n    Alpha\n"},
		// A document's escape sequences, bell, C1 controls and bidirectional
		// overrides never reach the terminal; its name is quoted.
		{"control characters", resultLine{ID: "0123456789abcdef", DocID: "\u202eevil.md", Unranked: true,
			Text: "Red \x1b[31mtext\x1b[0m\x07 title \x1b]0;owned\x07 csi \u009b2J \u202eright\u202c back\x08."},
			" 1. \"\\u202eevil.md\"  id=0123456789ab\n    Red \ufffd[31mtext\ufffd[0m\ufffd title \ufffd]0;owned\ufffd csi \ufffd2J \ufffdright\ufffd back\ufffd.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := printResult(&b, false, 1, tt.r); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// TestQueryTextArgument: query without its TEXT, or with a text the shell
// split into words, exits 2 saying what to pass.
func TestQueryTextArgument(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"query"}, `query needs the TEXT to search for: sluice query "how are chunks embedded"`},
		{[]string{"query", "the", "scheduler"}, `query takes one TEXT, got 2 words: quote a text of several words, as in sluice query "the scheduler"`},
	} {
		_, stderr, code := sluice(t, t.TempDir(), tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("sluice %v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}
