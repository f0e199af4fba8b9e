package cloudsearch

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

// odataFilterSeeds are filters as LlamaIndex writes them, over the keys of
// testFields.
var odataFilterSeeds = []string{
	`{"filters":[{"key":"author","value":"O'Brien","operator":"=="}]}`,
	`{"filters":[{"key":"author","value":["Lovelace, Ada","a|b",";~^","x\ty"],"operator":"in"}]}`,
	`{"filters":[{"key":"author","value":["x' or 1 eq 1 or 'a"],"operator":"in"}]}`,
	`{"filters":[{"key":"year","value":2024},{"key":"year","value":"2023","operator":"=="}],"condition":"or"}`,
	`{"filters":[{"key":"year","value":[2023,2024.0,"2025"],"operator":"in"}]}`,
	`{"filters":[{"key":"score","value":0.5},{"key":"draft","value":true}]}`,
	`{"filters":[{"key":"draft","value":[true,"false"],"operator":"in"}]}`,
	`{"filters":[{"key":"tags","value":"go"},{"key":"tags","value":["go","rust"," x",""],"operator":"in"}]}`,
	`{"filters":[{"key":"when","value":"2024-05-01T12:00:00.250+02:00"}]}`,
	`{"filters":[{"key":"when","value":["2024-05-01T10:00:00Z","2023-01-02T03:04:05.6Z"],"operator":"in"}]}`,
	`{"filters":[{"key":"author","value":[],"operator":"in"}]}`,
	`{"filters":[{"key":"nope","value":"x"}]}`,
	`{"filters":[{"key":"year","value":"twenty"}]}`,
	`{"filters":[{"key":"year","value":1.5}]}`,
	`{"filters":[{"key":"when","value":"yesterday"}]}`,
}

// FuzzODataFilter converts metadata filters decoded from JSON into OData
// over testFields. ODataFilter must never panic; an error must be a
// *sink.FilterError naming the filter's key; and an expression must parse
// as the OData subset ODataFilter writes (checkOData), with every string
// literal holding exactly the filter's values: no value can break out of
// its quotes or add to the expression.
func FuzzODataFilter(f *testing.F) {
	for _, s := range odataFilterSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var mf sink.MetadataFilters
		if json.Unmarshal(data, &mf) != nil {
			return
		}
		checkODataFilter(t, &mf)
	})
}

// FuzzODataFilterValues is FuzzODataFilter for values a Go caller can
// pass and JSON cannot hold: integers of every size, floats that are not
// finite, time.Time values, lists of them.
func FuzzODataFilterValues(f *testing.F) {
	f.Add(uint8(0), uint8(0), "O'Brien", 0.5, int64(7), int64(0))
	f.Add(uint8(1), uint8(1), "2024", 2024.0, int64(2024), int64(1714557600))
	f.Add(uint8(2), uint8(2), "x", 1e300, int64(math.MaxInt64), int64(-1))
	f.Add(uint8(5), uint8(3), "2024-05-01T10:00:00Z", math.Copysign(0, -1), int64(0), int64(253402300799))
	f.Add(uint8(4), uint8(4), "true", 1.0, int64(1), int64(0))
	f.Fuzz(func(t *testing.T, keyIdx, kind uint8, s string, x float64, n, unix int64) {
		ff := testFields[int(keyIdx)%len(testFields)]
		tm := time.Unix(unix%(1<<40), n%1e9).In(time.FixedZone("", int(n%(18*3600))))
		values := []any{s, x, n, int32(n), float32(x), tm, x == 0, []int{int(n), int(unix)}, []float64{x, float64(n)}, []any{s, x, n, tm}, []string{s, strconv.FormatInt(n, 10)}, []time.Time{tm}}
		v := values[int(kind)%len(values)]
		op := sink.EQ
		if _, ok := sink.ValueList(v); ok {
			op = sink.IN
		} else if _, ok := v.([]time.Time); ok {
			op = sink.IN
		}
		checkODataFilter(t, &sink.MetadataFilters{Filters: []sink.MetadataFilter{{Key: ff.Key, Value: v, Operator: op}}})
	})
}

