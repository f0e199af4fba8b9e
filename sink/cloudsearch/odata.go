package cloudsearch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

// ODataFilter translates metadata filters into an OData $filter expression
// over the index fields of fields. EQ becomes `field eq 'v'` (quotes
// doubled; numbers unquoted for numeric fields); IN on a string field becomes
// search.in(field, 'a,b', ','); on a Collection(Edm.String) field
// field/any(t: search.in(t, 'a,b', ',')). A nil or empty filter gives "".
//
// On an Edm.DateTimeOffset field a value is a time.Time or a string in RFC
// 3339 form (2024-05-01T10:00:00Z, 2024-05-01T12:00:00.5+02:00) whose year
// in UTC is 0001 to 9999, Edm.DateTimeOffset's range; it is written as an
// unquoted OData DateTimeOffset literal in UTC
// (`when eq 2024-05-01T10:00:00Z`), and anything else is a
// *sink.FilterError, so no value can add to the expression. So is a number
// that is not finite, on a numeric field: OData has no literal for it.
//
// A key that is not among fields is an error naming it: the service can only
// filter on fields declared filterable. A key that LlamaIndex's node format
// reserves (sink.ReservedMetadataKey: doc_id, ref_doc_id, ...) gets an error
// that says no metadata carries it, and how to find a document's nodes.
func ODataFilter(f *sink.MetadataFilters, fields FilterableFields) (string, error) {
	if f == nil || len(f.Filters) == 0 {
		return "", nil
	}
	f = timesAsText(f)
	if err := f.Validate(); err != nil {
		return "", err
	}
	fields = fields.normalized()
	parts := make([]string, 0, len(f.Filters))
	for _, mf := range f.Filters {
		ff, ok := fields.lookup(mf.Key)
		if !ok && sink.ReservedMetadataKey(mf.Key) {
			return "", &sink.FilterError{Reason: fmt.Sprintf("metadata key %q is one of the keys LlamaIndex's node format keeps for the node itself in the metadata string, "+
				"not metadata a filter can match (declaring it filterable would not help: no node's metadata sets it); "+
				"a node's document id is the document id field (%sdocIdFieldKey): list a document's nodes by it (`sluice get --doc-id ID`), "+
				"or filter on file_path once it is declared in %sfilterableMetadataFieldKeys", mf.Key, settingPrefix, settingPrefix)}
		}
		if !ok {
			return "", &sink.FilterError{Reason: fmt.Sprintf("metadata key %q is not filterable in this index (filterable: %s); add it to %sfilterableMetadataFieldKeys and recreate the index",
				mf.Key, listOrNone(fields.keys()), settingPrefix)}
		}
		expr, err := filterExpr(mf, ff)
		if err != nil {
			return "", err
		}
		parts = append(parts, expr)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " "+string(f.Cond())+" "), nil
}

func listOrNone(ks []string) string {
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

func filterExpr(mf sink.MetadataFilter, ff FilterableField) (string, error) {
	var values []any
	if mf.Operator == sink.IN {
		values, _ = sink.ValueList(mf.Value)
	} else {
		values = []any{mf.Value}
	}
	lits := make([]string, len(values))
	for i, v := range values {
		lit, err := literal(v, ff)
		if err != nil {
			return "", err
		}
		lits[i] = lit
	}
	target := ff.Field
	if ff.Type.collection() {
		target = "t"
	}
	var expr string
	switch {
	case len(values) == 0:
		return "false", nil
	case mf.Operator == sink.EQ:
		expr = target + " eq " + lits[0]
	case isStringType(ff.Type):
		strs := make([]string, len(values))
		for i, v := range values {
			strs[i] = fmt.Sprint(v)
		}
		expr = searchIn(target, strs)
	default:
		ors := make([]string, len(lits))
		for i, l := range lits {
			ors[i] = target + " eq " + l
		}
		expr = strings.Join(ors, " or ") // ODataFilter parenthesizes it when joining
	}
	if ff.Type.collection() {
		return ff.Field + "/any(t: " + expr + ")", nil
	}
	return expr, nil
}

func isStringType(t FieldType) bool { return t == String || t == StringCollection }

// literal formats v as an OData literal for field ff.
func literal(v any, ff FilterableField) (string, error) {
	switch {
	case ff.Type.numeric():
		// Finite only: strconv.FormatFloat would write NaN and ±Inf as
		// "NaN", "+Inf" and "-Inf", which are no OData literals.
		f, ok := toNumber(v)
		if !ok {
			return "", &sink.FilterError{Reason: fmt.Sprintf("filter on %q: field %s is %s, but %q is not a number (a finite one: OData has no literal for infinity, and no stored value equals NaN)",
				ff.Key, ff.Field, ff.Type, fmt.Sprint(v))}
		}
		if !ff.Type.holds(f) {
			return "", &sink.FilterError{Reason: fmt.Sprintf("filter on %q: field %s is %s, but %v is not an integer in its range", ff.Key, ff.Field, ff.Type, f)}
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case ff.Type == Boolean:
		switch fmt.Sprint(v) {
		case "true", "false":
			return fmt.Sprint(v), nil
		}
		return "", &sink.FilterError{Reason: fmt.Sprintf("filter on %q: field %s is Edm.Boolean, but %q is not true or false", ff.Key, ff.Field, fmt.Sprint(v))}
	case ff.Type == DateTimeOffset:
		t, ok := toTime(v)
		if !ok {
			return "", &sink.FilterError{Reason: fmt.Sprintf("filter on %q: field %s is Edm.DateTimeOffset, but %q is not a date and time in RFC 3339 form such as 2024-05-01T10:00:00Z or 2024-05-01T12:00:00.5+02:00 (a time.Time or such a string)",
				ff.Key, ff.Field, fmt.Sprint(v))}
		}
		if !dateInRange(t) {
			return "", &sink.FilterError{Reason: fmt.Sprintf("filter on %q: field %s is Edm.DateTimeOffset, whose values lie between the years 0001 and 9999 in UTC, but %q is in the year %d in UTC",
				ff.Key, ff.Field, fmt.Sprint(v), t.UTC().Year())}
		}
		return timeText(t), nil
	}
	return quoteOData(fmt.Sprint(v)), nil
}

// toTime reads a DateTimeOffset value: a time.Time, or a string in RFC 3339
// form (fractional seconds allowed), exactly, without spaces around it.
func toTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, true
	case *time.Time:
		if t != nil {
			return *t, true
		}
	case string:
		p, err := time.Parse(time.RFC3339Nano, t)
		return p, err == nil
	}
	return time.Time{}, false
}

