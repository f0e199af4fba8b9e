package cloudsearch

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

func testNode() sink.Node {
	return sink.Node{
		ID: sink.NodeID("docs/O'Brien.md", "Hello world.", 0), RefDocID: "docs/O'Brien.md", Text: "Hello world.",
		Embedding: []float32{0.25, -0.5, 1},
		Metadata:  map[string]any{"author": "O'Brien", "year": 2024, "tags": []string{"a", "b"}},
		StartChar: 3, EndChar: 15,
	}
}

func TestToDocumentGolden(t *testing.T) {
	c := DefaultConfig()
	c.IndexName = "docs"
	c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, {Key: "year", Field: "year_field", Type: Int32}, {Key: "tags", Type: StringCollection}, {Key: "absent"}}
	c = c.normalize()
	n := testNode()
	d, err := c.toDocument(&n, actionMergeOrUpload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "document.golden.json", append(b, '\n'))

	// The metadata string carries LlamaIndex's keys, all naming the reference document.
	var md map[string]any
	if err := json.Unmarshal([]byte(d["metadata"].(string)), &md); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"document_id", "doc_id", "ref_doc_id"} {
		if md[k] != n.RefDocID {
			t.Errorf("metadata[%s] = %v, want %s", k, md[k], n.RefDocID)
		}
	}
	if d["doc_id"] != n.RefDocID {
		t.Errorf("doc_id field = %v, want the reference document id %s (not the node id)", d["doc_id"], n.RefDocID)
	}
	var nc map[string]any
	if err := json.Unmarshal([]byte(md["_node_content"].(string)), &nc); err != nil {
		t.Fatal(err)
	}
	if nc["text"] != "" || nc["id_"] != n.ID || nc["class_name"] != "TextNode" {
		t.Errorf("_node_content = %v", nc)
	}
	src := nc["relationships"].(map[string]any)["1"].(map[string]any)
	if src["node_id"] != n.RefDocID {
		t.Errorf("SOURCE relationship = %v, want node_id %s", src, n.RefDocID)
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	c := DefaultConfig()
	c.IndexName = "docs"
	c = c.normalize()
	n := testNode()
	d, err := c.toDocument(&n, actionMergeOrUpload)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := c.fromDocument(back)
	want := n
	want.Metadata = map[string]any{"author": "O'Brien", "year": float64(2024), "tags": []string{"a", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestFieldValueErrors(t *testing.T) {
	tests := []struct {
		name string
		v    any
		ff   FilterableField
		fix  string // the remedy the message must give; "" = not checked
	}{
		{"int32 from text", "many", FilterableField{Key: "n", Field: "n", Type: Int32}, "give the document a number, or declare the field sink.cloudsearch.filterableMetadataFieldKeys: {n: [n, STRING]}"},
		{"int32 overflow", 1 << 40, FilterableField{Key: "n", Field: "n_f", Type: Int32}, "{n: [n_f, INT64]}"},
		{"int from fraction", 1.5, FilterableField{Key: "n", Field: "n", Type: Int64}, "{n: [n, DOUBLE]} (any number)"},
		{"int32 from list", []int{1, 2}, FilterableField{Key: "n", Field: "n", Type: Int32}, "{n: [n, COLLECTION]}, or give the document a single value"},
		{"string from list", []string{"a"}, FilterableField{Key: "s", Field: "s", Type: String}, "declare a list as a collection, sink.cloudsearch.filterableMetadataFieldKeys: {s: [s, COLLECTION]}"},
		{"bool from text", "yes", FilterableField{Key: "b", Field: "b", Type: Boolean}, "give the document true or false"},
		{"datetime from text", "soon", FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}, ""},
		{"datetime with a filter in it", "2024-05-01T10:00:00Z or true", FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}, ""},
		{"datetime without zone", "2024-05-01T10:00:00", FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}, ""},
		{"datetime from number", 1714557600, FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}, ""},
		// JSON has no NaN or infinity, and int64(+Inf) is garbage.
		{"int64 from infinity", math.Inf(1), FilterableField{Key: "n", Field: "n", Type: Int64}, ""},
		{"int64 overflow", 1e19, FilterableField{Key: "n", Field: "n", Type: Int64}, "declare the field sink.cloudsearch.filterableMetadataFieldKeys: {n: [n, DOUBLE]} (any number), or give"},
		{"int64 at 2^63", 9223372036854775808.0, FilterableField{Key: "n", Field: "n", Type: Int64}, ""},
		{"double from NaN", math.NaN(), FilterableField{Key: "x", Field: "x", Type: Double}, ""},
		{"double from infinity", math.Inf(-1), FilterableField{Key: "x", Field: "x", Type: Double}, ""},
		{"datetime in the year 10000 in UTC", "9999-12-31T23:59:59-01:00", FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fieldValue(tt.v, tt.ff)
			if err == nil || !strings.Contains(err.Error(), "filterableMetadataFieldKeys."+tt.ff.Key) {
				t.Fatalf("fieldValue(%v) = %v, want an error naming the setting", tt.v, err)
			}
			if tt.fix != "" && !strings.Contains(err.Error(), tt.fix) {
				t.Errorf("fieldValue(%v) = %q, want it to say %q", tt.v, err, tt.fix)
			}
			// A field's new type needs a new index, which a run with
			// NoValidation does not create.
			const recreate = "`sluice index delete`, `sluice index create`, then `sluice run`, with this command's --config if it has one"
			if tt.fix != "" && !strings.Contains(err.Error(), recreate) {
				t.Errorf("fieldValue(%v) = %q, want it to say %s", tt.v, err, recreate)
			}
		})
	}
}

