package local

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// TestGetNodesGolden pins the shape of nodes read back: field names, the
// deterministic order, and the Go types metadata values decode to (shown
// with %T next to the JSON).
func TestGetNodesGolden(t *testing.T) {
	s := openTest(t)
	mustAdd(t, s, filterCorpus...)
	nodes, err := s.GetNodes(context.Background(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, n := range nodes {
		types := map[string]string{}
		for k, v := range n.Metadata {
			types[k] = typeName(v)
		}
		if err := enc.Encode(struct {
			Node  any               `json:"node"`
			Dims  int               `json:"dims"`
			Types map[string]string `json:"metadata_types,omitempty"`
		}{n, len(n.Embedding), types}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Golden(t, filepath.Join("testdata", "getnodes.golden"), buf.Bytes())
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case float64:
		return "float64"
	case bool:
		return "bool"
	case []string:
		return "[]string"
	case []float64:
		return "[]float64"
	case []any:
		return "[]any"
	}
	return "other"
}
