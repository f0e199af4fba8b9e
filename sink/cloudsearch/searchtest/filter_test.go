package searchtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func testIndex(t *testing.T) *index {
	t.Helper()
	ix, err := parseIndex(readTestdata(t, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestFilterEval(t *testing.T) {
	ix := testIndex(t)
	d := map[string]any{
		"id": "k1", "author": "o'neil", "year": json.Number("2021"), "doc_id": "d-1",
		"tags": []any{"red", "blue"},
	}
	tests := []struct {
		filter string
		want   bool
	}{
		{"author eq 'o''neil'", true},
		{"author eq 'oneil'", false},
		{"author ne 'x'", true},
		{"year eq 2021", true},
		{"year eq 2021.0", true},
		{"year gt 2020 and year lt 2022", true},
		{"year ge 2022", false},
		{"search.in(author, 'a,o''neil', ',')", true},
		{"search.in(author, 'a b')", false},
		{"search.in(doc_id, 'd-1|d-2', '|')", true},
		{"tags/any(t: search.in(t, 'green,blue', ','))", true},
		{"tags/any(t: search.in(t, 'green,pink', ','))", false},
		{"tags/any(t: t eq 'red')", true},
		{"tags/all(t: t eq 'red')", false},
		{"tags/any()", true},
		{"not (author eq 'x')", true},
		{"not author eq 'o''neil'", false},
		{"author eq 'x' or (year eq 2021 and tags/any(t: t eq 'blue'))", true},
		{"(author eq 'x' or year eq 1999) and doc_id eq 'd-1'", false},
		{"secret eq null", true},
		{"true", true},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			p, err := ix.parseFilter(tt.filter)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := p(d, nil); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	ix := testIndex(t)
	tests := []struct {
		filter, want string
	}{
		{"chunk eq 'x'", "The field 'chunk' is not filterable"},
		{"nosuch eq 'x'", "Could not find a property named 'nosuch'"},
		{"author eq 'x", "unterminated string"},
		{"author eq 12", "does not match the field type Edm.String"},
		{"year eq 'x'", "does not match the field type Edm.Int32"},
		{"tags eq 'x'", "is a collection"},
		{"author/any(t: t eq 'x')", "not a collection field"},
		{"search.in(tags, 'a')", "search.in applies to a single-valued Edm.String field"},
		{"author eq 'x' and", "unexpected"},
		{"(author eq 'x'", "expected ')'"},
		{"author like 'x'", "unknown comparison operator 'like'"},
		{"author eq 'x' author", "unexpected 'author'"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			_, err := ix.parseFilter(tt.filter)
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			if err.status != http.StatusBadRequest || !strings.Contains(err.message, tt.want) || !strings.Contains(err.message, "$filter") {
				t.Errorf("error %d %q, want 400 containing %q", err.status, err.message, tt.want)
			}
		})
	}
}
