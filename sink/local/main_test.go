package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/sink"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBenchFixture()
		os.Exit(code)
	}))
}

// openTest opens a store in a fresh temporary directory and closes it when
// the test ends.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "index.db")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustAdd adds nodes and fails the test on error.
func mustAdd(t testing.TB, s *Store, nodes ...sink.Node) {
	t.Helper()
	if _, err := s.Add(context.Background(), nodes); err != nil {
		t.Fatalf("Add: %v", err)
	}
}

func node(id, doc, text string, emb ...float32) sink.Node {
	return sink.Node{ID: id, RefDocID: doc, Text: text, Embedding: emb}
}

func nodeIDs(nodes []sink.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

func scoredIDs(nodes []sink.ScoredNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}
