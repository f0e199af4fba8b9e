package main

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/sink"
)

// FuzzParseFilter parses arbitrary --filter flags, the metadata filters
// users type on the command line of query and get. parseFilter must never
// panic, and:
//   - an error is a usage error that names the flag as typed (--filter
//     "ARG"), and the value it tells to write with == to match it
//     literally (KEY==VALUE) does parse as EQ on that value;
//   - a filter has a non-empty key without spaces around it nor =, < or
//     > in it, and is EQ on a string or IN on a non-empty list of strings,
//     which Validate accepts;
//   - a filter written back in its canonical form (KEY ==VALUE for EQ,
//     KEY =in:[JSON strings] for IN) parses to the same filter, so that
//     any filter the flag gives can be given again, exactly.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"author=alice", "author==alice", "author===alice", "url=a=b", "expr=a<b", "author=", "a!b=c",
		"author=in:alice,bob", "author=IN: alice , bob ", "author==in:alice,bob", "author==  spaced ",
		`author=in:["Smith, J","O'Brien"]`, `level=in:[1,2.50,-3e2]`, `flag=in:[true,false]`, `author=in:["[draft]","final"]`,
		`author=in:a,[b]`, "author!=alice", "level >= 3", "author=nin:alice,bob", "text=Text_Match_Insensitive:x",
		"author=IS_EMPTY", "=alice", "  ==alice", "author", `author=in:[]`, `author=in:["a",null]`, `tags=in:[{"k":"v"}]`,
		"a! =nin:x", "k=in:\xff,\"x\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := parseFilter(arg)
		if err != nil {
			checkFilterUsage(t, arg, err)
			return
		}
		switch {
		case got.Key == "" || strings.TrimSpace(got.Key) != got.Key || strings.ContainsAny(got.Key, "=<>"):
			t.Fatalf("parseFilter(%q) has the key %q", arg, got.Key)
		case got.Operator == sink.EQ:
			if _, ok := got.Value.(string); !ok {
				t.Fatalf("parseFilter(%q) = EQ on %#v, want a string", arg, got.Value)
			}
		case got.Operator == sink.IN:
			if l, ok := got.Value.([]string); !ok || len(l) == 0 {
				t.Fatalf("parseFilter(%q) = IN on %#v, want a non-empty list of strings", arg, got.Value)
			}
		default:
			t.Fatalf("parseFilter(%q) has the operator %q", arg, got.Operator)
		}
		if err := (&sink.MetadataFilters{Filters: []sink.MetadataFilter{got}}).Validate(); err != nil {
			t.Fatalf("parseFilter(%q) = %#v, which Validate refuses: %v", arg, got, err)
		}
		canon, ok := canonicalFilter(got)
		if !ok {
			return
		}
		back, err := parseFilter(canon)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("parseFilter(%q) = %#v, written back as %q parses to %#v, %v", arg, got, canon, back, err)
		}
	})
}

// canonicalFilter writes mf as a --filter flag that parseFilter reads
// exactly: KEY ==VALUE for EQ (the space keeps a key that ends in ! from
// reading as !=), KEY =in:[...] with the values as JSON strings for IN. ok
// is false for an IN value that is not valid UTF-8, which JSON cannot
// hold.
func canonicalFilter(mf sink.MetadataFilter) (string, bool) {
	if mf.Operator == sink.EQ {
		return mf.Key + " ==" + mf.Value.(string), true
	}
	values := mf.Value.([]string)
	for _, v := range values {
		if !utf8.ValidString(v) {
			return "", false
		}
	}
	list, err := json.Marshal(values)
	if err != nil {
		return "", false
	}
	return mf.Key + " =in:" + string(list), true
}

// checkFilterUsage fails t unless err, from parseFilter(arg), is a usage
// error naming the flag, whose advice to write KEY==VALUE for a value
// that reads as an unsupported operator gives EQ on that value.
func checkFilterUsage(t *testing.T, arg string, err error) {
	t.Helper()
	var uerr *usageError
	if !errors.As(err, &uerr) {
		t.Fatalf("parseFilter(%q) = %#v, want a usage error", arg, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "--filter "+strconv.Quote(arg)+": ") {
		t.Fatalf("parseFilter(%q) = %q, which does not name the flag", arg, msg)
	}
	const advice = " itself, use "
	i := strings.Index(msg, "to match the value ")
	if i < 0 {
		return
	}
	// "to match the value "VALUE" itself, use KEY==VALUE", VALUE quoted by %q.
	rest := msg[i+len("to match the value "):]
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		t.Fatalf("parseFilter(%q) = %q: no quoted value to match", arg, msg)
	}
	value, _ := strconv.Unquote(quoted)
	use, ok := strings.CutPrefix(rest[len(quoted):], advice)
	if !ok {
		t.Fatalf("parseFilter(%q) = %q: no advice after the value", arg, msg)
	}
	back, err := parseFilter(use)
	if err != nil || back.Operator != sink.EQ || back.Value != value {
		t.Fatalf("parseFilter(%q) advises %q to match %q, which parses to %#v, %v", arg, use, value, back, err)
	}
}
