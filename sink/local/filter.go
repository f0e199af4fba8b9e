package local

import (
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/sink"
)

// sqlFilter narrows the rows a query reads with a SQL condition on the nodes
// table (aliased n), and decides exactly with (*sink.MetadataFilters).Match
// on the decoded metadata. The SQL condition is deliberately looser than
// Match (it admits every row Match could accept, and possibly more), so the
// semantics are Match's by construction and every store agrees on them.
//
// For each filter, json_each over the metadata key yields the value itself
// for a scalar and the elements for a list (Add stores nothing else), and
// each row is tested against the wanted values:
//
//   - a string s: an equal string; a number equal to s when s parses as
//     one (a filter typed on a command line is a string); a bool or null
//     printed as s.
//   - a number x: a number equal to x; any string (Match parses it).
//   - a bool b: that bool; the string "true" or "false" printed from it.
type sqlFilter struct {
	where string // condition; empty when the key test cannot be written in SQL or there are no filters
	args  []any
	f     *sink.MetadataFilters // nil when every node matches
}

func compileFilter(f *sink.MetadataFilters) sqlFilter {
	if f == nil || len(f.Filters) == 0 {
		return sqlFilter{}
	}
	sf := sqlFilter{f: f}
	var terms []string
	for _, mf := range f.Filters {
		if strings.ContainsAny(mf.Key, "\"\\") {
			// Not expressible as a JSON path label: filter in Go only.
			return sqlFilter{f: f}
		}
		var want []any
		if mf.Operator == sink.IN {
			want, _ = sink.ValueList(mf.Value)
		} else {
			want = []any{mf.Value}
		}
		if len(want) == 0 {
			terms = append(terms, "0")
			continue
		}
		sf.args = append(sf.args, `$."`+mf.Key+`"`)
		var alts []string
		for _, w := range want {
			alt, args := valueTest(w)
			alts = append(alts, alt)
			sf.args = append(sf.args, args...)
		}
		terms = append(terms, `EXISTS (SELECT 1 FROM json_each(n.metadata, ?) AS j WHERE `+strings.Join(alts, " OR ")+`)`)
	}
	sep := " AND "
	if f.Cond() == sink.Or {
		sep = " OR "
	}
	sf.where = "(" + strings.Join(terms, sep) + ")"
	return sf
}

const numberTest = `(j.type IN ('integer', 'real') AND CAST(j.value AS REAL) = ?)`

// valueTest returns a condition on the json_each row j that holds for every
// element Match could find equal to w, and its bind arguments.
func valueTest(w any) (string, []any) {
	switch v := w.(type) {
	case string:
		alts := []string{`(j.type = 'text' AND j.value = ?)`}
		args := []any{v}
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			alts = append(alts, numberTest)
			args = append(args, x)
		}
		switch v {
		case "true", "false":
			alts = append(alts, `j.type = '`+v+`'`)
		case "<nil>":
			alts = append(alts, `j.type = 'null'`)
		}
		return "(" + strings.Join(alts, " OR ") + ")", args
	case bool:
		s := strconv.FormatBool(v)
		return `(j.type = '` + s + `' OR (j.type = 'text' AND j.value = '` + s + `'))`, nil
	}
	x, _ := sink.Number(w)
	return `(` + numberTest + ` OR j.type = 'text')`, []any{x}
}

// active reports whether rows must be checked with match.
func (sf sqlFilter) active() bool { return sf.f != nil }

// and returns cond joined with the filter's SQL condition.
func (sf sqlFilter) and(cond string) string {
	switch {
	case sf.where == "":
		return cond
	case cond == "":
		return sf.where
	}
	return cond + " AND " + sf.where
}

// match decides exactly whether a node's metadata matches.
func (sf sqlFilter) match(md map[string]any) bool { return sf.f.Match(md) }

// keeps reports whether a row whose metadata JSON is md passes the filters;
// every row does when there are none (md is then not read).
func (sf sqlFilter) keeps(md string) (bool, error) {
	if !sf.active() {
		return true, nil
	}
	m, err := decodeMetadata(md)
	if err != nil {
		return false, err
	}
	return sf.match(m), nil
}
