package sink

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestFilterDecode decodes filters as LlamaIndex serialises them ("==",
// "in", "and") and as its documentation and the store's spec name them
// (EQ, IN, AND), in any letter case: every spelling must decode to the
// constants the stores compare with, and pass Validate.
func TestFilterDecode(t *testing.T) {
	tests := []struct {
		name string
		json string
		want MetadataFilters
	}{
		{"LlamaIndex values",
			`{"filters":[{"key":"a","value":"x","operator":"=="},{"key":"b","value":["x","y"],"operator":"in"}],"condition":"and"}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}, {Key: "b", Value: []any{"x", "y"}, Operator: IN}}, Condition: And}},
		{"spec names",
			`{"filters":[{"key":"a","value":"x","operator":"EQ"},{"key":"b","value":["x"],"operator":"IN"}],"condition":"AND"}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}, {Key: "b", Value: []any{"x"}, Operator: IN}}, Condition: And}},
		{"mixed case",
			`{"filters":[{"key":"a","value":"x","operator":"Eq"},{"key":"b","value":["x"],"operator":"In"}],"condition":"Or"}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}, {Key: "b", Value: []any{"x"}, Operator: IN}}, Condition: Or}},
		{"OR",
			`{"filters":[{"key":"a","value":"x","operator":"eq"}],"condition":"OR"}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}}, Condition: Or}},
		{"missing operator is EQ",
			`{"filters":[{"key":"a","value":"x"}]}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}}}},
		{"null operator is EQ",
			`{"filters":[{"key":"a","value":1,"operator":null}]}`,
			MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: float64(1), Operator: EQ}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got MetadataFilters
			if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded %#v, want %#v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestFilterDecodeUnsupported checks that decoding keeps the operators and
// conditions it does not know as they are, so that Validate names them,
// and that the message says which spellings to use instead.
func TestFilterDecodeUnsupported(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"NE", `{"filters":[{"key":"a","value":"x","operator":"!="}]}`, `operator "!=" is not supported; use == (EQ) or in (IN)`},
		{"NIN name", `{"filters":[{"key":"a","value":["x"],"operator":"NIN"}]}`, `operator "NIN" is not supported; use == (EQ) or in (IN)`},
		{"text_match", `{"filters":[{"key":"a","value":"x","operator":"text_match"}]}`, `operator "text_match" is not supported`},
		{"empty operator", `{"filters":[{"key":"a","value":"x","operator":""}]}`, `filter on "a" has no operator; use == (EQ) or in (IN)`},
		{"EQ with a list", `{"filters":[{"key":"a","value":["x"],"operator":"EQ"}]}`, `EQ needs a single string or number`},
		{"IN with a scalar", `{"filters":[{"key":"a","value":"x","operator":"IN"}]}`, `IN needs a list`},
		{"XOR", `{"filters":[{"key":"a","value":"x"}],"condition":"XOR"}`, `condition "XOR" is not supported; use and (AND) or or (OR)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f MetadataFilters
			if err := json.Unmarshal([]byte(tt.json), &f); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			err := f.Validate()
			if !errors.Is(err, ErrInvalidFilter) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want ErrInvalidFilter with %q", err, tt.want)
			}
		})
	}
}

// TestFilterOperatorUnmarshalText covers the text decoding on its own, as
// other decoders (YAML, flag packages) call it.
func TestFilterOperatorUnmarshalText(t *testing.T) {
	for in, want := range map[string]FilterOperator{
		"==": EQ, "eq": EQ, "EQ": EQ, "eQ": EQ, "in": IN, "IN": IN, "iN": IN,
		"": "", "=": "=", "!=": "!=", "nin": "nin", "NIN": "NIN", " eq": " eq", "equals": "equals",
	} {
		var op FilterOperator
		if err := op.UnmarshalText([]byte(in)); err != nil || op != want {
			t.Errorf("UnmarshalText(%q) = %q, %v; want %q", in, op, err, want)
		}
	}
	for in, want := range map[string]FilterCondition{
		"and": And, "AND": And, "And": And, "or": Or, "OR": Or, "": "", "xor": "xor", "&&": "&&",
	} {
		var c FilterCondition
		if err := c.UnmarshalText([]byte(in)); err != nil || c != want {
			t.Errorf("FilterCondition.UnmarshalText(%q) = %q, %v; want %q", in, c, err, want)
		}
	}
}

func TestKind(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"x", "a string"},
		{true, "a bool"},
		{3, "a number"},
		{2.5, "a number"},
		{map[string]any{"a": 1}, "a map"},
		{[]any{"a", 1}, "a list"},
		{[]any{map[string]any{}}, "a list"},
		{[]string{"a"}, "a list"},
		{struct{}{}, "a struct {}"},
	}
	for _, tt := range tests {
		if got := Kind(tt.v); got != tt.want {
			t.Errorf("Kind(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestFilterDecodeNested checks that a nested MetadataFilters, which
// LlamaIndex allows and no store supports, fails to decode with a
// *FilterError that says so (it decoded as a filter with an empty key).
func TestFilterDecodeNested(t *testing.T) {
	in := `{"filters":[{"key":"a","value":"x"},{"filters":[{"key":"b","value":"y"}],"condition":"or"}]}`
	var f MetadataFilters
	err := json.Unmarshal([]byte(in), &f)
	var fe *FilterError
	if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidFilter) || !strings.Contains(err.Error(), `nested MetadataFilters`) {
		t.Fatalf("Unmarshal = %v, want a *FilterError about nested MetadataFilters", err)
	}
	// "filters": null in a filter is no nesting.
	if err := json.Unmarshal([]byte(`{"filters":[{"key":"a","value":"x","filters":null}]}`), &f); err != nil {
		t.Fatalf("Unmarshal with \"filters\": null = %v, want nil", err)
	}
}

// TestFilterEmptyKeyNamesPosition checks that the error for a filter
// without a key says which filter it is.
func TestFilterEmptyKeyNamesPosition(t *testing.T) {
	f := &MetadataFilters{Filters: []MetadataFilter{{Key: "a", Value: "x", Operator: EQ}, {Value: "y", Operator: EQ}}}
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "filter 2 of 2 has an empty key") {
		t.Fatalf("Validate = %v, want it to name filter 2 of 2", err)
	}
}
