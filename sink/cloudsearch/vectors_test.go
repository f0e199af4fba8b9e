package cloudsearch

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// vectorSearches counts the searches answered that selected the vector
// field.
func vectorSearches(t *testing.T, srv *searchtest.Server) int {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if r.Method != http.MethodPost || r.Path != "/indexes/docs/docs/search" {
			continue
		}
		var req struct {
			Select string `json:"select"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatalf("search body %s: %v", r.Body, err)
		}
		if r.Status == http.StatusOK && slices.Contains(strings.Split(req.Select, ","), "embedding") {
			n++
		}
	}
	return n
}

// TestNodeVectors reads back the vectors of uploaded nodes, in pages of
// vectorIDsPerQuery ids, from the index Sluice creates (its vector field
// retrievable, as LlamaIndex.TS creates it), and checks that an index that
// does not return its vector field or its chunk lends nothing and is not
// searched: one whose vector field is not retrievable (as Sluice created
// them before), one whose configuration hides the vector field, and, with
// NoValidation, each learnt from the definition read once. Doctor says
// when copies are embedded again.
func TestNodeVectors(t *testing.T) {
	ctx := context.Background()
	notRetrievable := func(t *testing.T, url string) {
		def := testConfig(url).Definition()
		def.Fields[fieldIndexOf(def, "embedding")].Retrievable = ptr(false)
		if st, b := postIndex(t, url, def); st != http.StatusCreated {
			t.Fatalf("create the index: %d %s", st, b)
		}
	}
	sluiceIndex := func(t *testing.T, url string) {
		if st, b := postIndex(t, url, testConfig(url).Definition()); st != http.StatusCreated {
			t.Fatalf("create the index: %d %s", st, b)
		}
	}
	for _, tt := range []struct {
		name   string
		create func(t *testing.T, url string) // nil: the store creates it
		mutate func(*Config)
		lends  bool // LendsVectors once the store is open
		reads  bool // NodeVectors returns the vectors
	}{
		{name: "created by the store", lends: true, reads: true},
		{name: "Sluice's index, validated", create: sluiceIndex, mutate: func(c *Config) { c.IndexManagement = ValidateIndex }, lends: true, reads: true},
		{name: "Sluice's index, not validated", create: sluiceIndex, mutate: func(c *Config) { c.IndexManagement = NoValidation }, lends: false, reads: true},
		{name: "vector field not retrievable", create: notRetrievable, mutate: func(c *Config) { c.IndexManagement = ValidateIndex }},
		{name: "vector field not retrievable, not validated", create: notRetrievable, mutate: func(c *Config) { c.IndexManagement = NoValidation }},
		{name: "vector field hidden", mutate: func(c *Config) { c.HiddenFieldKeys = []string{"embedding"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := startRulesServer(t)
			if tt.create != nil {
				tt.create(t, url)
			}
			s, err := openStore(t, url, tt.mutate)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.LendsVectors(); got != tt.lends {
				t.Errorf("LendsVectors = %v, want %v", got, tt.lends)
			}
			// sluice doctor says when copies are embedded again.
			found := false
			for _, c := range s.Doctor(ctx, 0) {
				if c.Name != "index docs" {
					continue
				}
				found = true
				if strings.Contains(c.Detail, "embedded again") == tt.reads {
					t.Errorf("doctor: %s: %s; want it to say whether copies are embedded again (%v)", c.Name, c.Detail, !tt.reads)
				}
			}
			if !found {
				t.Error("doctor has no check of the index")
			}
			nodes := makeNodes("a.md", 2*vectorIDsPerQuery+5)
			if _, err := s.Add(ctx, nodes); err != nil {
				t.Fatal(err)
			}
			ids := []string{"absent"}
			for _, n := range nodes {
				ids = append(ids, n.ID)
			}
			got, err := s.NodeVectors(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.reads {
				if len(got) != 0 || vectorSearches(t, srv) != 0 {
					t.Errorf("NodeVectors returned %d nodes after %d searches for vectors; want none, unasked", len(got), vectorSearches(t, srv))
				}
				if s.LendsVectors() {
					t.Error("LendsVectors = true after NodeVectors found the vectors unreadable")
				}
				return
			}
			if len(got) != len(nodes) {
				t.Fatalf("NodeVectors returned %d nodes, want %d", len(got), len(nodes))
			}
			if n := vectorSearches(t, srv); n != 3 {
				t.Errorf("%d searches for %d ids, want 3 (%d ids at a time)", n, len(ids), vectorIDsPerQuery)
			}
			byID := map[string]sink.Node{}
			for _, n := range got {
				byID[n.ID] = n
			}
			for _, n := range nodes {
				g := byID[n.ID]
				if g.Text != n.Text || !slices.Equal(g.Embedding, n.Embedding) {
					t.Fatalf("node %s read back as %q %v, want %q %v", n.ID, g.Text, g.Embedding, n.Text, n.Embedding)
				}
			}
			if !s.LendsVectors() {
				t.Error("LendsVectors = false after NodeVectors read the vectors")
			}
		})
	}
}

// fieldIndexOf returns the index of the field name in def.
func fieldIndexOf(def IndexDefinition, name string) int {
	for i, f := range def.Fields {
		if f.Name == name {
			return i
		}
	}
	panic("no field " + name)
}
