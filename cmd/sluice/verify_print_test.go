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
