package sink

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// FilterOperator compares a metadata value. Stores support EQ and IN (seed §2.5).
//
// The stores compare operators with the constants, so decoding (JSON, or
// any decoder that uses encoding.TextUnmarshaler) normalises the spellings
// LlamaIndex and its documentation use: see UnmarshalText.
type FilterOperator string

// Filter operators.
const (
	// EQ matches when the metadata value equals Value; for a collection
	// (list) value it matches when the list contains Value.
	EQ FilterOperator = "=="
	// IN matches when the metadata value is one of Value (a list); for a
	// collection value it matches when the lists share an element.
	IN FilterOperator = "in"
)

// UnmarshalText sets o from the operator's value or name, in any letter
// case: "==" or "eq" is EQ and "in" is IN, so both LlamaIndex's values
// ("==", "in") and the names its documentation uses ("EQ", "IN") decode to
// the constants. Any other text is kept as it is, for Validate to report
// as an unsupported operator.
func (o *FilterOperator) UnmarshalText(text []byte) error {
	switch s := string(text); {
	case s == string(EQ), strings.EqualFold(s, "eq"):
		*o = EQ
	case strings.EqualFold(s, string(IN)):
		*o = IN
	default:
		*o = FilterOperator(s)
	}
	return nil
}

// FilterCondition joins the filters of a MetadataFilters.
type FilterCondition string

// Filter conditions.
const (
	And FilterCondition = "and"
	Or  FilterCondition = "or"
)

// UnmarshalText sets c from "and" or "or" in any letter case (LlamaIndex's
// values are lowercase, its documentation writes AND and OR). Any other
// text is kept as it is, for Validate to report.
func (c *FilterCondition) UnmarshalText(text []byte) error {
	switch s := string(text); {
	case strings.EqualFold(s, string(And)):
		*c = And
	case strings.EqualFold(s, string(Or)):
		*c = Or
	default:
		*c = FilterCondition(s)
	}
	return nil
}

// MetadataFilter is one comparison of a metadata key.
//
// Decoded from JSON, a filter without an operator (or with "operator":
// null) is an EQ filter, as in LlamaIndex, whose MetadataFilter defaults
// its operator to EQ. That default is applied by decoding only: a
// MetadataFilter built in Go must set Operator, and Validate refuses an
// empty one.
type MetadataFilter struct {
	Key      string         `json:"key"`
	Value    any            `json:"value"` // string, number, or []string for IN
	Operator FilterOperator `json:"operator"`
}

// UnmarshalJSON decodes a filter object, with EQ for a missing operator
// and the operator's spelling normalised by FilterOperator.UnmarshalText.
// Like any type's own decoder it does not see the caller's
// json.Decoder.DisallowUnknownFields: unknown fields inside a filter object
// are ignored, except "filters": an object that has it (not null) is a nested
// MetadataFilters, which LlamaIndex allows and no store supports, and
// decoding fails with a *FilterError saying so.
func (mf *MetadataFilter) UnmarshalJSON(data []byte) error {
	type plain MetadataFilter // without this method
	p := struct {
		plain
		Filters json.RawMessage `json:"filters"`
	}{plain: plain{Operator: EQ}}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if p.Filters != nil && string(p.Filters) != "null" {
		return filterErr("a filter holds \"filters\", a nested MetadataFilters; the stores support one level only: " +
			"write the filters as one list of key, value and operator objects joined by one condition (and or or)")
	}
	*mf = MetadataFilter(p.plain)
	return nil
}

// MetadataFilters combines filters with a condition (default And).
type MetadataFilters struct {
	Filters   []MetadataFilter `json:"filters"`
	Condition FilterCondition  `json:"condition,omitempty"`
}

// Cond returns the condition, defaulting to And.
func (f *MetadataFilters) Cond() FilterCondition {
	if f.Condition == "" {
		return And
	}
	return f.Condition
}

// Validate checks that every filter uses a supported operator with a value of
// the right shape. A nil *MetadataFilters is valid.
func (f *MetadataFilters) Validate() error {
	if f == nil {
		return nil
	}
	switch f.Condition {
	case "", And, Or:
	default:
		return filterErr("condition %q is not supported; use and (AND) or or (OR)", f.Condition)
	}
	for i, mf := range f.Filters {
		if mf.Key == "" {
			return filterErr("filter %d of %d has an empty key; set its key to the metadata key it compares", i+1, len(f.Filters))
		}
		switch mf.Operator {
		case EQ:
			if !isScalar(mf.Value) {
				return filterErr("filter on %q: EQ needs a single string or number, got %s", mf.Key, Kind(mf.Value))
			}
		case IN:
			if _, ok := ValueList(mf.Value); !ok {
				return filterErr("filter on %q: IN needs a list of strings or numbers, got %s", mf.Key, Kind(mf.Value))
			}
		case "":
			return filterErr("filter on %q has no operator; use == (EQ) or in (IN)", mf.Key)
		default:
			return filterErr("filter on %q: operator %q is not supported; use == (EQ) or in (IN), the only operators the stores support", mf.Key, mf.Operator)
		}
	}
	return nil
}

// ValueList returns v as a list of scalars when it is a slice of strings,
// numbers (of any Go number type, as Number takes them) or bools: []string,
// []int, []float64, []int32, []any and the like. A []byte is text, not a
// list, nor is any other slice of bytes.
func ValueList(v any) ([]any, bool) {
	switch vs := v.(type) {
	case []string:
		out := make([]any, len(vs))
		for i, s := range vs {
			out[i] = s
		}
		return out, true
	case []any:
		for _, e := range vs {
			if !isScalar(e) {
				return nil, false
			}
		}
		return vs, true
	case nil, string, []byte:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		e := rv.Index(i).Interface()
		if !isScalar(e) {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// isScalar reports whether v is a single filter or metadata value: a
// string, a bool or a number of any Go number type (see Number).
func isScalar(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	_, ok := Number(v)
	return ok
}

// FilterError reports a metadata filter that cannot be applied.
type FilterError struct{ Reason string }

// Error returns the message of the FilterError.
func (e *FilterError) Error() string { return "sink: invalid filter: " + e.Reason }

// Unwrap returns ErrInvalidFilter.
func (e *FilterError) Unwrap() error { return ErrInvalidFilter }

func filterErr(format string, args ...any) error {
	return &FilterError{Reason: fmt.Sprintf(format, args...)}
}

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string { return strconv.Quote(s) }

// Kind names the kind of a metadata or filter value as a user wrote it in
// YAML or JSON, for error messages: "null", "a string", "a number",
// "a bool", "a list" or "a map"; Go's type name for anything else.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return "a number"
	case map[string]any, map[any]any:
		return "a map"
	}
	if _, ok := ValueList(v); ok {
		return "a list"
	}
	if _, ok := v.([]any); ok {
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
