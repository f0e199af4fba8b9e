package sink

import (
	"fmt"
	"reflect"
	"strconv"
)

// Match reports whether metadata satisfies the filters. A nil or empty
// *MetadataFilters matches everything. Numbers compare by value whatever
// their Go type (JSON decoding yields float64); a []string or []any metadata
// value is a collection: EQ matches if it contains the value, IN if it shares
// an element with the list. Stores that filter in memory use Match so that
// every store agrees on the semantics.
func (f *MetadataFilters) Match(metadata map[string]any) bool {
	if f == nil || len(f.Filters) == 0 {
		return true
	}
	or := f.Cond() == Or
	for _, mf := range f.Filters {
		ok := mf.match(metadata)
		if or && ok {
			return true
		}
		if !or && !ok {
			return false
		}
	}
	return !or
}

func (mf MetadataFilter) match(metadata map[string]any) bool {
	v, present := metadata[mf.Key]
	if !present {
		return false
	}
	var want []any
	switch mf.Operator {
	case IN:
		want, _ = ValueList(mf.Value)
	default:
		want = []any{mf.Value}
	}
	have, isList := ValueList(v)
	if !isList {
		have = []any{v}
	}
	for _, h := range have {
		for _, w := range want {
			if scalarEqual(h, w) {
				return true
			}
		}
	}
	return false
}

// scalarEqual compares two scalars. Numbers compare by value; a number and
// a string compare as numbers when the string parses as one (a filter typed
// on a command line is a string); anything else compares as text.
func scalarEqual(a, b any) bool {
	fa, aNum := Number(a)
	fb, bNum := Number(b)
	switch {
	case aNum && bNum:
		return fa == fb
	case aNum:
		fb, bNum = parseFloat(b)
		return bNum && fa == fb
	case bNum:
		fa, aNum = parseFloat(a)
		return aNum && fa == fb
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func parseFloat(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// Number returns v as a float64 when it is a Go number of any type (JSON
// decoding yields float64, YAML and Go callers int; int8 to uint64 and
// float32, and types defined on them, count too). Stores use it so that
// every store compares numbers alike.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case nil, string, bool:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}
