package sink

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	md := map[string]any{
		"author": "O'Brien",
		"year":   float64(2024),
		"tags":   []string{"go", "search"},
		"any":    []any{"x", float64(3)},
	}
	eq := func(k string, v any) MetadataFilter { return MetadataFilter{Key: k, Value: v, Operator: EQ} }
	in := func(k string, v any) MetadataFilter { return MetadataFilter{Key: k, Value: v, Operator: IN} }
	tests := []struct {
		name string
		f    *MetadataFilters
		want bool
	}{
		{"nil matches", nil, true},
		{"empty matches", &MetadataFilters{}, true},
		{"eq string", &MetadataFilters{Filters: []MetadataFilter{eq("author", "O'Brien")}}, true},
		{"eq string mismatch", &MetadataFilters{Filters: []MetadataFilter{eq("author", "obrien")}}, false},
		{"eq missing key", &MetadataFilters{Filters: []MetadataFilter{eq("nope", "x")}}, false},
		{"eq number int vs float", &MetadataFilters{Filters: []MetadataFilter{eq("year", 2024)}}, true},
		{"eq number as string", &MetadataFilters{Filters: []MetadataFilter{eq("year", "2024")}}, true},
		{"eq number as non-numeric string", &MetadataFilters{Filters: []MetadataFilter{eq("year", "twenty")}}, false},
		{"eq collection contains", &MetadataFilters{Filters: []MetadataFilter{eq("tags", "go")}}, true},
		{"eq collection lacks", &MetadataFilters{Filters: []MetadataFilter{eq("tags", "rust")}}, false},
		{"eq []any collection number", &MetadataFilters{Filters: []MetadataFilter{eq("any", 3)}}, true},
		{"in string", &MetadataFilters{Filters: []MetadataFilter{in("author", []string{"a", "O'Brien"})}}, true},
		{"in string miss", &MetadataFilters{Filters: []MetadataFilter{in("author", []string{"a", "b"})}}, false},
		{"in collection overlap", &MetadataFilters{Filters: []MetadataFilter{in("tags", []string{"rust", "search"})}}, true},
		{"in numbers", &MetadataFilters{Filters: []MetadataFilter{in("year", []int{2023, 2024})}}, true},
		{"and both", &MetadataFilters{Filters: []MetadataFilter{eq("author", "O'Brien"), eq("tags", "go")}}, true},
		{"and one fails", &MetadataFilters{Filters: []MetadataFilter{eq("author", "O'Brien"), eq("tags", "rust")}}, false},
		{"or one holds", &MetadataFilters{Condition: Or, Filters: []MetadataFilter{eq("author", "x"), eq("tags", "go")}}, true},
		{"or none holds", &MetadataFilters{Condition: Or, Filters: []MetadataFilter{eq("author", "x"), eq("tags", "rust")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := tt.f.Match(md); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilterValidate(t *testing.T) {
	tests := []struct {
		name string
		f    *MetadataFilters
	}{
		{"bad operator", &MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "b", Operator: ">"}}}},
		{"empty key", &MetadataFilters{Filters: []MetadataFilter{{Value: "b", Operator: EQ}}}},
		{"eq with list", &MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: []string{"b"}, Operator: EQ}}}},
		{"in with scalar", &MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "b", Operator: IN}}}},
		{"bad condition", &MetadataFilters{Condition: "xor", Filters: []MetadataFilter{{Key: "a", Value: "b", Operator: EQ}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.Validate()
			if !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("Validate = %v, want ErrInvalidFilter", err)
			}
		})
	}
}

func TestQueryValidate(t *testing.T) {
	vec := []float32{1, 0}
	tests := []struct {
		name string
		q    Query
		want error
	}{
		{"vector ok", Query{Embedding: vec}, nil},
		{"vector without embedding", Query{Mode: Vector}, ErrInvalidQuery},
		{"sparse needs text", Query{Mode: Sparse}, ErrInvalidQuery},
		{"sparse ok without vector", Query{Mode: Sparse, QueryStr: "x"}, nil},
		{"sparse with white space only", Query{Mode: Sparse, QueryStr: " \t\n"}, ErrInvalidQuery},
		{"hybrid needs text", Query{Mode: Hybrid, Embedding: vec}, ErrInvalidQuery},
		{"semantic needs text", Query{Mode: SemanticHybrid, Embedding: vec}, ErrInvalidQuery},
		{"hybrid ok", Query{Mode: Hybrid, Embedding: vec, QueryStr: "x"}, nil},
		{"unknown mode", Query{Mode: "fuzzy", QueryStr: "x"}, ErrUnsupported},
		// Names ParseQueryMode accepts from users are not the constants.
		{"mode in capitals", Query{Mode: "HYBRID", Embedding: vec, QueryStr: "x"}, ErrUnsupported},
		{"mode named default", Query{Mode: "default", Embedding: vec}, ErrUnsupported},
		{"negative topK", Query{Embedding: vec, TopK: -1}, ErrInvalidQuery},
		{"bad filter", Query{Embedding: vec, Filters: &MetadataFilters{Filters: []MetadataFilter{{Key: "a", Operator: "!="}}}}, ErrInvalidFilter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.q.Validate()
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
		})
	}
	if (Query{}).K() != DefaultTopK || (Query{TopK: 7}).K() != 7 {
		t.Error("K() does not default to DefaultTopK")
	}
}

