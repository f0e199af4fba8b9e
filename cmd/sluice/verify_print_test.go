package main

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
)

// TestPrintVerify checks the summary line of what --verify found.
func TestPrintVerify(t *testing.T) {
	tests := []struct {
		name string
		rep  pipeline.Report
		want string
	}{
		{"not verified", pipeline.Report{}, ""},
		{"no manifest", pipeline.Report{Verify: &pipeline.VerifyReport{}},
			"Verified the store: the manifest records no chunk to look up.\n"},
		{"all held", pipeline.Report{Verify: &pipeline.VerifyReport{NodesChecked: 1}},
			"Verified the store: it holds all 1 chunk the manifest records.\n"},
		{"missing", pipeline.Report{Verify: &pipeline.VerifyReport{NodesChecked: 9, NodesMissing: 2, Documents: 1}},
			"Verified the store: 2 of the 9 chunks the manifest records were missing, in 1 file; those the files still have were written again.\n"},
		{"unlisted, dry run", pipeline.Report{DryRun: true, Verify: &pipeline.VerifyReport{NodesChecked: 9, NodesUnlisted: 3, DocumentsUnlisted: 2}},
			"Verified the store: it holds all 9 chunks the manifest records. It also held 3 chunks of 2 files that the manifest did not list: those files would be read again, which deletes such chunks unless a file still has them or fails.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printVerify(&b, &tt.rep)
			if b.String() != tt.want {
				t.Errorf("printVerify =\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

// TestPrintSummaryCounts: the summary's counts read as English for one
// file and one chunk.
func TestPrintSummaryCounts(t *testing.T) {
	for _, tt := range []struct {
		rep  pipeline.Report
		want string
	}{
		{pipeline.Report{FilesSeen: 1, FilesIngested: 1, FilesAdded: 1, ChunksWritten: 1}, "Ingested 1 of 1 file (1 new, 0 changed, 0 unchanged, 0 deleted, 0 failed): 1 chunk written,"},
		{pipeline.Report{DryRun: true, FilesSeen: 1, ChunksPlanned: 1, ChunksDeleted: 1}, "Dry run over 1 file (0 new, 0 changed, 0 unchanged, 0 deleted, 0 failed): would embed 1 chunk, 0 tokens, and delete 1 chunk;"},
		{pipeline.Report{FilesSeen: 2, FilesIngested: 2, ChunksWritten: 3}, "Ingested 2 of 2 files (0 new, 0 changed, 0 unchanged, 0 deleted, 0 failed): 3 chunks written,"},
	} {
		var b strings.Builder
		printSummary(&b, &tt.rep)
		if !strings.HasPrefix(b.String(), tt.want) {
			t.Errorf("printSummary = %q, want it to start with %q", b.String(), tt.want)
		}
	}
}