// dateInRange reports whether t lies in Edm.DateTimeOffset's range: the
// years 0001 to 9999 in UTC.
func dateInRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// timeText formats t as the service stores an Edm.DateTimeOffset and as an
// OData DateTimeOffset literal: RFC 3339 in UTC, fractional seconds only
// when there are any.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// timesAsText returns f with every time.Time value, alone or in a list,
// replaced by its timeText: sink's Validate knows strings and numbers only.
// f itself is not changed; nil stays nil.
func timesAsText(f *sink.MetadataFilters) *sink.MetadataFilters {
	if f == nil {
		return nil
	}
	out := f
	for i, mf := range f.Filters {
		v, changed := timeValueAsText(mf.Value)
		if !changed {
			continue
		}
		if out == f {
			c := *f
			c.Filters = slices.Clone(f.Filters)
			out = &c
		}
		out.Filters[i].Value = v
	}
	return out
}

func timeValueAsText(v any) (any, bool) {
	switch t := v.(type) {
	case time.Time, *time.Time:
		if tm, ok := toTime(t); ok {
			return timeText(tm), true
		}
	case []time.Time:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = timeText(e)
		}
		return out, true
	case []any:
		var out []any
		for i, e := range t {
			if tm, ok := e.(time.Time); ok {
				if out == nil {
					out = slices.Clone(t)
				}
				out[i] = timeText(tm)
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// toNumber is sink.Number, also accepting a string that holds a finite
// number (a filter typed on a command line).
func toNumber(v any) (float64, bool) {
	if f, ok := sink.Number(v); ok {
		return f, !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	str, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(str), 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// quoteOData returns s as an OData string literal: in single quotes, with
// every single quote doubled.
func quoteOData(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// searchInDelimiters are tried in turn; the first that occurs in no value
// separates the values of search.in.
var searchInDelimiters = []string{",", "|", ";", "~", "^", "\t"}

// searchIn returns search.in(target, 'v1,v2', ','), choosing a delimiter
// that occurs in no value, or a disjunction of eq when every delimiter does.
func searchIn(target string, values []string) string {
	for _, d := range searchInDelimiters {
		clash := false
		for _, v := range values {
			if !searchInFits(v, d) {
				clash = true
				break
			}
		}
		if !clash {
			return "search.in(" + target + ", " + quoteOData(strings.Join(values, d)) + ", " + quoteOData(d) + ")"
		}
	}
	ors := make([]string, len(values))
	for i, v := range values {
		ors[i] = target + " eq " + quoteOData(v)
	}
	return "(" + strings.Join(ors, " or ") + ")"
}

// searchInFits reports whether searchIn can list v in search.in with the
// delimiter d: v is not empty, has no white space at either end, and does
// not contain d.
func searchInFits(v, d string) bool {
	return v != "" && strings.TrimSpace(v) == v && !strings.Contains(v, d)
}

// eqFilter is `field eq 'value'` with the value's quotes doubled.
func eqFilter(field, value string) string { return field + " eq " + quoteOData(value) }

// andFilters joins non-empty filter expressions with and.
func andFilters(exprs ...string) string {
	var parts []string
	for _, e := range exprs {
		if e != "" {
			parts = append(parts, e)
		}
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " and ")
}
