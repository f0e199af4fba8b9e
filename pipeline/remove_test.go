package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// orderedDeleter is a store whose Delete checks that the manifest still
// holds the document's record, then fails with err if set.
type orderedDeleter struct {
	t        *testing.T
	store    *memStore
	manifest *state.Store
	err      error
	calls    int
}

func (d *orderedDeleter) Delete(ctx context.Context, refDocID string) error {
	d.calls++
	if _, recorded, err := d.manifest.Doc(ctx, refDocID); err != nil || !recorded {
		d.t.Errorf("store delete of %s after the manifest forgot it (recorded %v, %v)", refDocID, recorded, err)
	}
	if d.err != nil {
		return d.err
	}
	return d.store.Delete(ctx, refDocID)
}

// TestRemoveDocument checks the order of a removal: the store first, then
// the manifest, so that a store delete that fails leaves the record and the
// next run, finding the file gone, deletes the nodes again.
func TestRemoveDocument(t *testing.T) {
	errDown := errors.New("store down")
	tests := []struct {
		name     string
		storeErr error
		recorded bool // the record is still there after RemoveDocument
	}{
		{"store delete succeeds", nil, false},
		{"store delete fails", errDown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			in := newIncr(t, map[string]string{"a.md": paragraphText("alpha", 20), "b.md": "Bravo."})
			in.run(nil)
			d := &orderedDeleter{t: t, store: in.store, manifest: in.state, err: tt.storeErr}
			err := RemoveDocument(ctx, d, in.state, "a.md")
			if !errors.Is(err, tt.storeErr) || (tt.storeErr == nil) != (err == nil) {
				t.Errorf("RemoveDocument = %v, want %v", err, tt.storeErr)
			}
			if d.calls != 1 {
				t.Errorf("store Delete called %d times, want 1", d.calls)
			}
			if _, recorded, err := in.state.Doc(ctx, "a.md"); err != nil || recorded != tt.recorded {
				t.Fatalf("record of a.md after RemoveDocument: %v (%v), want %v", recorded, err, tt.recorded)
			}

			// The file goes too: the next run deletes what is left.
			if err := os.Remove(filepath.Join(in.root, "a.md")); err != nil {
				t.Fatal(err)
			}
			rep := in.run(nil)
			if want := map[bool]int{true: 1}[tt.recorded]; rep.FilesDeleted != want {
				t.Errorf("next run deleted %d documents, want %d", rep.FilesDeleted, want)
			}
			if n := len(in.store.byDoc()["a.md"]); n != 0 {
				t.Errorf("%d nodes of a.md left after the next run", n)
			}
			if _, recorded, err := in.state.Doc(ctx, "a.md"); err != nil || recorded {
				t.Errorf("record of a.md after the next run: %v (%v), want none", recorded, err)
			}
		})
	}
}
