package sink

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// filterSeeds are filters as LlamaIndex (Python and TypeScript) serialise
// them and as users write them, valid or not; the fuzz targets of the
// stores use them too (see sink/local and sink/cloudsearch).
var filterSeeds = []string{
	`{"filters":[{"key":"a","value":"x","operator":"=="},{"key":"b","value":["x","y"],"operator":"in"}],"condition":"and"}`,
	`{"filters":[{"key":"a","value":"x","operator":"EQ"},{"key":"b","value":["x"],"operator":"IN"}],"condition":"OR"}`,
	`{"filters":[{"key":"a","value":1,"operator":null}]}`,
	`{"filters":[{"key":"year","value":2024.5},{"key":"draft","value":true}]}`,
	`{"filters":[{"key":"tags","value":["go",7,false],"operator":"in"}]}`,
	`{"filters":[{"key":"a","value":"O'Brien"},{"key":"b","value":["x,y","a|b",";~^"],"operator":"in"}]}`,
	`{"filters":[{"key":"a","value":"x","operator":"!="}]}`,
	`{"filters":[{"key":"a","value":["x"],"operator":"nin"}]}`,
	`{"filters":[{"key":"","value":"x"}]}`,
	`{"filters":[{"key":"a","value":null}]}`,
	`{"filters":[{"key":"a","value":{"b":1}}]}`,
	`{"filters":[{"key":"a","value":"x"}],"condition":"not"}`,
	`{"filters":[{"filters":[{"key":"a","value":"x"}],"condition":"or"},{"key":"b","value":"y"}]}`,
	`{"filters":[]}`,
	`{}`,
	`{"filters":[{"key":"we\"ird","value":"\u0000"},{"key":"a.b","value":"1e3"}]}`,
}

// FuzzFilterJSON decodes metadata filters from JSON, as LlamaIndex writes
// them. Decoding and Validate must never panic, and:
//   - a filter Validate refuses gets a *FilterError that names it (by key
//     or position), and a nested MetadataFilters (which LlamaIndex allows
//     and the stores do not) is refused as such;
//   - a valid filter encodes to JSON that decodes to the same filter;
//   - a valid filter matches the metadata that holds its own value
//     (Match is reflexive), whether the value went through JSON or not.
func FuzzFilterJSON(f *testing.F) {
	for _, s := range filterSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var mf MetadataFilters
		decErr := json.Unmarshal(data, &mf)
		nested := nestedAt(data)
		if decErr != nil {
			if nested >= 0 && !errors.Is(decErr, ErrInvalidFilter) && validJSONShape(data) {
				t.Fatalf("nested filters decoded with %v, want a *FilterError", decErr)
			}
			return
		}
		err := mf.Validate()
		if nested >= 0 {
			if err == nil {
				t.Fatalf("filter %d is nested MetadataFilters, which no store supports, but Validate accepts %#v", nested, mf)
			}
		}
		if err != nil {
			var fe *FilterError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("Validate = %#v, want a *FilterError wrapping ErrInvalidFilter", err)
			}
			checkNamesFilter(t, &mf, err)
			return
		}
		if nested >= 0 {
			t.Fatalf("filter %d is nested MetadataFilters, but decoding and Validate accept it", nested)
		}

		// Round trip.
		enc, err := json.Marshal(&mf)
		if err != nil {
			t.Fatalf("Marshal(%#v): %v", mf, err)
		}
		var back MetadataFilters
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("Unmarshal(Marshal) of %s: %v", enc, err)
		}
		if !reflect.DeepEqual(back, mf) {
			t.Fatalf("round trip through %s: got %#v, want %#v", enc, back, mf)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("Validate after round trip through %s: %v", enc, err)
		}

		// Reflexivity: each filter matches metadata holding its value.
		for i, one := range mf.Filters {
			v := one.Value
			if one.Operator == IN {
				l, _ := ValueList(v)
				if len(l) == 0 {
					continue
				}
				v = l[len(l)-1]
			}
			single := &MetadataFilters{Filters: []MetadataFilter{one}}
			md := map[string]any{one.Key: v}
			if !single.Match(md) {
				t.Fatalf("filter %d %#v does not match metadata %#v holding its own value", i, one, md)
			}
			if !single.Match(map[string]any{one.Key: []any{"\x00other", v}}) {
				t.Fatalf("filter %d %#v does not match a list holding its own value", i, one)
			}
		}
		_ = mf.Match(nil)
	})
}

// checkNamesFilter fails t unless err, from f.Validate, says which filter
// is wrong: by its key in quotes, or by its position when the key is the
// problem, or names the condition.
func checkNamesFilter(t *testing.T, f *MetadataFilters, err error) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "condition") {
		return
	}
	for i, mf := range f.Filters {
		if mf.Key != "" && strings.Contains(msg, quote(mf.Key)) {
			return
		}
		if mf.Key == "" && strings.Contains(msg, "filter "+itoa(i+1)) {
			return
		}
	}
	t.Fatalf("Validate = %q names no filter of %#v", msg, f.Filters)
}

// nestedAt returns the position of the first filter of the JSON filters
// data that is itself a MetadataFilters (it has a "filters" member), or -1.
func nestedAt(data []byte) int {
	var raw struct {
		Filters []json.RawMessage `json:"filters"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return -1
	}
	for i, r := range raw.Filters {
		var m map[string]json.RawMessage
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		if v, ok := m["filters"]; ok && string(v) != "null" {
			return i
		}
	}
	return -1
}

// validJSONShape reports whether data decodes into MetadataFilters'
// shape when no filter is checked: a nested filter is then the only
// reason to refuse it.
func validJSONShape(data []byte) bool {
	var raw struct {
		Filters   []map[string]any `json:"filters"`
		Condition FilterCondition  `json:"condition"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return false
	}
	for _, m := range raw.Filters {
		for k, v := range m {
			switch strings.ToLower(k) {
			case "key", "operator":
				if _, ok := v.(string); !ok && v != nil {
					return false
				}
			}
		}
	}
	return true
}
