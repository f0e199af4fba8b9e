package main

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagValueOfTheWrongType checks that a flag value of the wrong type
// exits 2 with a message that names the flag, quotes the value and says
// what the flag takes, whatever the command, instead of strconv's or
// time's error ("invalid argument "abc" for "--top-k" flag:
// strconv.ParseInt: parsing "abc": invalid syntax").
func TestFlagValueOfTheWrongType(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // all of stderr
	}{
		{"int", []string{"query", "x", "--top-k", "abc"}, `--top-k: "abc" is not a whole number`},
		{"decimal for an int", []string{"split", "--chunk-size", "1.5", "x"}, `--chunk-size: "1.5" is not a whole number`},
		{"int too large", []string{"query", "x", "--top-k=99999999999999999999"}, `--top-k: "99999999999999999999" is too large (at most 9223372036854775807)`},
		{"int too small", []string{"get", "--limit", "-99999999999999999999"}, `--limit: "-99999999999999999999" is too small (at least -9223372036854775808)`},
		{"int slice", []string{"bench", "--batch-sizes", "a"}, `--batch-sizes: "a" is not a comma-separated list of whole numbers such as 8,64,256`},
		{"int slice, one bad", []string{"bench", "--concurrency=1,two"}, `--concurrency: "1,two" is not a comma-separated list of whole numbers such as 8,64,256`},
		{"duration", []string{"watch", "docs", "--debounce", "5"}, `--debounce: "5" is not a duration such as 500ms, 60s or 2m`},
		{"float", []string{"devserver", "search", "--fault-rate", "x"}, `--fault-rate: "x" is not a number`},
		{"float too large", []string{"devserver", "embeddings", "--fault-rate", "1e400"}, `--fault-rate: "1e400" is beyond the range of numbers (about ±1.8e308)`},
		{"bool", []string{"run", "docs", "--json=maybe"}, `--json: "maybe" is not true or false`},
		{"persistent bool", []string{"--debug=maybe", "version"}, `--debug: "maybe" is not true or false`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := sluice(t, dir, tt.args...)
			if want := "sluice: " + tt.want + "\n"; code != exitUsage || stderr != want {
				t.Errorf("exit %d, stderr %q; want exit 2, stderr %q", code, stderr, want)
			}
		})
	}
}

// TestFlagParseError checks flagParseError's words for each of pflag's
// types, found by Value.Type, and that it keeps the message of a flag of a
// type of its own and the errors that are not a value's.
func TestFlagParseError(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"int8 too large", []string{"--int8", "128"}, `--int8: "128" is too large (at most 127)`},
		{"uint", []string{"--uint", "-1"}, `--uint: "-1" is not a whole number`},
		{"uint64 too large", []string{"--uint64", "18446744073709551616"}, `--uint64: "18446744073709551616" is too large (at most 18446744073709551615)`},
		{"count", []string{"--count=x"}, `--count: "x" is not a whole number`},
		{"float32", []string{"--float32", "x"}, `--float32: "x" is not a number`},
		{"float64 slice", []string{"--float64s", "0.5,x"}, `--float64s: "0.5,x" is not a comma-separated list of numbers such as 0.5,1,2.5`},
		{"int64 slice", []string{"--int64s", "1.5"}, `--int64s: "1.5" is not a comma-separated list of whole numbers such as 8,64,256`},
		{"bool slice", []string{"--bools", "yes"}, `--bools: "yes" is not a comma-separated list of true or false such as true,false,true`},
		{"duration slice", []string{"--durations", "1s,2"}, `--durations: "1s,2" is not a comma-separated list of durations such as 500ms,60s,2m`},
		{"string slice", []string{"--strings", `a"b`}, `--strings: "a\"b" is not a comma-separated list such as a,b,c (quote an item that holds a comma as in a CSV line: "a,b",c)`},
		{"own type", []string{"--mode", "fuzzy"}, `--mode: "fuzzy" is not a mode; use fast or slow`},
		{"own type naming the flag", []string{"--format", "xml"}, `--format "xml" is not a format; use text or json`},
		{"unknown flag", []string{"--bogus"}, "unknown flag: --bogus"},
		{"no value", []string{"--int8"}, "flag needs an argument: --int8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.Int8("int8", 0, "")
			fs.Uint("uint", 0, "")
			fs.Uint64("uint64", 0, "")
			fs.Count("count", "")
			fs.Float32("float32", 0, "")
			fs.Float64Slice("float64s", nil, "")
			fs.Int64Slice("int64s", nil, "")
			fs.BoolSlice("bools", nil, "")
			fs.DurationSlice("durations", nil, "")
			fs.StringSlice("strings", nil, "")
			fs.Var(ownValue{"mode", `%q is not a mode; use fast or slow`}, "mode", "")
			fs.Var(ownValue{"format", `--format %q is not a format; use text or json`}, "format", "")
			fs.SetOutput(io.Discard) // not the usage pflag prints on an error
			perr := fs.Parse(tt.args)
			if perr == nil {
				t.Fatalf("%v parsed", tt.args)
			}
			err := flagParseError(perr)
			var uerr *usageError
			if !errors.As(err, &uerr) || err.Error() != tt.want {
				t.Errorf("flagParseError(%q) = %q (a usage error: %t); want the usage error %q", perr, err, uerr != nil, tt.want)
			}
		})
	}
}

// ownValue is a flag value of a type of its own, whose Set refuses every
// value with its message, a format with a %q for the value.
type ownValue struct{ typ, msg string }

func (v ownValue) String() string { return "" }

func (v ownValue) Type() string { return v.typ }

func (v ownValue) Set(s string) error { return fmt.Errorf(v.msg, s) }
