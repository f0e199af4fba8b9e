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

// filterCase is a filter and whether it matches the test's document.
type filterCase struct {
	filter string
	want   bool
}

// evalFilters parses each filter of tests on ix and checks whether it
// matches d.
func evalFilters(t *testing.T, ix *index, d map[string]any, tests []filterCase) {
	t.Helper()
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

func TestFilterEval(t *testing.T) {
	ix := testIndex(t)
	d := map[string]any{
		"id": "k1", "author": "o'neil", "year": json.Number("2021"), "doc_id": "d-1",
		"tags": []any{"red", "blue"},
	}
	tests := []filterCase{
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
	evalFilters(t, ix, d, tests)
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

// dateIndex is an index with a filterable, sortable Edm.DateTimeOffset
// field and a collection of them.
const dateIndex = `{"name": "dates", "fields": [
	{"name": "id", "type": "Edm.String", "key": true},
	{"name": "author", "type": "Edm.String", "filterable": true},
	{"name": "when", "type": "Edm.DateTimeOffset", "filterable": true, "sortable": true},
	{"name": "whens", "type": "Collection(Edm.DateTimeOffset)", "filterable": true}
]}`

// TestFilterDateTimeOffset checks unquoted DateTimeOffset literals: they
// compare with stored values as instants, whatever either's offset, and a
// quoted string compared with a DateTimeOffset field is refused.
func TestFilterDateTimeOffset(t *testing.T) {
	ix, perr := parseIndex([]byte(dateIndex))
	if perr != nil {
		t.Fatal(perr)
	}
	d := map[string]any{"id": "k1", "author": "ann", "when": "2024-05-01T12:00:00+02:00", "whens": []any{"2023-01-01T00:00:00Z", "2023-06-01T00:00:00.25Z"}}
	tests := []filterCase{
		{"when eq 2024-05-01T10:00:00Z", true},
		{"when eq 2024-05-01T12:00:00+02:00", true},
		{"when eq 2024-05-01T06:00:00-04:00", true},
		{"when eq 2024-05-01T10:00:00.000Z", true},
		{"when eq 2024-05-01T10:00Z", true},
		{"when eq 2024-05-01T10:00:01Z", false},
		{"when ne 2024-05-01T10:00:01Z", true},
		{"when gt 2024-05-01T09:59:59.9Z", true},
		{"when lt 2024-05-01T10:00:00Z", false},
		{"when le 2024-05-01T10:00:00Z and when ge 2024-05-01T10:00:00Z", true},
		{"when eq null", false},
		{"(when eq 2020-01-01T00:00:00Z) or (when eq 2024-05-01T10:00:00Z)", true},
		{"whens/any(t: t eq 2023-06-01T00:00:00.25Z)", true},
		{"whens/any(t: t gt 2024-01-01T00:00:00Z)", false},
	}
	evalFilters(t, ix, d, tests)
	errs := []struct {
		filter, want string
	}{
		{"when eq '2024-05-01T10:00:00Z'", "Found operand types 'Edm.DateTimeOffset' and 'Edm.String' for operator kind 'Equal'"},
		{"when gt '2024-05-01T10:00:00Z'", "for operator kind 'GreaterThan'"},
		{"whens/any(t: t eq '2023-01-01T00:00:00Z')", "incompatible types"},
		{"author eq 2024-05-01T10:00:00Z", "does not match the field type Edm.String"},
		{"when eq 2024", "does not match the field type Edm.DateTimeOffset"},
		{"when eq true", "does not match the field type Edm.DateTimeOffset"},
		{"when eq 2024-13-01T10:00:00Z", "not a valid DateTimeOffset"},
	}
	for _, tt := range errs {
		t.Run(tt.filter, func(t *testing.T) {
			_, err := ix.parseFilter(tt.filter)
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			if err.status != http.StatusBadRequest || !strings.Contains(err.message, tt.want) {
				t.Errorf("error %d %q, want 400 containing %q", err.status, err.message, tt.want)
			}
		})
	}
}

// TestDateTimeOffsetOverHTTP filters and orders stored DateTimeOffset
// values given with different offsets, and answers 400 to a quoted one.
func TestDateTimeOffsetOverHTTP(t *testing.T) {
	_, url := Start(t, Options{Key: testKey})
	if st, b := call(t, url, http.MethodPost, "/indexes", []byte(dateIndex)); st != http.StatusCreated {
		t.Fatalf("create index: %d %s", st, b)
	}
	batch := map[string]any{"value": []any{
		map[string]any{"id": "late", "when": "2024-05-01T10:00:00-05:00"},   // 15:00Z
		map[string]any{"id": "early", "when": "2024-05-01T14:00:00+02:00"},  // 12:00Z
		map[string]any{"id": "middle", "when": "2024-05-01T13:30:00+00:00"}, // 13:30Z
	}}
	if st, b := call(t, url, http.MethodPost, "/indexes/dates/docs/index", batch); st != http.StatusOK {
		t.Fatalf("upload: %d %s", st, b)
	}
	keys := func(req map[string]any) []string {
		st, b := call(t, url, http.MethodPost, "/indexes/dates/docs/search", req)
		if st != http.StatusOK {
			t.Fatalf("search %v: %d %s", req, st, b)
		}
		var r searchResp
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range r.Value {
			out = append(out, v["id"].(string))
		}
		return out
	}
	if got := strings.Join(keys(map[string]any{"search": "*", "orderby": "when asc"}), ","); got != "early,middle,late" {
		t.Errorf("orderby when asc: %s, want early,middle,late (by instant, not by text)", got)
	}
	if got := strings.Join(keys(map[string]any{"search": "*", "filter": "when eq 2024-05-01T12:00:00Z"}), ","); got != "early" {
		t.Errorf("when eq 12:00Z: %s, want early", got)
	}
	if got := strings.Join(keys(map[string]any{"search": "*", "filter": "when ge 2024-05-01T13:30:00Z", "orderby": "id asc"}), ","); got != "late,middle" {
		t.Errorf("when ge 13:30Z: %s, want late,middle", got)
	}
	st, b := call(t, url, http.MethodPost, "/indexes/dates/docs/search", map[string]any{"search": "*", "filter": "when eq '2024-05-01T12:00:00Z'"})
	if st != http.StatusBadRequest || !strings.Contains(string(b), "incompatible types") {
		t.Errorf("quoted DateTimeOffset: %d %s, want 400 about incompatible types", st, b)
	}
}