// checkODataFilter converts f over testFields and checks the result.
func checkODataFilter(t *testing.T, f *sink.MetadataFilters) {
	t.Helper()
	got, err := ODataFilter(f, testFields)
	if err != nil {
		var fe *sink.FilterError
		if !errors.As(err, &fe) || !errors.Is(err, sink.ErrInvalidFilter) {
			t.Fatalf("ODataFilter(%#v) = %#v, want a *sink.FilterError", f, err)
		}
		named := strings.Contains(err.Error(), "condition")
		for _, mf := range f.Filters {
			named = named || mf.Key != "" && strings.Contains(err.Error(), strconv.Quote(mf.Key)) ||
				mf.Key == "" && strings.Contains(err.Error(), "empty key")
		}
		if !named {
			t.Fatalf("ODataFilter(%#v) = %q names no filter", f, err)
		}
		return
	}
	if len(f.Filters) == 0 {
		if got != "" {
			t.Fatalf("ODataFilter(%#v) = %q, want empty", f, got)
		}
		return
	}
	if err := checkOData(got, timesAsText(f), testFields.normalized()); err != nil {
		t.Fatalf("ODataFilter(%#v) = %q: %v", f, got, err)
	}
}

// odataDateTime is an OData DateTimeOffset literal as timeText writes it,
// in the range of Edm.DateTimeOffset (years 0001 to 9999), which is the
// range the service and searchtest accept.
var odataDateTime = regexp.MustCompile(`^(000[1-9]|00[1-9]\d|0[1-9]\d{2}|[1-9]\d{3})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)

// odataNumber is an OData number literal: decimal digits, an optional
// sign, fraction and exponent.
var odataNumber = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?`)

type odataTok struct {
	kind byte // 's' string, 'n' number, 'd' DateTimeOffset, 'i' identifier, 'p' punctuation
	text string
}

// lexOData splits an expression into tokens, strictly: single spaces
// between tokens, string literals in single quotes with quotes doubled.
func lexOData(src string) ([]odataTok, error) {
	var out []odataTok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ':
			i++
		case strings.IndexByte("(),:", c) >= 0:
			out = append(out, odataTok{'p', string(c)})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(src) {
					return nil, fmt.Errorf("unterminated string literal at %d", i)
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(src[j])
			}
			out = append(out, odataTok{'s', b.String()})
			i = j + 1
		case odataDateTime.MatchString(src[i:]):
			lit := odataDateTime.FindString(src[i:])
			out = append(out, odataTok{'d', lit})
			i += len(lit)
		case c == '-' || c >= '0' && c <= '9':
			lit := odataNumber.FindString(src[i:])
			if lit == "" {
				return nil, fmt.Errorf("bad number at %d", i)
			}
			out = append(out, odataTok{'n', lit})
			i += len(lit)
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] == '/' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, odataTok{'i', src[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected byte %q at %d", c, i)
		}
	}
	return out, nil
}

// odataChecker parses the OData subset ODataFilter writes:
//
//	expr   = term *( ("and" / "or") term )
//	term   = "(" expr ")" / "false" / target "eq" literal
//	       / "search.in(" target "," string "," string ")"
//	       / field "/any(t:" expr ")"
//
// where target is a filterable field (or t inside any), and records the
// values each filter's part of the expression compares with.
type odataChecker struct {
	toks   []odataTok
	i      int
	fields FilterableFields
	inAny  bool
	vals   []string // the values compared with, in order
}

func (p *odataChecker) peek() odataTok {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return odataTok{}
}

func (p *odataChecker) next() odataTok { t := p.peek(); p.i++; return t }

func (p *odataChecker) expect(kind byte, text string) error {
	if t := p.next(); t.kind != kind || t.text != text {
		return fmt.Errorf("token %d: %q, want %q", p.i-1, t.text, text)
	}
	return nil
}

func (p *odataChecker) expr() error {
	if err := p.term(); err != nil {
		return err
	}
	for t := p.peek(); t.kind == 'i' && (t.text == "and" || t.text == "or"); t = p.peek() {
		p.next()
		if err := p.term(); err != nil {
			return err
		}
	}
	return nil
}

func (p *odataChecker) target(name string) (FieldType, bool) {
	if p.inAny && name == "t" {
		return String, true
	}
	for _, ff := range p.fields {
		if ff.Field == name && !ff.Type.collection() {
			return ff.Type, true
		}
	}
	return "", false
}

