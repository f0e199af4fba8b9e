package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestParseFilter covers the --filter syntax: EQ with = and ==, IN with in:
// in any letter case, spaces, and the operators the stores do not support,
// which must be usage errors naming the operator rather than EQ filters on
// a wrong key or a literal value that match nothing.
func TestParseFilter(t *testing.T) {
	eq := func(k, v string) sink.MetadataFilter { return sink.MetadataFilter{Key: k, Operator: sink.EQ, Value: v} }
	in := func(k string, v ...string) sink.MetadataFilter {
		return sink.MetadataFilter{Key: k, Operator: sink.IN, Value: v}
	}
	tests := []struct {
		arg     string
		want    sink.MetadataFilter
		wantErr string // a part of the usage error; "" when arg is valid
	}{
		{arg: "author=alice", want: eq("author", "alice")},
		{arg: "author==alice", want: eq("author", "alice")},
		{arg: "author===alice", want: eq("author", "=alice")},
		{arg: "url=a=b", want: eq("url", "a=b")},
		{arg: "url==a=b", want: eq("url", "a=b")},
		{arg: "expr=a<b", want: eq("expr", "a<b")},
		{arg: "author=", want: eq("author", "")},
		{arg: "a!b=c", want: eq("a!b", "c")},
		{arg: "author=in:alice,bob", want: in("author", "alice", "bob")},
		{arg: "author=IN:alice,bob", want: in("author", "alice", "bob")},
		{arg: "author=In:alice", want: in("author", "alice")},
		{arg: "author=in: alice, bob ", want: in("author", "alice", "bob")},
		{arg: "author==in:alice,bob", want: eq("author", "in:alice,bob")},
		{arg: "author==IS_EMPTY", want: eq("author", "IS_EMPTY")},
		{arg: "author==nin:x", want: eq("author", "nin:x")},
		{arg: "author==  spaced ", want: eq("author", "  spaced ")},
		{arg: "author = alice", want: eq("author", "alice")},
		{arg: " author =in:a", want: in("author", "a")},
		{arg: "author == alice", want: eq("author", " alice")},
		{arg: "author=inbox", want: eq("author", "inbox")},
		{arg: "tag=all", want: eq("tag", "all")},
		{arg: "tag=any-thing", want: eq("tag", "any-thing")},
		// IN on a JSON array: strings as JSON gives them, commas and all;
		// numbers and booleans as the text they are written with, as
		// in:1,2 gives them.
		{arg: `author=in:["Smith, J","O'Brien"]`, want: in("author", "Smith, J", "O'Brien")},
		{arg: `author=IN: [ "Smith, J" , " spaced " ] `, want: in("author", "Smith, J", " spaced ")},
		{arg: `author=in:["a\"b","\u00e9,",""]`, want: in("author", `a"b`, "é,", "")},
		{arg: `author=in:["[draft]","final"]`, want: in("author", "[draft]", "final")},
		{arg: `level=in:[1,2.50,-3e2]`, want: in("level", "1", "2.50", "-3e2")},
		{arg: `flag=in:[true,false]`, want: in("flag", "true", "false")},
		{arg: `author=in:["in:x"]`, want: in("author", "in:x")},
		// Unchanged: EQ values and lists that do not start with [ are not JSON.
		{arg: `author==in:["Smith, J"]`, want: eq("author", `in:["Smith, J"]`)},
		{arg: `author=["Smith, J"]`, want: eq("author", `["Smith, J"]`)},
		{arg: `author=in:a,[b]`, want: in("author", "a", "[b]")},

		{arg: "author!=alice", wantErr: `--filter "author!=alice": operator != (NE) is not supported; the stores support EQ (KEY=V or KEY==V) and IN (KEY=in:A,B)`},
		{arg: "level>=3", wantErr: "operator >= (GTE) is not supported"},
		{arg: "level<=3", wantErr: "operator <= (LTE) is not supported"},
		{arg: "level>3", wantErr: "operator > (GT) is not supported"},
		{arg: "level<3", wantErr: "operator < (LT) is not supported"},
		{arg: "level >= 3", wantErr: "operator >= (GTE) is not supported"},
		{arg: "author=nin:alice,bob", wantErr: `operator nin (NIN) is not supported; the stores support EQ (KEY=V or KEY==V) and IN (KEY=in:A,B); to match the value "nin:alice,bob" itself, use author==nin:alice,bob`},
		{arg: "author=NIN:alice", wantErr: "operator nin (NIN) is not supported"},
		{arg: "tags=any:a,b", wantErr: "operator any (ANY) is not supported"},
		{arg: "tags=ALL:a,b", wantErr: "operator all (ALL) is not supported"},
		{arg: "text=contains:x", wantErr: "operator contains (CONTAINS) is not supported"},
		{arg: "text=text_match:x", wantErr: "operator text_match (TEXT_MATCH) is not supported"},
		{arg: "text=Text_Match_Insensitive:x", wantErr: "operator text_match_insensitive (TEXT_MATCH_INSENSITIVE) is not supported"},
		{arg: "author=is_empty", wantErr: "operator is_empty (IS_EMPTY) is not supported"},
		{arg: "author=IS_EMPTY", wantErr: "operator is_empty (IS_EMPTY) is not supported"},
		// The advice to write KEY==VALUE must not read as != for a key that ends in !.
		{arg: "a! =nin:x", wantErr: `to match the value "nin:x" itself, use a! ==nin:x`},
		{arg: "=alice", wantErr: "the key is empty"},
		{arg: "  ==alice", wantErr: "the key is empty"},
		{arg: "!=alice", wantErr: "operator != (NE) is not supported"},
		{arg: "author", wantErr: `--filter "author": no operator`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := parseFilter(tt.arg)
			if tt.wantErr != "" {
				var uerr *usageError
				if !errors.As(err, &uerr) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFilter(%q) = %+v, %v; want a usage error with %q", tt.arg, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseFilter(%q) = %#v, %v; want %#v", tt.arg, got, err, tt.want)
			}
		})
	}
}

