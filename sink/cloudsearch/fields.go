package cloudsearch

import (
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// FieldType is the Edm type of a filterable metadata field.
type FieldType string

// Field types. The seed's MetadataIndexFieldType names (STRING, INT32,
// COLLECTION, ...) are accepted by ParseFieldType.
const (
	String           FieldType = "Edm.String"
	Int32            FieldType = "Edm.Int32"
	Int64            FieldType = "Edm.Int64"
	Double           FieldType = "Edm.Double"
	Boolean          FieldType = "Edm.Boolean"
	DateTimeOffset   FieldType = "Edm.DateTimeOffset"
	StringCollection FieldType = "Collection(Edm.String)"
)

// ParseFieldType accepts an Edm type name or a seed MetadataIndexFieldType
// name (STRING, INT32, INT64, DOUBLE, FLOAT, BOOLEAN, DATETIME,
// COLLECTION), in any case, with or without underscores and a
// MetadataIndexFieldType. or SearchFieldDataType. prefix
// (MetadataIndexFieldType.INT32; see enumKey); "" means String.
func ParseFieldType(s string) (FieldType, error) {
	switch enumKey(s, "MetadataIndexFieldType", "SearchFieldDataType") {
	case "", "string", "edm.string":
		return String, nil
	case "int32", "edm.int32":
		return Int32, nil
	case "int64", "edm.int64":
		return Int64, nil
	case "double", "float", "float64", "edm.double":
		return Double, nil
	case "boolean", "bool", "edm.boolean":
		return Boolean, nil
	case "datetime", "datetimeoffset", "edm.datetimeoffset":
		return DateTimeOffset, nil
	case "collection", "collection(edm.string)":
		return StringCollection, nil
	}
	return "", fmt.Errorf("unknown field type %q", s)
}

// numeric reports whether values of t are written without quotes in OData.
func (t FieldType) numeric() bool { return t == Int32 || t == Int64 || t == Double }

// holds reports whether the finite number f is a value of the numeric type
// t: any for Edm.Double, a whole number in range for Edm.Int32 and
// Edm.Int64.
func (t FieldType) holds(f float64) bool {
	switch t {
	case Int32:
		return f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
	case Int64:
		// 2^63 is the first float64 beyond int64's range.
		return f == math.Trunc(f) && f >= math.MinInt64 && f < -math.MinInt64
	}
	return t == Double
}

// collection reports whether t is a Collection type.
func (t FieldType) collection() bool { return strings.HasPrefix(string(t), "Collection(") }

// FilterableField maps a metadata key to an index field of a type.
type FilterableField struct {
	Key   string    // the metadata key
	Field string    // the index field name; default Key
	Type  FieldType // default String
}

// FilterableFields lists the filterable metadata fields. In YAML it takes
// any of the seed's three forms (§2.3):
//
//	filterableMetadataFieldKeys: [author, year]                 # names
//	filterableMetadataFieldKeys: {author: author_field}         # key → field
//	filterableMetadataFieldKeys: {year: [year_field, INT32]}    # key → [field, type]
type FilterableFields []FilterableField

// UnmarshalYAML decodes the three forms of filterableMetadataFieldKeys,
// keeping the order of the file.
func (f *FilterableFields) UnmarshalYAML(n *yaml.Node) error {
	out := FilterableFields{}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, e := range n.Content {
			var key string
			if err := e.Decode(&key); err != nil || e.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s line %d: a list of filterableMetadataFieldKeys must hold metadata key names", settingPrefix+"filterableMetadataFieldKeys", e.Line)
			}
			out = append(out, FilterableField{Key: key, Field: key, Type: String})
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ff, err := decodeFieldEntry(n.Content[i], n.Content[i+1])
			if err != nil {
				return err
			}
			out = append(out, ff)
		}
	case yaml.ScalarNode:
		if n.Tag != "!!null" {
			return fmt.Errorf("%s line %d: use a list of names or a map of name to field", settingPrefix+"filterableMetadataFieldKeys", n.Line)
		}
	default:
		return fmt.Errorf("%s line %d: use a list of names or a map of name to field", settingPrefix+"filterableMetadataFieldKeys", n.Line)
	}
	*f = out
	return nil
}

func decodeFieldEntry(k, v *yaml.Node) (FilterableField, error) {
	setting := settingPrefix + "filterableMetadataFieldKeys." + k.Value
	bad := fmt.Errorf("%s line %d: use a field name or a pair [field name, type] such as [%s, STRING]", setting, v.Line, k.Value)
	ff := FilterableField{Key: k.Value}
	switch v.Kind {
	case yaml.ScalarNode:
		if _, err := ParseFieldType(v.Value); err == nil && v.Value != "" {
			// {level: INT32} would create a text field named INT32: the
			// map form is key → field name; the type goes in the pair.
			return ff, fmt.Errorf("%s line %d: %s is a field type, not an index field name (a map takes metadata key: field name, or metadata key: [field name, type]); did you mean %s: [%s, %s]? (for a text field named %s, write %s: [%s, STRING])",
				setting, v.Line, v.Value, k.Value, k.Value, v.Value, v.Value, k.Value, v.Value)
		}
		ff.Field = v.Value
	case yaml.SequenceNode:
		if len(v.Content) != 2 || v.Content[0].Kind != yaml.ScalarNode || v.Content[1].Kind != yaml.ScalarNode {
			return ff, bad
		}
		ff.Field = v.Content[0].Value
		t, err := ParseFieldType(v.Content[1].Value)
		if err != nil {
			return ff, fmt.Errorf("%s line %d: %w; use STRING, INT32, INT64, DOUBLE, BOOLEAN, COLLECTION or an Edm type", setting, v.Line, err)
		}
		ff.Type = t
	default:
		return ff, bad
	}
	if ff.Type == "" {
		ff.Type = String
	}
	return ff, nil
}

// MarshalYAML writes the most explicit form: key → [field, type].
func (f FilterableFields) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, ff := range f.normalized() {
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: ff.Key},
			&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: ff.Field},
				{Kind: yaml.ScalarNode, Value: string(ff.Type)},
			}})
	}
	return m, nil
}

// normalized fills in default field names and types and canonical type
// names. Unknown types are kept for Validate to report.
func (f FilterableFields) normalized() FilterableFields {
	out := make(FilterableFields, len(f))
	for i, ff := range f {
		if ff.Field == "" {
			ff.Field = ff.Key
		}
		if t, err := ParseFieldType(string(ff.Type)); err == nil {
			ff.Type = t
		}
		out[i] = ff
	}
	return out
}

// lookup returns the field of a metadata key.
func (f FilterableFields) lookup(key string) (FilterableField, bool) {
	for _, ff := range f {
		if ff.Key == key {
			return ff, true
		}
	}
	return FilterableField{}, false
}

// keys lists the metadata keys, for error messages.
func (f FilterableFields) keys() []string {
	ks := make([]string, len(f))
	for i, ff := range f {
		ks[i] = ff.Key
	}
	return ks
}