func (p *odataChecker) term() error {
	t := p.next()
	switch {
	case t.kind == 'p' && t.text == "(":
		if err := p.expr(); err != nil {
			return err
		}
		return p.expect('p', ")")
	case t.kind == 'i' && t.text == "false":
		return nil
	case t.kind == 'i' && t.text == "search.in":
		if err := p.expect('p', "("); err != nil {
			return err
		}
		if typ, ok := p.target(p.next().text); !ok || typ != String {
			return fmt.Errorf("search.in on token %d, not a string field", p.i-1)
		}
		if err := p.expect('p', ","); err != nil {
			return err
		}
		list := p.next()
		if err := p.expect('p', ","); err != nil {
			return err
		}
		delim := p.next()
		if list.kind != 's' || delim.kind != 's' || !slices.Contains(searchInDelimiters, delim.text) {
			return fmt.Errorf("search.in with list %q and delimiters %q", list.text, delim.text)
		}
		for _, v := range strings.Split(list.text, delim.text) {
			if v == "" || strings.TrimSpace(v) != v {
				return fmt.Errorf("search.in value %q is empty or has white space around it", v)
			}
			p.vals = append(p.vals, v)
		}
		return p.expect('p', ")")
	case t.kind == 'i' && strings.HasSuffix(t.text, "/any"):
		field := strings.TrimSuffix(t.text, "/any")
		ok := false
		for _, ff := range p.fields {
			ok = ok || ff.Field == field && ff.Type.collection()
		}
		if !ok || p.inAny {
			return fmt.Errorf("%s on no collection field", t.text)
		}
		for _, want := range []string{"(", "t", ":"} {
			kind := byte('p')
			if want == "t" {
				kind = 'i'
			}
			if err := p.expect(kind, want); err != nil {
				return err
			}
		}
		p.inAny = true
		if err := p.expr(); err != nil {
			return err
		}
		p.inAny = false
		return p.expect('p', ")")
	case t.kind == 'i':
		typ, ok := p.target(t.text)
		if !ok {
			return fmt.Errorf("%q is no filterable field", t.text)
		}
		if err := p.expect('i', "eq"); err != nil {
			return err
		}
		lit := p.next()
		want := map[FieldType]byte{String: 's', Int32: 'n', Int64: 'n', Double: 'n', Boolean: 'i', DateTimeOffset: 'd'}[typ]
		if lit.kind != want || want == 'i' && lit.text != "true" && lit.text != "false" {
			return fmt.Errorf("%s field %s compared with %q", typ, t.text, lit.text)
		}
		if want == 'n' {
			x, err := strconv.ParseFloat(lit.text, 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return fmt.Errorf("number literal %q is not a finite number", lit.text)
			}
		}
		p.vals = append(p.vals, lit.text)
		return nil
	}
	return fmt.Errorf("unexpected token %d %q", p.i-1, t.text)
}

// checkOData reports whether expr parses (see odataChecker) and compares
// with exactly the values of f, in order, each written as literal would
// write it.
func checkOData(expr string, f *sink.MetadataFilters, fields FilterableFields) error {
	toks, err := lexOData(expr)
	if err != nil {
		return err
	}
	p := &odataChecker{toks: toks, fields: fields}
	if err := p.expr(); err != nil {
		return err
	}
	if p.i != len(toks) {
		return fmt.Errorf("tokens left from %d: %v", p.i, toks[p.i:])
	}
	var want []string
	for _, mf := range f.Filters {
		ff, _ := fields.lookup(mf.Key)
		values := []any{mf.Value}
		if mf.Operator == sink.IN {
			values, _ = sink.ValueList(mf.Value)
		}
		for _, v := range values {
			lit, err := literal(v, ff)
			if err != nil {
				return fmt.Errorf("literal(%#v): %v", v, err)
			}
			if ff.Type == String || ff.Type == StringCollection {
				lit = fmt.Sprint(v) // as parsed: unquoted
			}
			want = append(want, lit)
		}
	}
	if !slices.Equal(p.vals, want) {
		return fmt.Errorf("compares with %q, want %q", p.vals, want)
	}
	return nil
}
