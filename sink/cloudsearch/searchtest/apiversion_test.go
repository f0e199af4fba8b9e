package searchtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestAPIVersionRefusedAsTheService checks the answer to a missing
// api-version and to one the service does not serve: 400 with the
// service's one message for both, which names no version (client code,
// the store's included, recognizes the refusal by it).
func TestAPIVersionRefusedAsTheService(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	for _, q := range []string{"", "?api-version=", "?api-version=1999-01-01", "?api-version=2099-01-01", "?api-version=2024-07-10-preview", "?api-version=latest"} {
		t.Run(q, func(t *testing.T) {
			st, b := callWith(t, url, http.MethodGet, "/indexes"+q, nil, map[string]string{"api-key": testKey})
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(b, &e); err != nil || st != http.StatusBadRequest || e.Error.Message != InvalidAPIVersionMessage {
				t.Errorf("GET /indexes%s: %d %s, want 400 with message %q", q, st, b, InvalidAPIVersionMessage)
			}
		})
	}
}
