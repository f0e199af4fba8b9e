package searchtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// specDir is where CI and the dev machine keep the official definitions,
// relative to this package.
const specDir = "../../../../shared/azure-search-spec/2024-07-01"

// needSpec skips the test when the official definitions are missing,
// except under CI (the CI variable set), which always has them: there a
// missing spec fails the test instead of letting it pass unchecked.
func needSpec(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(specDir, "searchindex.json")); err != nil {
		if testenv.InCI() {
			t.Fatalf("official REST definitions not found at %s, and CI is set: CI must check out shared/ beside the repository: %v", specDir, err)
		}
		t.Skipf("official REST definitions not found at %s (clone shared/ beside the repository): %v", specDir, err)
	}
}

func loadTestSchemas(t *testing.T) *schemaSet {
	t.Helper()
	needSpec(t)
	set, err := loadSchemas(specDir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestSpecExamplesValidate proves the validator accepts the request bodies
// of the spec's own examples.
func TestSpecExamplesValidate(t *testing.T) {
	set := loadTestSchemas(t)
	tests := []struct {
		file, param, def string
	}{
		{"SearchIndexIndexDocuments.json", "batch", "IndexBatch"},
		{"SearchIndexSearchDocumentsPost.json", "searchRequest", "SearchRequest"},
		{"SearchIndexSearchDocumentsSemanticPost.json", "searchRequest", "SearchRequest"},
		{"SearchServiceCreateIndex.json", "index", "SearchIndex"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(specDir, "examples", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var ex struct {
				Parameters map[string]json.RawMessage `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &ex); err != nil {
				t.Fatal(err)
			}
			body, ok := ex.Parameters[tt.param]
			if !ok {
				t.Fatalf("example has no parameter %q", tt.param)
			}
			if err := set.validate(tt.def, body); err != nil {
				t.Errorf("example rejected: %v", err)
			}
		})
	}
}

func TestSchemaRejects(t *testing.T) {
	set := loadTestSchemas(t)
	tests := []struct {
		name, def, body string
		at              string // instance location the error must name
	}{
		{"batch without value", "IndexBatch", `{"values": []}`, "at '': missing property 'value'"},
		{"unknown action", "IndexBatch", `{"value": [{"@search.action": "insert", "id": "1"}]}`, "/value/0/@search.action"},
		{"top as string", "SearchRequest", `{"search": "*", "top": "10"}`, "/top"},
		{"unknown queryType", "SearchRequest", `{"search": "x", "queryType": "fancy"}`, "/queryType"},
		{"vector query kind", "SearchRequest", `{"vectorQueries": [{"kind": "nearest", "vector": [1, 2]}]}`, "/vectorQueries/0/kind"},
		{"vector query without vector", "SearchRequest", `{"vectorQueries": [{"kind": "vector", "k": 3}]}`, "missing property 'vector'"},
		{"index without fields", "SearchIndex", `{"name": "x"}`, "missing property 'fields'"},
		{"field type", "SearchIndex", `{"name": "x", "fields": [{"name": "id", "type": 5}]}`, "/fields/0/type"},
		{"index name type", "SearchIndex", `{"name": ["x"], "fields": []}`, "/name"},
		{"dimensions too small", "SearchIndex", `{"name": "x", "fields": [{"name": "v", "type": "Collection(Edm.Single)", "dimensions": 1}]}`, "/fields/0/dimensions"},
		{"dimensions too large", "SearchIndex", `{"name": "x", "fields": [{"name": "v", "type": "Collection(Edm.Single)", "dimensions": 4097}]}`, "/fields/0/dimensions"},
		{"hnsw parameters", "SearchIndex", `{"name": "x", "fields": [{"name": "id", "type": "Edm.String"}],
			"vectorSearch": {"algorithms": [{"name": "a", "kind": "hnsw", "hnswParameters": {"m": 1000}}]}}`, "/vectorSearch/algorithms/0/hnswParameters/m"},
		{"unknown algorithm kind", "SearchIndex", `{"name": "x", "fields": [{"name": "id", "type": "Edm.String"}],
			"vectorSearch": {"algorithms": [{"name": "a", "kind": "ivf"}]}}`, "/vectorSearch/algorithms/0/kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := set.validate(tt.def, []byte(tt.body))
			if !errors.Is(err, errSchema) {
				t.Fatalf("validate(%s) = %v, want a schema error", tt.body, err)
			}
			if !strings.Contains(err.Error(), tt.at) {
				t.Errorf("error does not name %q:\n%v", tt.at, err)
			}
		})
	}
}

func TestSchemaAcceptsSluiceIndex(t *testing.T) {
	set := loadTestSchemas(t)
	if err := set.validate("SearchIndex", readTestdata(t, "index.json")); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaDimensionsFollowTheService checks that the schema takes vector
// fields of up to 4096 dimensions, the service's documented limit, although
// the 2024-07-01 swagger says 2048.
func TestSchemaDimensionsFollowTheService(t *testing.T) {
	set := loadTestSchemas(t)
	for _, dims := range []int{2, 2048, 2049, 3072, 4096} {
		body := fmt.Sprintf(`{"name": "x", "fields": [{"name": "id", "type": "Edm.String", "key": true},
			{"name": "v", "type": "Collection(Edm.Single)", "searchable": true, "dimensions": %d, "vectorSearchProfile": "p"}]}`, dims)
		if err := set.validate("SearchIndex", []byte(body)); err != nil {
			t.Errorf("%d dimensions: %v", dims, err)
		}
	}
}
