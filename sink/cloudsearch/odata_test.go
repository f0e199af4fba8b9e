package cloudsearch

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

var testFields = FilterableFields{
	{Key: "author", Field: "author", Type: String},
	{Key: "year", Field: "year_field", Type: Int32},
	{Key: "score", Field: "score", Type: Double},
	{Key: "tags", Field: "tags", Type: StringCollection},
	{Key: "draft", Field: "draft", Type: Boolean},
}

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
		{"not a number", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", "soon")}}, []string{`"year"`, "not a number"}},
		{"not an integer", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("year", 1.5)}}, []string{"not an integer"}},
		{"not a bool", &sink.MetadataFilters{Filters: []sink.MetadataFilter{eq("draft", "yes")}}, []string{"Edm.Boolean"}},
		{"bad operator", &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: "author", Value: "a", Operator: ">"}}}, []string{"not supported"}},
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
