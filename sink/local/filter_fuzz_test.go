package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/sink"
)

// sqlFilterSeeds pair filters (JSON, as LlamaIndex writes them) with
// metadata rows (a JSON array of objects).
var sqlFilterSeeds = []struct{ filter, rows string }{
	{`{"filters":[{"key":"lang","value":"en","operator":"=="}]}`, `[{"lang":"en","year":2023},{"lang":"de"}]`},
	{`{"filters":[{"key":"year","value":2024}]}`, `[{"year":2024},{"year":"2024"},{"year":2024.0},{"year":[2023,2024]}]`},
	{`{"filters":[{"key":"year","value":"2024.0"}]}`, `[{"year":2024},{"year":"2024"}]`},
	{`{"filters":[{"key":"draft","value":"true"}]}`, `[{"draft":true},{"draft":"true"},{"draft":false}]`},
	{`{"filters":[{"key":"draft","value":false}]}`, `[{"draft":false},{"draft":"false"}]`},
	{`{"filters":[{"key":"x","value":"<nil>"}]}`, `[{"x":null}]`},
	{`{"filters":[{"key":"tags","value":["rust","db"],"operator":"in"}]}`, `[{"tags":["go","db"]},{"tags":[]},{"tags":["go",7]}]`},
	{`{"filters":[{"key":"lang","value":"de"},{"key":"tags","value":["go"],"operator":"in"}],"condition":"or"}`, `[{"lang":"de"},{"tags":["go"]},{}]`},
	{`{"filters":[{"key":"a.b","value":"dotted"}]}`, `[{"a.b":"dotted"},{"a":{"b":"dotted"}}]`},
	{`{"filters":[{"key":"we\"ird","value":"x"}]}`, `[{"we\"ird":"x"}]`},
	{`{"filters":[{"key":"score","value":1.5}]}`, `[{"score":[1.5,2]},{"score":1.5000000000000002}]`},
	{`{"filters":[{"key":"k","value":"x' OR 1=1 --"}]}`, `[{"k":"x' OR 1=1 --"},{"k":"y"}]`},
	{`{"filters":[{"key":"k","value":[],"operator":"in"}]}`, `[{"k":"x"}]`},
}

// FuzzSQLFilter checks the local store's SQL pre-filter against
// sink.MetadataFilters.Match, which decides: for any valid filter and
// stored metadata,
//   - the SQL condition uses bind parameters only: outside its fixed
//     keywords and type names it holds no text of the filter;
//   - it keeps every row Match accepts (it may keep more: the store
//     checks them with Match);
//   - keeps, which decides a row from its stored JSON, agrees with Match.
func FuzzSQLFilter(f *testing.F) {
	for _, s := range sqlFilterSeeds {
		f.Add([]byte(s.filter), []byte(s.rows))
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	if _, err := db.Exec(`CREATE TABLE nodes (seq INTEGER PRIMARY KEY, metadata TEXT NOT NULL DEFAULT '{}')`); err != nil {
		f.Fatal(err)
	}
	var mu sync.Mutex // the table is shared by the runs of the target
	f.Fuzz(func(t *testing.T, filterJSON, rowsJSON []byte) {
		var mf sink.MetadataFilters
		if json.Unmarshal(filterJSON, &mf) != nil || mf.Validate() != nil {
			return
		}
		var rows []map[string]any
		if json.Unmarshal(rowsJSON, &rows) != nil || len(rows) > 16 {
			return
		}
		var stored []string
		for _, md := range rows {
			enc, err := encodeMetadata(md)
			if err != nil {
				continue // the store refuses it
			}
			stored = append(stored, enc)
		}
		sf := compileFilter(&mf)
		checkSQLShape(t, sf)
		if !sf.active() {
			if len(mf.Filters) > 0 {
				t.Fatalf("compileFilter(%s) is inactive", filterJSON)
			}
			return
		}
		mu.Lock()
		kept := runSQLFilter(t, db, sf, stored)
		mu.Unlock()
		for i, enc := range stored {
			md, err := decodeMetadata(enc)
			if err != nil {
				t.Fatalf("decodeMetadata(%s): %v", enc, err)
			}
			want := mf.Match(md)
			if want && !kept[i] {
				t.Fatalf("SQL condition %s with %#v drops metadata %s, which Match accepts for filter %s", sf.where, sf.args, enc, filterJSON)
			}
			if got, err := sf.keeps(enc); err != nil || got != want {
				t.Fatalf("keeps(%s) = %v, %v; Match says %v", enc, got, err, want)
			}
		}
	})
}

// sqlWords are the only words a filter's SQL condition may hold outside
// string literals, and sqlLiterals its only string literals: anything
// else would be text of the filter spliced into the SQL.
var (
	sqlWords = map[string]bool{
		"EXISTS": true, "SELECT": true, "FROM": true, "json_each": true, "n.metadata": true, "AS": true, "j": true,
		"WHERE": true, "OR": true, "AND": true, "j.type": true, "IN": true, "CAST": true, "j.value": true,
		"REAL": true, "0": true, "1": true,
	}
	sqlLiterals = map[string]bool{"integer": true, "real": true, "text": true, "true": true, "false": true, "null": true}
)

// checkSQLShape fails t unless sf's condition is made of sqlWords,
// sqlLiterals and punctuation, with one bind argument per placeholder.
func checkSQLShape(t *testing.T, sf sqlFilter) {
	t.Helper()
	if n := strings.Count(sf.where, "?"); n != len(sf.args) {
		t.Fatalf("SQL condition %s has %d placeholders for %d arguments", sf.where, n, len(sf.args))
	}
	for _, a := range sf.args {
		switch a.(type) {
		case string, float64:
		default:
			t.Fatalf("SQL argument %#v of type %T", a, a)
		}
	}
	rest := sf.where
	for {
		i := strings.IndexByte(rest, '\'')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+1:], '\'')
		if j < 0 {
			t.Fatalf("SQL condition %s has an unterminated string literal", sf.where)
		}
		if lit := rest[i+1 : i+1+j]; !sqlLiterals[lit] {
			t.Fatalf("SQL condition %s holds the string literal '%s'", sf.where, lit)
		}
		rest = rest[:i] + " " + rest[i+1+j+1:]
	}
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(" (),=?", r) }) {
		if !sqlWords[w] {
			t.Fatalf("SQL condition %s holds %q", sf.where, w)
		}
	}
}

// runSQLFilter stores each metadata JSON of stored as a row of db's
// table nodes (an in-memory table shaped like the store's), and reports which rows sf's SQL
// condition keeps.
func runSQLFilter(t *testing.T, db *sql.DB, sf sqlFilter, stored []string) []bool {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `DELETE FROM nodes`); err != nil {
		t.Fatal(err)
	}
	for i, enc := range stored {
		if _, err := db.ExecContext(ctx, `INSERT INTO nodes (seq, metadata) VALUES (?, ?)`, i, enc); err != nil {
			t.Fatal(err)
		}
	}
	kept := make([]bool, len(stored))
	if sf.where == "" {
		for i := range kept {
			kept[i] = true
		}
		return kept
	}
	rows, err := db.QueryContext(ctx, `SELECT seq FROM nodes AS n WHERE `+sf.where, sf.args...)
	if err != nil {
		t.Fatalf("SQL condition %s with %#v: %v", sf.where, sf.args, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		kept[seq] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("SQL condition %s with %#v: %v", sf.where, sf.args, err)
	}
	return kept
}