// TestParseFilterJSONErrors: an IN list that starts with [ but is no JSON
// array of strings and numbers is a usage error naming the flag, the text
// and the form to write, never IN on the pieces between its commas.
func TestParseFilterJSONErrors(t *testing.T) {
	form := `write the values as a JSON array of strings and numbers, such as --filter 'author=in:["Smith, J",42]' (in single quotes for the shell)`
	tests := []struct {
		arg  string
		want []string
	}{
		{`author=in:[Smith, J]`, []string{`--filter "author=in:[Smith, J]": the IN list [Smith, J] is not a JSON array (`, form,
			`or as comma-separated values (author=in:a,b)`}},
		{`author=in:["Smith, J"`, []string{`--filter "author=in:[\"Smith, J\"": the IN list ["Smith, J" is not a JSON array (`, form}},
		{`author=in:["a"] x`, []string{`the IN list ["a"] x is not a JSON array (`, form}},
		{`author=in:[draft]`, []string{`the IN list [draft] is not a JSON array`,
			`a value that starts with [ is taken for the start of an array: write it as a JSON string (author=in:["[draft]","final"])`}},
		{`author=in:[]`, []string{`--filter "author=in:[]": the IN list is empty, and would match nothing; give at least one value, such as author=in:["Smith, J",42]`}},
		{`author=in:["a",null]`, []string{`--filter "author=in:[\"a\",null]": value 2 of the IN list is null; an IN list holds strings and numbers only, such as author=in:["Smith, J",42]`}},
		{`tags=in:[{"k":"v"}]`, []string{`value 1 of the IN list is an object, {"k":"v"}; an IN list holds strings and numbers only, such as tags=in:["Smith, J",42]`}},
		{`tags=in:["a",["b","c"]]`, []string{`value 2 of the IN list is an array, ["b","c"]; an IN list holds strings and numbers only`}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := parseFilter(tt.arg)
			if exitCodeOf(err) != exitUsage {
				t.Fatalf("parseFilter(%q) = %#v, %v; want a usage error", tt.arg, got, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("parseFilter(%q): error %q\nlacks %q", tt.arg, err, w)
				}
			}
		})
	}
}

