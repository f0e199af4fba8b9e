package sink

import (
	"errors"
	"fmt"
	"testing"
)

// TestWriteErrorMessageIsDeterministic checks that the node a WriteError
// names is the same every time (the smallest id), not whichever one map
// iteration happens to visit first.
func TestWriteErrorMessageIsDeterministic(t *testing.T) {
	many := map[string]error{}
	for i := range 20 {
		many[fmt.Sprintf("node-%02d", 19-i)] = fmt.Errorf("reason %d", 19-i)
	}
	tests := []struct {
		name     string
		failed   map[string]error
		deleting bool
		want     string
	}{
		{"none", nil, false, "sink: write failed"},
		{"no delete", nil, true, "sink: delete failed"},
		{"one not deleted", map[string]error{"a": errors.New("boom")}, true, "sink: node a not deleted: boom"},
		{"two not deleted", map[string]error{"b": errors.New("second"), "a": errors.New("first")}, true, "sink: 2 nodes not deleted, e.g. a: first"},
		{"one", map[string]error{"a": errors.New("boom")}, false, "sink: node a not written: boom"},
		{"two", map[string]error{"b": errors.New("second"), "a": errors.New("first")}, false, "sink: 2 nodes not written, e.g. a: first"},
		{"many", many, false, "sink: 20 nodes not written, e.g. node-00: reason 0"},
		{"nil reason", map[string]error{"a": nil}, false, "sink: node a not written: <nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &WriteError{Failed: tt.failed, Deleting: tt.deleting}
			for range 100 { // map iteration order changes from one range to the next
				if got := e.Error(); got != tt.want {
					t.Fatalf("Error() = %q, want %q", got, tt.want)
				}
			}
			if !errors.Is(e, ErrWrite) {
				t.Errorf("errors.Is(%v, ErrWrite) = false", e)
			}
		})
	}
}
