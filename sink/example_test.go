package sink_test

import (
	"fmt"

	"github.com/sluice-dev/sluice/sink"
)

func ExampleMetadataFilters_Match() {
	filters := &sink.MetadataFilters{
		Condition: sink.And,
		Filters: []sink.MetadataFilter{
			{Key: "file_type", Operator: sink.EQ, Value: "text/markdown"},
			{Key: "tags", Operator: sink.IN, Value: []string{"go", "rust"}},
		},
	}
	fmt.Println(filters.Match(map[string]any{"file_type": "text/markdown", "tags": []string{"go", "search"}}))
	fmt.Println(filters.Match(map[string]any{"file_type": "text/plain", "tags": []string{"go"}}))
	// Output:
	// true
	// false
}

func ExampleNodeID() {
	// The same chunk of the same document always gets the same id, so a
	// re-run overwrites its node instead of adding a duplicate.
	id := sink.NodeID("guides/intro.md", "Sluice loads folders into vector indexes.", 0)
	fmt.Println(len(id), id == sink.NodeID("guides/intro.md", "Sluice loads folders into vector indexes.", 0))
	// Output: 64 true
}