// TestFilterFlagsParse checks that repeated flags combine with AND, or
// with OR under --or, and that one bad flag fails them all.
func TestFilterFlagsParse(t *testing.T) {
	f := filterFlags{values: []string{"a==x", "b=IN:y,z"}}
	want := &sink.MetadataFilters{Condition: sink.And, Filters: []sink.MetadataFilter{
		{Key: "a", Operator: sink.EQ, Value: "x"},
		{Key: "b", Operator: sink.IN, Value: []string{"y", "z"}},
	}}
	if got, err := f.parse(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parse = %#v, %v; want %#v", got, err, want)
	}
	f.or, want.Condition = true, sink.Or
	if got, err := f.parse(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parse with --or = %#v, %v; want %#v", got, err, want)
	}
	f.values = append(f.values, "c!=w")
	if got, err := f.parse(); exitCodeOf(err) != exitUsage {
		t.Errorf("parse with c!=w = %#v, %v; want a usage error", got, err)
	}
	if got, err := (&filterFlags{}).parse(); got != nil || err != nil {
		t.Errorf("no flags: parse = %#v, %v; want nil, nil", got, err)
	}
}

// TestFilterFlagEndToEnd filters a local store from the command line:
// == and IN: select what they say on query and get, == matches a value
// that starts with in: literally, and an unsupported operator exits 2
// before the store is read.
func TestFilterFlagEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/alice/a.md": "Pelicans nest on the quay.",
		"corpus/bob/b.md":   "Pelicans fish in the harbour.",
		"corpus/carol/c.md": "Pelicans sleep on the pier.",
		"corpus/smith/d.md": "Pelicans dive off the pier.",
		"sluice.yaml": `source:
  metadata:
    - {match: "alice/**", set: {author: alice}}
    - {match: "bob/**", set: {author: bob}}
    - {match: "carol/**", set: {author: "in:carol"}}
    - {match: "smith/**", set: {author: "Smith, J"}}
embedder: {dimensions: 64}
`,
	})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	tests := []struct {
		filters []string
		want    []string // doc ids, sorted
	}{
		{[]string{"author==alice"}, []string{"alice/a.md"}},
		{[]string{"author=alice"}, []string{"alice/a.md"}},
		{[]string{"author = bob"}, []string{"bob/b.md"}},
		{[]string{"author=IN:alice,bob"}, []string{"alice/a.md", "bob/b.md"}},
		{[]string{"author=in:bob,in:carol"}, []string{"bob/b.md", "carol/c.md"}},
		{[]string{"author==in:carol"}, []string{"carol/c.md"}},
		{[]string{"author==alice", "author==bob", "--or"}, []string{"alice/a.md", "bob/b.md"}},
		{[]string{`author=in:["Smith, J","bob"]`}, []string{"smith/d.md", "bob/b.md"}},
		{[]string{`author=in:["in:carol"]`, "author==Smith, J", "--or"}, []string{"carol/c.md", "smith/d.md"}},
	}
	for _, tt := range tests {
		var flags []string
		for _, f := range tt.filters {
			if f == "--or" {
				flags = append(flags, f)
			} else {
				flags = append(flags, "--filter", f)
			}
		}
		for _, cmd := range [][]string{{"query", "pelicans", "--top-k", "10"}, {"get"}} {
			args := append(append(append([]string{}, cmd...), flags...), "--json")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				out, stderr, code := sluice(t, dir, args...)
				got := docIDsOf(t, out)
				if code != exitOK || !sameSet(got, tt.want) {
					t.Errorf("exit %d, stderr %q, documents %v; want %v", code, stderr, got, tt.want)
				}
			})
		}
	}
	for _, cmd := range []string{"query", "get"} {
		args := []string{cmd, "--filter", "author!=alice"}
		if cmd == "query" {
			args = append(args, "pelicans")
		}
		stdout, stderr, code := sluice(t, dir, args...)
		want := `--filter "author!=alice": operator != (NE) is not supported; the stores support EQ (KEY=V or KEY==V) and IN (KEY=in:A,B)`
		if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%s --filter author!=alice: exit %d, stdout %q, stderr %q; want exit 2 with %q", cmd, code, stdout, stderr, want)
		}
		args = []string{cmd, "--filter", "author=in:[Smith, J]"}
		if cmd == "query" {
			args = append(args, "pelicans")
		}
		stdout, stderr, code = sluice(t, dir, args...)
		want = `--filter "author=in:[Smith, J]": the IN list [Smith, J] is not a JSON array`
		if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%s --filter 'author=in:[Smith, J]': exit %d, stdout %q, stderr %q; want exit 2 with %q", cmd, code, stdout, stderr, want)
		}
	}
}

