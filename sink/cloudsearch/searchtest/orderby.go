package searchtest

import (
	"slices"
	"strings"
)

// maxOrderByClauses is the most clauses $orderby accepts.
const maxOrderByClauses = 32

// orderClause is one clause of $orderby: a sortable field, or the search
// score when field is nil, ascending or descending.
type orderClause struct {
	field *field
	desc  bool
}

// parseOrderBy parses $orderby: comma-separated clauses, each a sortable
// field's name or search.score(), optionally followed by asc (the default)
// or desc. geo.distance is not emulated.
func (ix *index) parseOrderBy(s string) ([]orderClause, *apiError) {
	parts := strings.Split(s, ",")
	if len(parts) > maxOrderByClauses {
		return nil, badRequest("Invalid expression: $orderby has %d clauses; at most %d are allowed.\r\nParameter name: $orderby", len(parts), maxOrderByClauses)
	}
	out := make([]orderClause, 0, len(parts))
	for _, p := range parts {
		words := strings.Fields(p)
		if len(words) == 0 || len(words) > 2 {
			return nil, badRequest("Invalid expression: '%s' is not a valid $orderby clause; use a field name or search.score(), optionally followed by asc or desc.\r\nParameter name: $orderby", strings.TrimSpace(p))
		}
		var c orderClause
		if len(words) == 2 {
			switch words[1] {
			case "asc":
			case "desc":
				c.desc = true
			default:
				return nil, badRequest("Invalid expression: expected asc or desc after '%s', found '%s'.\r\nParameter name: $orderby", words[0], words[1])
			}
		}
		switch name := words[0]; {
		case name == "search.score()":
		case strings.HasPrefix(name, "geo.distance("):
			return nil, badRequest("geo.distance in $orderby is not emulated by this test server.")
		default:
			f, ok := ix.byName[name]
			if !ok {
				return nil, badRequest("Invalid expression: Could not find a property named '%s' on type 'search.document'.\r\nParameter name: $orderby", name)
			}
			if f.isCollection() || !f.is(f.Sortable) {
				return nil, badRequest("Invalid expression: '%s' is not a sortable field. Only sortable fields can be used in $orderby.\r\nParameter name: $orderby", name)
			}
			c.field = f
		}
		out = append(out, c)
	}
	return out, nil
}

// orderHits sorts hits by the clauses; hits equal under every clause keep
// their order. Absent (null) values sort before any value when ascending.
func (ix *index) orderHits(hits []hit, clauses []orderClause) {
	slices.SortStableFunc(hits, func(a, b hit) int {
		for _, c := range clauses {
			var r int
			if c.field == nil {
				r = cmpFloat(a.score, b.score)
			} else {
				av, bv := ix.docs[a.key][c.field.Name], ix.docs[b.key][c.field.Name]
				if s, ok := bv.(string); ok && c.field.Type == "Edm.DateTimeOffset" {
					if t, ok := parseDateTime(s); ok {
						bv = t // compared as instants, whatever the offsets
					}
				}
				r = cmpValues(av, bv)
			}
			if c.desc {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return 0
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpValues orders two stored values of one field: null first, then
// strings ordinally, numbers numerically, false before true, and
// DateTimeOffset values (b given as a time.Time) as instants (as compare
// orders a value against a filter literal); values of different kinds are
// equal.
func cmpValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if y, ok := number(b); ok {
		b = y // compare takes numbers as float64 literals
	}
	if r, ok := compare(a, b); ok {
		return r
	}
	return 0
}
