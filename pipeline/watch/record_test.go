package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// TestRecordOf tells a committed document, the node ids of a run that did
// not finish a document (acknowledged or only intended), a dead letter
// alone and an unknown id apart.
func TestRecordOf(t *testing.T) {
	ctx := context.Background()
	st, err := state.Open(ctx, filepath.Join(t.TempDir(), "state.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := func(doc, id string) map[string][]state.Node { return map[string][]state.Node{doc: {{ID: id}}} }
	if err := run.Ack(ctx, node("done.md", "n1")); err != nil {
		t.Fatal(err)
	}
	if err := run.Commit(ctx, "done.md", state.Stamp{Hash: "h"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := run.Commit(ctx, "empty.md", state.Stamp{Hash: "h"}, ""); err != nil { // a record without chunks
		t.Fatal(err)
	}
	if err := run.Ack(ctx, node("acked.md", "n2")); err != nil {
		t.Fatal(err)
	}
	if err := run.Intend(ctx, node("intended.md", "n3")); err != nil {
		t.Fatal(err)
	}
	if err := st.Fail(ctx, "failed.md", "unreadable", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.Fail(ctx, "done.md", "unreadable", time.Now()); err != nil { // a committed document that failed since
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want record
	}{
		{"done.md", document},
		{"empty.md", document},
		{"acked.md", document},
		{"intended.md", document},
		{"failed.md", deadLetter},
		{"unknown.md", none},
	} {
		if got, err := recordOf(ctx, st, tt.id); err != nil || got != tt.want {
			t.Errorf("recordOf(%s) = %v, %v; want %v", tt.id, got, err, tt.want)
		}
	}
}
