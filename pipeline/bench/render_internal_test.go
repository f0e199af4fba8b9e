package bench

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestFailedLineKeys checks that the JSON line of a failed trial has the
// keys of a measured one, in the same order: only its figures are null.
func TestFailedLineKeys(t *testing.T) {
	keys := func(v any) []string { // of a flat object
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		var out []string
		if _, err := dec.Token(); err != nil { // {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, k.(string))
			if _, err := dec.Token(); err != nil { // its scalar value
				t.Fatal(err)
			}
		}
		return out
	}
	measured := keys(jsonLine{Result: Result{Error: "x"}, Partial: true})
	failed := keys(failedLine{Error: "x", Partial: true})
	if len(measured) != 16 || !slices.Equal(measured, failed) {
		t.Errorf("keys of a failed trial's line %q, want those of a measured one %q", failed, measured)
	}
}
