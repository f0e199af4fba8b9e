package searchtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The OData $filter subset this server understands: the forms Sluice emits
// plus their natural neighbours.
//
//	field eq 'v'   field ne 'v'   field eq 12   field gt/ge/lt/le literal
//	field eq true  field eq null
//	field eq 2024-05-01T10:00:00Z   (Edm.DateTimeOffset: unquoted RFC 3339)
//	search.in(field, 'a,b', ',')
//	field/any(t: t eq 'v')   field/any(t: search.in(t, 'a,b', ','))   field/all(...)
//	and, or, not, parentheses
//
// Fields must exist and be filterable; comparisons apply to single-valued
// fields and any/all to collections, as the service requires. Literals
// must have the field's type: in particular an Edm.DateTimeOffset field
// compares with an unquoted DateTimeOffset literal, as instants (whatever
// the offsets), and a quoted string there is refused, as the service
// refuses it.

// predicate is a compiled filter expression.
type predicate func(doc map[string]any, vars map[string]any) bool

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tDateTime // an unquoted DateTimeOffset literal, e.g. 2024-05-01T10:00:00Z
	tPunct    // ( ) , : /
)

// dateTimeRE matches an OData DateTimeOffset literal: an RFC 3339 date and
// time, seconds and their fraction optional, with Z or an offset.
var dateTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:\d{2})`)

// parseDateTime reads a DateTimeOffset literal or stored value.
func parseDateTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type token struct {
	kind tokKind
	text string // identifier, punctuation, number text or unescaped string
	pos  int
}

func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("(),:/", c):
			out = append(out, token{tPunct, string(c), i})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, fmt.Errorf("unterminated string literal at position %d", i)
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			out = append(out, token{tString, b.String(), i})
			i = j + 1
		case c >= '0' && c <= '9' && dateTimeRE.MatchString(src[i:]):
			lit := dateTimeRE.FindString(src[i:])
			if _, ok := parseDateTime(lit); !ok {
				return nil, fmt.Errorf("'%s' at position %d is not a valid DateTimeOffset", lit, i)
			}
			out = append(out, token{tDateTime, lit, i})
			i += len(lit)
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(src) && strings.ContainsRune("0123456789.eE+-", rune(src[j])) {
				j++
			}
			out = append(out, token{tNumber, src[i:j], i})
			i = j
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] < 128 && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			out = append(out, token{tIdent, src[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character '%c' at position %d", c, i)
		}
	}
	return append(out, token{kind: tEOF, pos: len(src)}), nil
}

type filterParser struct {
	ix   *index
	toks []token
	i    int
	vars map[string]*field // lambda variables in scope → their collection field
}

// parseFilter compiles a $filter expression against the index schema.
func (ix *index) parseFilter(src string) (predicate, *apiError) {
	toks, err := lex(src)
	if err != nil {
		return nil, filterError("%v", err)
	}
	p := &filterParser{ix: ix, toks: toks, vars: map[string]*field{}}
	pred, perr := p.or()
	if perr != nil {
		return nil, perr
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, filterError("unexpected '%s' at position %d", t.text, t.pos)
	}
	return pred, nil
}

func filterError(format string, args ...any) *apiError {
	return badRequest("Invalid expression: "+format+"\r\nParameter name: $filter", args...)
}

func (p *filterParser) peek() token { return p.toks[p.i] }
func (p *filterParser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *filterParser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tIdent && t.text == w
}

func (p *filterParser) expect(punct string) *apiError {
	t := p.next()
	if t.kind != tPunct || t.text != punct {
		return filterError("expected '%s' at position %d", punct, t.pos)
	}
	return nil
}

func (p *filterParser) or() (predicate, *apiError) {
	l, err := p.and()
	for err == nil && p.isWord("or") {
		p.next()
		var r predicate
		if r, err = p.and(); err == nil {
			a, b := l, r
			l = func(d, v map[string]any) bool { return a(d, v) || b(d, v) }
		}
	}
	return l, err
}

func (p *filterParser) and() (predicate, *apiError) {
	l, err := p.unary()
	for err == nil && p.isWord("and") {
		p.next()
		var r predicate
		if r, err = p.unary(); err == nil {
			a, b := l, r
			l = func(d, v map[string]any) bool { return a(d, v) && b(d, v) }
		}
	}
	return l, err
}

func (p *filterParser) unary() (predicate, *apiError) {
	if p.isWord("not") {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return func(d, v map[string]any) bool { return !x(d, v) }, nil
	}
	return p.primary()
}

func (p *filterParser) primary() (predicate, *apiError) {
	t := p.peek()
	switch {
	case t.kind == tPunct && t.text == "(":
		p.next()
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		return x, p.expect(")")
	case t.kind == tIdent && t.text == "search.in":
		return p.searchIn()
	case t.kind == tIdent && (t.text == "true" || t.text == "false"):
		p.next()
		b := t.text == "true"
		return func(map[string]any, map[string]any) bool { return b }, nil
	case t.kind == tIdent:
		return p.fieldExpr()
	}
	return nil, filterError("unexpected '%s' at position %d", t.text, t.pos)
}

// operand is what a comparison reads: a field of the document or a lambda
// variable.
type operand struct {
	name  string
	field *field
	isVar bool
}

func (o operand) get(d, vars map[string]any) any {
	if o.isVar {
		return vars[o.name]
	}
	return d[o.name]
}

// resolve looks a name up as a lambda variable or a filterable field.
func (p *filterParser) resolve(t token) (operand, *apiError) {
	if f, ok := p.vars[t.text]; ok {
		return operand{name: t.text, field: f, isVar: true}, nil
	}
	f, ok := p.ix.byName[t.text]
	if !ok {
		return operand{}, filterError("Could not find a property named '%s' on type 'search.document'.", t.text)
	}
	if !f.filterable() {
		return operand{}, filterError("The field '%s' is not filterable. Only filterable fields can be used in filter expressions; mark the field filterable in the index definition.", t.text)
	}
	return operand{name: t.text, field: f}, nil
}

func (p *filterParser) searchIn() (predicate, *apiError) {
	p.next()
	if err := p.expect("("); err != nil {
		return nil, err
	}
	ft := p.next()
	if ft.kind != tIdent {
		return nil, filterError("search.in expects a field name at position %d", ft.pos)
	}
	op, err := p.resolve(ft)
	if err != nil {
		return nil, err
	}
	if !op.isVar && op.field.isCollection() || op.field.elemType() != "Edm.String" {
		return nil, filterError("search.in applies to a single-valued Edm.String field or a lambda variable over Collection(Edm.String); '%s' is %s.", ft.text, op.field.Type)
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	list := p.next()
	if list.kind != tString {
		return nil, filterError("search.in expects a string list at position %d", list.pos)
	}
	delims := " ,"
	if t := p.peek(); t.kind == tPunct && t.text == "," {
		p.next()
		dt := p.next()
		if dt.kind != tString || dt.text == "" {
			return nil, filterError("search.in expects a delimiters string at position %d", dt.pos)
		}
		delims = dt.text
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, v := range strings.FieldsFunc(list.text, func(r rune) bool { return strings.ContainsRune(delims, r) }) {
		set[v] = true
	}
	return func(d, vars map[string]any) bool {
		s, ok := op.get(d, vars).(string)
		return ok && set[s]
	}, nil
}

func (p *filterParser) fieldExpr() (predicate, *apiError) {
	ft := p.next()
	op, err := p.resolve(ft)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tPunct && t.text == "/" {
		return p.lambda(ft, op)
	}
	if !op.isVar && op.field.isCollection() {
		return nil, filterError("The field '%s' is a collection; compare its elements with '%s/any(t: t eq ...)' instead.", ft.text, ft.text)
	}
	ot := p.next()
	if ot.kind != tIdent {
		return nil, filterError("expected a comparison operator after '%s' at position %d", ft.text, ot.pos)
	}
	cmp, cerr := comparison(ot.text)
	if cerr != nil {
		return nil, cerr
	}
	lit, err := p.literal(op.field.elemType(), ot.text)
	if err != nil {
		return nil, err
	}
	return func(d, vars map[string]any) bool { return cmp(compare(op.get(d, vars), lit)) }, nil
}

// lambda parses field/any(t: expr) or field/all(t: expr).
func (p *filterParser) lambda(ft token, op operand) (predicate, *apiError) {
	p.next() // '/'
	if op.isVar || !op.field.isCollection() {
		return nil, filterError("'%s' is not a collection field; any and all apply to collections.", ft.text)
	}
	q := p.next()
	if q.kind != tIdent || (q.text != "any" && q.text != "all") {
		return nil, filterError("expected any or all after '%s/' at position %d", ft.text, q.pos)
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if t := p.peek(); q.text == "any" && t.kind == tPunct && t.text == ")" {
		p.next()
		return func(d, _ map[string]any) bool { arr, _ := d[op.name].([]any); return len(arr) > 0 }, nil
	}
	vt := p.next()
	if vt.kind != tIdent {
		return nil, filterError("expected a lambda variable at position %d", vt.pos)
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	p.vars[vt.text] = op.field
	body, err := p.or()
	delete(p.vars, vt.text)
	if err != nil {
		return nil, err
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	all := q.text == "all"
	name := vt.text
	return func(d, vars map[string]any) bool {
		arr, _ := d[op.name].([]any)
		inner := map[string]any{}
		for k, v := range vars {
			inner[k] = v
		}
		for _, e := range arr {
			inner[name] = e
			if body(d, inner) != all {
				return !all
			}
		}
		return all
	}, nil
}

// literal parses a constant of the given EDM type (null is always allowed)
// compared with operator op.
func (p *filterParser) literal(typ, op string) (any, *apiError) {
	t := p.next()
	switch {
	case t.kind == tIdent && t.text == "null":
		return nil, nil
	case t.kind == tString && typ == "Edm.String":
		return t.text, nil
	case t.kind == tString && typ == "Edm.DateTimeOffset":
		// What the service answers: OData does not convert a string to a
		// DateTimeOffset; the literal must be unquoted.
		return nil, filterError("A binary operator with incompatible types was detected. Found operand types 'Edm.DateTimeOffset' and 'Edm.String' for operator kind '%s'.", operatorKind(op))
	case t.kind == tDateTime && typ == "Edm.DateTimeOffset":
		d, _ := parseDateTime(t.text) // the lexer checked it
		return d, nil
	case t.kind == tNumber && typ != "Edm.String" && typ != "Edm.Boolean" && typ != "Edm.DateTimeOffset":
		x, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, filterError("'%s' at position %d is not a number", t.text, t.pos)
		}
		return x, nil
	case t.kind == tIdent && typ == "Edm.Boolean" && (t.text == "true" || t.text == "false"):
		return t.text == "true", nil
	}
	return nil, filterError("the literal '%s' at position %d does not match the field type %s", t.text, t.pos, typ)
}

// operatorKind names a comparison operator as OData's error messages do.
func operatorKind(op string) string {
	return map[string]string{"eq": "Equal", "ne": "NotEqual", "gt": "GreaterThan", "ge": "GreaterThanOrEqual", "lt": "LessThan", "le": "LessThanOrEqual"}[op]
}

func comparison(op string) (func(int, bool) bool, *apiError) {
	switch op {
	case "eq":
		return func(c int, ok bool) bool { return ok && c == 0 }, nil
	case "ne":
		return func(c int, ok bool) bool { return !ok || c != 0 }, nil
	case "gt":
		return func(c int, ok bool) bool { return ok && c > 0 }, nil
	case "ge":
		return func(c int, ok bool) bool { return ok && c >= 0 }, nil
	case "lt":
		return func(c int, ok bool) bool { return ok && c < 0 }, nil
	case "le":
		return func(c int, ok bool) bool { return ok && c <= 0 }, nil
	}
	return nil, filterError("unknown comparison operator '%s'; use eq, ne, gt, ge, lt or le", op)
}

// compare orders a stored value against a literal; ok is false when they
// are not comparable (an absent value equals only null).
func compare(v, lit any) (int, bool) {
	if v == nil || lit == nil {
		if v == nil && lit == nil {
			return 0, true
		}
		return 0, false
	}
	switch l := lit.(type) {
	case time.Time: // a DateTimeOffset: the stored value is its RFC 3339 text
		s, _ := v.(string)
		t, ok := parseDateTime(s)
		if !ok {
			return 0, false
		}
		return t.Compare(l), true
	case string:
		s, ok := v.(string)
		return strings.Compare(s, l), ok
	case bool:
		b, ok := v.(bool)
		return boolCmp(b, l), ok
	case float64:
		x, ok := number(v)
		if !ok {
			return 0, false
		}
		return cmpFloat(x, l), true
	}
	return 0, false
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		x, err := n.Float64()
		return x, err == nil
	case float64:
		return n, true
	}
	return 0, false
}
