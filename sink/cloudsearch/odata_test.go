package cloudsearch

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

var testFields = FilterableFields{
	{Key: "author", Field: "author", Type: String},
	{Key: "year", Field: "year_field", Type: Int32},
	{Key: "score", Field: "score", Type: Double},
	{Key: "tags", Field: "tags", Type: StringCollection},
	{Key: "draft", Field: "draft", Type: Boolean},
	{Key: "when", Field: "published", Type: DateTimeOffset},
}

// cet is a zone east of UTC, for times that must be written in UTC.
var cet = time.FixedZone("CET", 2*60*60)

func eq(k string, v any) sink.MetadataFilter {
	return sink.MetadataFilter{Key: k, Value: v, Operator: sink.EQ}
}
func in(k string, v any) sink.MetadataFilter {
	return sink.MetadataFilter{Key: k, Value: v, Operator: sink.IN}
}

func TestODataFilterGolden(t *testing.T) {
	tests := []struct {
		name string
		f    *sink.MetadataFilters
	}{
		{"nil", nil},
		{"empty", &sink.MetadataFilters{}},
		{"eq string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", "Ada")}}},
		{"eq quote doubled", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", "O'Brien")}}},
		{"eq int unquoted", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2024)}}},
		{"eq int from json float", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2024.0)}}},
		{"eq int from string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "2024")}}},
		{"eq double", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("score", 0.5)}}},
		{"eq bool", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", true)}}},
		{"eq collection", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("tags", "go")}}},
		{"in strings", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{"Ada", "Linus"})}}},
		{"in strings with quote", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{"O'Brien", "Ada"})}}},
		{"in strings with comma", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{"Lovelace, Ada", "Linus"})}}},
		{"in strings with every delimiter", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{",|;~^\t", "b"})}}},
		{"in numbers", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("year", []int{2023, 2024})}}},
		{"in any", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("year", []any{2023.0, "2024"})}}},
		{"in collection", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("tags", []string{"go", "rust"})}}},
		{"in empty", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("author", []string{})}}},
		{"and", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", "Ada"), in("tags", []string{"go"}), eq("year", 2024)}}},
		{"or", &sink.MetadataFilters{Condition: sink.Or, Filters: []sink.MetadataFilter{eq("author", "Ada"), in("year", []int{1, 2})}}},
		{"eq datetime string", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "2024-05-01T10:00:00Z")}}},
		{"eq datetime string with offset", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "2024-05-01T12:00:00.250+02:00")}}},
		{"eq datetime time.Time", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", time.Date(2024, 5, 1, 12, 0, 0, 0, cet))}}},
		{"in datetimes", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("when", []any{time.Date(2024, 5, 1, 12, 0, 0, 0, cet), "2023-01-02T03:04:05.6Z"})}}},
		{"in datetime times", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("when", []time.Time{time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)})}}},
		{"eq string from time.Time", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("author", time.Date(2024, 5, 1, 12, 0, 0, 0, cet))}}},
	}
	var out strings.Builder
	for _, tt := range tests {
		got, err := ODataFilter(tt.f, testFields)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		fmt.Fprintf(&out, "%s: %s\n", tt.name, got)
	}
	golden(t, "filters.golden", []byte(out.String()))
}

func TestODataFilterErrors(t *testing.T) {
	tests := []struct {
		name    string
		f       *sink.MetadataFilters
		wantMsg []string
	}{
		{"unknown key", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("color", "red")}},
			[]string{`"color"`, "sink.cloudsearch.filterableMetadataFieldKeys", "author, year"}},
		// LlamaIndex's node keys are no metadata: declaring them filterable,
		// as the unknown-key remedy says, is refused for doc_id (the field
		// of that name holds the document id) and would match nothing.
		{"doc_id", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("doc_id", "a.md")}},
			[]string{`"doc_id"`, "would not help", "sink.cloudsearch.docIdFieldKey", "sluice get --doc-id"}},
		{"ref_doc_id", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("ref_doc_id", []string{"a.md", "b.md"})}},
			[]string{`"ref_doc_id"`, "would not help", "sluice get --doc-id"}},
		{"not a number", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "soon")}}, []string{`"year"`, "not a number"}},
		{"not an integer", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 1.5)}}, []string{"not an integer"}},
		{"beyond Edm.Int32", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 3e9)}}, []string{`"year"`, "Edm.Int32", "not an integer in its range"}},
		{"not a bool", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", "yes")}}, []string{"Edm.Boolean"}},
		{"bad operator", &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "author", Value: "a", Operator: ">"}}}, []string{"not supported"}},
		{"datetime injection", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "2024-05-01T10:00:00Z or true")}}, []string{`"when"`, "Edm.DateTimeOffset", "RFC 3339", "2024-05-01T10:00:00Z"}},
		{"datetime injection in a list", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("when", []string{"2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z) or (true"})}}, []string{`"when"`, "RFC 3339"}},
		{"datetime in words", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "yesterday")}}, []string{`"when"`, "RFC 3339"}},
		{"date without time", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "2024-05-01")}}, []string{"RFC 3339"}},
		{"datetime without zone", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "2024-05-01T10:00:00")}}, []string{"RFC 3339"}},
		{"datetime as a number", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", 1714557600)}}, []string{"RFC 3339"}},
		// OData has no literal for these: strconv would write NaN, +Inf.
		{"NaN", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("score", math.NaN())}}, []string{`"score"`, "not a number", "finite"}},
		{"infinity on a double", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("score", math.Inf(1))}}, []string{`"score"`, "finite"}},
		{"infinity on an integer", &sink.MetadataFilters{Filters: []sink.MetadataFilter{in("year", []any{2024, math.Inf(-1)})}}, []string{`"year"`, "finite"}},
		// Edm.DateTimeOffset holds the years 0001 to 9999, in UTC.
		{"datetime in the year 0", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "0000-01-01T00:00:00Z")}}, []string{`"when"`, "0001 and 9999", "year 0 "}},
		{"datetime in the year 10000 in UTC", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", "9999-12-31T23:59:59-01:00")}}, []string{`"when"`, "year 10000"}},
		{"datetime in the year 0 in UTC", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("when", time.Date(1, 1, 1, 0, 30, 0, 0, cet))}}, []string{`"when"`, "0001 and 9999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ODataFilter(tt.f, testFields)
			if !errors.Is(err, sink.ErrInvalidFilter) {
				t.Fatalf("err = %v, want sink.ErrInvalidFilter", err)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestQuoteOData(t *testing.T) {
	tests := map[string]string{"": "''", "a": "'a'", "O'Brien.md": "'O''Brien.md'", "''": "''''''"}
	for in, want := range tests {
		if got := quoteOData(in); got != want {
			t.Errorf("quoteOData(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestODataFilterGoNumberTypes: a number of any Go type filters a numeric
// field as an int does (it used to be refused as "not a number"), and an
// IN list of []int32 as one of []int.
func TestODataFilterGoNumberTypes(t *testing.T) {
	want, err := ODataFilter(&sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 2024), in("year", []int{1, 2})}}, testFields)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]any{{uint16(2024), []int32{1, 2}}, {int16(2024), []uint16{1, 2}}, {float32(2024), []float32{1, 2}}} {
		got, err := ODataFilter(&sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", pair[0]), in("year", pair[1])}}, testFields)
		if err != nil || got != want {
			t.Errorf("%T, %T: %q, %v; want %q", pair[0], pair[1], got, err, want)
		}
	}
}