// TestFilterFlagJSONCloudSearch filters a Cloud AI Search index (the test
// double) with IN lists written as JSON arrays: values that hold a comma
// on a STRING and in a COLLECTION field, and numbers on an INT32 field,
// which reach the service as the same $filter as the comma form's.
func TestFilterFlagJSONCloudSearch(t *testing.T) {
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
	unsetEnv(t, "CLOUD_AI_SEARCH_ENDPOINT")
	unsetEnv(t, "CLOUD_SEARCH_API_VERSION")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"corpus/a.md": "Pelicans nest on the quay.",
		"corpus/b.md": "Pelicans fish in the harbour.",
		"corpus/c.md": "Pelicans sleep on the pier.",
		"sluice.yaml": fmt.Sprintf(`source:
  metadata:
    - {match: "a.md", set: {author: "Smith, J", tags: ["x, y", z], level: 2}}
    - {match: "b.md", set: {author: "O'Brien", tags: [z], level: 3}}
    - {match: "c.md", set: {author: Smith, tags: [x, y], level: 1}}
embedder: {dimensions: 16}
sink:
  type: cloudsearch
  cloudsearch:
    endpoint: %s
    indexName: jsonin
    indexManagement: CreateIfNotExists
    embeddingDimensionality: 16
    filterableMetadataFieldKeys:
      author: [author, STRING]
      tags: [tags, COLLECTION]
      level: [level, INT32]
`, endpoint),
	})
	if _, stderr, code := sluice(t, dir, "run", "corpus"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	// filters returns the $filter of each search request sent since the
	// request numbered from.
	filters := func(from int) []string {
		var fs []string
		for _, r := range srv.Requests()[from:] {
			var body struct{ Filter string }
			if strings.HasSuffix(r.Path, "/docs/search") && json.Unmarshal(r.Body, &body) == nil {
				fs = append(fs, body.Filter)
			}
		}
		return fs
	}
	tests := []struct {
		filter string
		want   []string // doc ids
		same   string   // a filter written in the comma form that must reach the service alike
	}{
		{filter: `author=in:["Smith, J","O'Brien"]`, want: []string{"a.md", "b.md"}},
		{filter: `tags=in:["x, y"]`, want: []string{"a.md"}},
		{filter: `level=in:[2,3]`, want: []string{"a.md", "b.md"}, same: "level=in:2,3"},
		{filter: `level=in:[1]`, want: []string{"c.md"}, same: "level=in:1"},
		{filter: `tags=in:["x","q"]`, want: []string{"c.md"}, same: "tags=in:x,q"},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"query", "pelicans", "--top-k", "10"}, {"get"}} {
			args := append(append([]string{}, cmd...), "--filter", tt.filter, "--json")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				before := len(srv.Requests())
				out, stderr, code := sluice(t, dir, args...)
				got := docIDsOf(t, out)
				if code != exitOK || !sameSet(got, tt.want) {
					t.Errorf("exit %d, stderr %q, documents %v; want %v", code, stderr, got, tt.want)
				}
				if tt.same == "" {
					return
				}
				sent := filters(before)
				before = len(srv.Requests())
				args[len(args)-2] = tt.same
				if _, stderr, code := sluice(t, dir, args...); code != exitOK {
					t.Fatalf("--filter %s: exit %d: %s", tt.same, code, stderr)
				}
				if comma := filters(before); len(sent) == 0 || !reflect.DeepEqual(sent, comma) {
					t.Errorf("$filter sent for %s: %q; for %s: %q; want the same", tt.filter, sent, tt.same, comma)
				}
			})
		}
	}
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := make(map[string]int, len(want))
	for _, w := range want {
		seen[w]++
	}
	for _, g := range got {
		if seen[g] == 0 {
			return false
		}
		seen[g]--
	}
	return true
}