// TestFieldValueDateTimeOffset checks that an Edm.DateTimeOffset field
// gets RFC 3339 in UTC from a time.Time or an RFC 3339 string, as filters
// on it are written, and that a string field holding a time gets it in the
// same form.
func TestFieldValueDateTimeOffset(t *testing.T) {
	when := FilterableField{Key: "when", Field: "when", Type: DateTimeOffset}
	tests := []struct {
		name string
		v    any
		ff   FilterableField
		want any
	}{
		{"time.Time in UTC", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), when, "2024-05-01T10:00:00Z"},
		{"time.Time with an offset", time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CET", 7200)), when, "2024-05-01T10:00:00Z"},
		{"fractional seconds", time.Date(2024, 5, 1, 10, 0, 0, 5e8, time.UTC), when, "2024-05-01T10:00:00.5Z"},
		{"RFC 3339 string", "2024-05-01T10:00:00Z", when, "2024-05-01T10:00:00Z"},
		{"RFC 3339 string with offset", "2024-05-01T06:00:00.125-04:00", when, "2024-05-01T10:00:00.125Z"},
		{"string field holding a time", time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CET", 7200)), FilterableField{Key: "s", Field: "s", Type: String}, "2024-05-01T10:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fieldValue(tt.v, tt.ff)
			if err != nil || got != tt.want {
				t.Errorf("fieldValue(%v) = %v, %v; want %v", tt.v, got, err, tt.want)
			}
		})
	}
}

// TestReadLlamaIndexDocuments reads documents as LlamaIndex's Python store
// (doc_id = reference document) and TypeScript store (doc_id = node id)
// write them.
func TestReadLlamaIndexDocuments(t *testing.T) {
	c := DefaultConfig()
	c.IndexName = "docs"
	c = c.normalize()
	tests := []struct {
		file string
		want sink.Node
	}{
		{"llamaindex_python_doc.json", sink.Node{
			ID: "3f1c6a0e-8d4b-4a53-9a3e-2b1e7d9a0c11", RefDocID: "doc-rivers", Text: "Rivers carry sediment to the sea.",
			Metadata:  map[string]any{"file_name": "rivers.md", "author": "Ada", "tags": []string{"water", "geo"}, "year": float64(2024)},
			StartChar: 10, EndChar: 43,
		}},
		{"llamaindex_ts_doc.json", sink.Node{
			ID: "9b2d4f60-1c1e-4c55-8f0b-6a2f0e3d7b22", RefDocID: "doc-ice", Text: "Glaciers move slowly.",
			Metadata:  map[string]any{"file_name": "ice.md", "author": "Linus"},
			StartChar: 5, EndChar: 26,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var d map[string]any
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if got := c.fromDocument(d); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadForeignDocumentWithoutNodeContent(t *testing.T) {
	c := DefaultConfig().normalize()
	got := c.fromDocument(map[string]any{"id": "k1", "chunk": "text", "doc_id": "ref", "metadata": "not json"})
	want := sink.Node{ID: "k1", Text: "text", RefDocID: "ref", Metadata: map[string]any{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