func TestNodeID(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9=-][A-Za-z0-9_=-]*$`)
	a := NodeID("docs/a.md", "hello", 0)
	if !valid.MatchString(a) || len(a) > 1024 {
		t.Fatalf("NodeID %q is not a valid key", a)
	}
	if a != NodeID("docs/a.md", "hello", 0) {
		t.Error("NodeID is not deterministic")
	}
	distinct := []string{
		NodeID("docs/a.md", "hello", 1),
		NodeID("docs/b.md", "hello", 0),
		NodeID("docs/a.md", "hello!", 0),
		NodeID("docs/a.m", "dhello", 0), // boundary between id and text must matter
	}
	for _, b := range distinct {
		if a == b {
			t.Errorf("NodeID collision: %q", b)
		}
	}
}

func TestCheckDimensions(t *testing.T) {
	nodes := []Node{{ID: "a", Embedding: make([]float32, 3)}, {ID: "b", Embedding: make([]float32, 2)}}
	err := CheckDimensions(nodes, 3)
	var de *DimensionError
	if !errors.As(err, &de) || de.Want != 3 || de.Got != 2 || de.NodeID != "b" {
		t.Fatalf("CheckDimensions = %v, want DimensionError{3,2,b}", err)
	}
	if !regexp.MustCompile(`embeddingDimensionality is 3 .* 2 dimensions`).MatchString(err.Error()) {
		t.Errorf("message does not name the setting and both numbers: %s", err)
	}
	if err := CheckDimensions(nodes[:1], 3); err != nil {
		t.Errorf("CheckDimensions on valid nodes = %v", err)
	}
}

// TestParseQueryMode: the four modes in any letter case, and the names of
// the default mode; anything else is an UnsupportedError listing them.
func TestParseQueryMode(t *testing.T) {
	tests := []struct {
		in   string
		want QueryMode
	}{
		{"", Vector},
		{"vector", Vector},
		{"default", Vector},
		{"DEFAULT", Vector},
		{"hybrid", Hybrid},
		{"HYBRID", Hybrid},
		{"Semantic_Hybrid", SemanticHybrid},
		{"sparse", Sparse},
	}
	for _, tt := range tests {
		if got, err := ParseQueryMode(tt.in); got != tt.want || err != nil {
			t.Errorf("ParseQueryMode(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"dense", "text_search", " vector"} {
		_, err := ParseQueryMode(in)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "use one of vector, hybrid, semantic_hybrid, sparse") {
			t.Errorf("ParseQueryMode(%q) = %v; want an UnsupportedError listing the modes", in, err)
		}
	}
}

// TestFilterGoNumberTypes: a filter value, or a list of them, of any Go
// number type is a number, as Kind names it in messages: Validate used to
// refuse uint, int8, int16, uint32... with "EQ needs a single string or
// number, got a number", and IN lists such as []int32 or []float32, and
// Match never found them equal to a stored number.
func TestFilterGoNumberTypes(t *testing.T) {
	type level uint16 // a type defined on a number is one too
	md := map[string]any{"level": float64(2), "tags": []string{"1", "2"}}
	for _, v := range []any{int8(2), int16(2), int32(2), int64(2), uint(2), uint8(2), uint16(2), uint32(2), uint64(2), float32(2), level(2)} {
		eq := &MetadataFilters{Filters: []MetadataFilter{{Key: "level", Value: v, Operator: EQ}}}
		if err := eq.Validate(); err != nil {
			t.Errorf("EQ %T: Validate: %v", v, err)
		}
		if !eq.Match(md) || !eq.Match(map[string]any{"level": v}) {
			t.Errorf("EQ %T(2) does not match level 2", v)
		}
		if f, ok := Number(v); !ok || f != 2 {
			t.Errorf("Number(%T(2)) = %v, %v; want 2, true", v, f, ok)
		}
	}
	for _, v := range []any{[]int32{1, 2}, []int64{2}, []float32{2, 3}, []uint{2}, []level{2}, []bool{true, false}} {
		in := &MetadataFilters{Filters: []MetadataFilter{{Key: "level", Value: v, Operator: IN}}}
		if err := in.Validate(); err != nil {
			t.Errorf("IN %T: Validate: %v", v, err)
		}
		if Kind(v) != "a list" {
			t.Errorf("Kind(%T) = %q, want a list", v, Kind(v))
		}
	}
	if in := (&MetadataFilters{Filters: []MetadataFilter{{Key: "tags", Value: []int32{2, 9}, Operator: IN}}}); !in.Match(md) {
		t.Error("IN []int32{2, 9} does not match the collection [\"1\", \"2\"]")
	}
	// Bytes are text, never a list of numbers.
	for _, v := range []any{[]byte("ab"), json.RawMessage(`[1]`)} {
		if _, ok := ValueList(v); ok {
			t.Errorf("ValueList(%T) is a list; want bytes to be no list", v)
		}
	}
	for _, v := range []any{nil, "2", true, struct{}{}, []any{map[string]any{}}} {
		if f, ok := Number(v); ok {
			t.Errorf("Number(%#v) = %v, true; want no number", v, f)
		}
	}
}