// TestQueryDimensionMismatch queries stores whose vectors are longer than
// embedder.dimensions: a mode that embeds the query must fail as run does
// (exit 2, naming the settings and the fix) before the service is asked,
// rather than pass on the service's 400; a sparse query, which embeds
// nothing, still works. An index that a validating indexManagement
// refuses on opening is a configuration error too (exit 2), as for run.
func TestQueryDimensionMismatch(t *testing.T) {
	t.Run("cloudsearch", func(t *testing.T) {
		srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "test-admin-key"})
		t.Setenv("CLOUD_AI_SEARCH_KEY", "test-admin-key")
		dir := t.TempDir()
		config := func(dims int, management string) string {
			return fmt.Sprintf("embedder: {dimensions: %d}\nsink:\n  type: cloudsearch\n  cloudsearch: {endpoint: %s, indexName: qdims, indexManagement: %s, embeddingDimensionality: %d}\n",
				dims, endpoint, management, dims)
		}
		writeFiles(t, dir, map[string]string{
			"corpus/a.md": "Alpha beta gamma.",
			"first.yaml":  config(64, "CreateIfNotExists"),
			"plain.yaml":  config(32, "NoValidation"),
			"check.yaml":  config(32, "ValidateIndex"),
		})
		if _, stderr, code := sluice(t, dir, "run", "corpus", "--config", "first.yaml"); code != exitOK {
			t.Fatalf("first run: exit %d: %s", code, stderr)
		}
		searches := func() int {
			n := 0
			for _, r := range srv.Requests() {
				if strings.HasSuffix(r.Path, "/docs/search") {
					n++
				}
			}
			return n
		}
		want := `index "qdims" holds 64-dimensional vectors but embedder.dimensions is 32; set embedder.dimensions and sink.cloudsearch.embeddingDimensionality back to 64`
		for _, mode := range []string{"vector", "hybrid", "semantic_hybrid"} {
			t.Run(mode, func(t *testing.T) {
				before := searches()
				stdout, stderr, code := sluice(t, dir, "query", "alpha", "--mode", mode, "--config", "plain.yaml")
				if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, stdout, stderr, want)
				}
				if n := searches() - before; n != 0 {
					t.Errorf("%d searches reached the service", n)
				}
			})
		}
		if out, stderr, code := sluice(t, dir, "query", "alpha", "--mode", "sparse", "--json", "--config", "plain.yaml"); code != exitOK || len(jsonLines(t, out)) != 1 {
			t.Errorf("sparse query: exit %d, stdout %q, stderr %q; want the one document", code, out, stderr)
		}
		// An index the store refuses on opening, as run does; and the
		// same mismatch found by index validate (any indexManagement).
		for _, args := range [][]string{{"query", "alpha"}, {"get"}, {"index", "validate"}} {
			args = append(args, "--config", "check.yaml")
			stdout, stderr, code := sluice(t, dir, args...)
			want := "cloudsearch: index \"qdims\" does not match sink.cloudsearch.embeddingDimensionality: configured 32 dimensions, index has 64 dimensions"
			if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", args, code, stdout, stderr, want)
			}
		}
	})
	t.Run("local", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"corpus/a.md": "Alpha beta gamma.",
			"small.yaml":  "embedder: {dimensions: 256}\n",
		})
		if _, stderr, code := sluice(t, dir, "run", "corpus"); code != exitOK {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		stdout, stderr, code := sluice(t, dir, "query", "alpha", "--config", "small.yaml")
		want := "holds 1536-dimensional vectors but embedder.dimensions is 256; set embedder.dimensions back to 1536"
		if code != exitUsage || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, stdout, stderr, want)
		}
	})
}

// docIDsOf returns the doc_id of each JSON line of query or get --json.
func docIDsOf(t *testing.T, out string) []string {
	t.Helper()
	var ids []string
	for _, l := range jsonLines(t, out) {
		ids = append(ids, fmt.Sprint(l["doc_id"]))
	}
	return ids
}
