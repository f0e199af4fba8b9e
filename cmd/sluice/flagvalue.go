package main

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// flagParseError returns err, an error of parsing the command line's
// flags, as a usage error. A value of the wrong type for its flag, such as
// --top-k abc, is said in the user's words, by the flag's type: the flag,
// the value and what the flag takes (--top-k: "abc" is not a whole
// number), instead of strconv's or time's error. The error of a flag of a
// type of its own, which says what is wrong, is kept.
func flagParseError(err error) error {
	var verr *pflag.InvalidValueError
	if !errors.As(err, &verr) {
		return &usageError{err}
	}
	f, value := verr.GetFlag(), verr.GetValue()
	name, typ, cause := "--"+f.Name, f.Value.Type(), verr.Unwrap()
	if errors.Is(cause, strconv.ErrRange) {
		if t, ok := wholeNumberFlagTypes[typ]; ok {
			lo, hi := rangeOf(t)
			if strings.HasPrefix(strings.TrimSpace(value), "-") {
				return usagef("%s: %q is too small (at least %s)", name, value, lo)
			}
			return usagef("%s: %q is too large (at most %s)", name, value, hi)
		}
		if typ == "float64" {
			return usagef("%s: %q is %s", name, value, float64RangeWords)
		}
	}
	if words := flagTypeWords(typ); words != "" {
		return usagef("%s: %q is not %s", name, value, words)
	}
	if strings.Contains(cause.Error(), name) {
		return &usageError{cause} // its own message, which names the flag
	}
	return usagef("%s: %v", name, cause)
}

// wholeNumberFlagTypes maps pflag's whole-number types, as Value.Type
// names them, to their Go types, whose range a value must be in.
var wholeNumberFlagTypes = map[string]reflect.Type{
	"int":    reflect.TypeFor[int](),
	"int8":   reflect.TypeFor[int8](),
	"int16":  reflect.TypeFor[int16](),
	"int32":  reflect.TypeFor[int32](),
	"int64":  reflect.TypeFor[int64](),
	"uint":   reflect.TypeFor[uint](),
	"uint8":  reflect.TypeFor[uint8](),
	"uint16": reflect.TypeFor[uint16](),
	"uint32": reflect.TypeFor[uint32](),
	"uint64": reflect.TypeFor[uint64](),
	"count":  reflect.TypeFor[int](),
}

// flagTypeWords describes what a flag of pflag type typ (its Value.Type,
// such as "int", "duration" or "intSlice") takes, in the user's words and
// with an example for a list; it returns "" for a type it does not know.
func flagTypeWords(typ string) string {
	if _, ok := wholeNumberFlagTypes[typ]; ok {
		return wholeNumberWords
	}
	switch typ {
	case "float32", "float64":
		return numberWords
	case "bool":
		return boolWords
	case "duration":
		return durationWords
	case "intSlice", "int32Slice", "int64Slice", "uintSlice":
		return "a comma-separated list of whole numbers such as 8,64,256"
	case "float32Slice", "float64Slice":
		return "a comma-separated list of numbers such as 0.5,1,2.5"
	case "boolSlice":
		return "a comma-separated list of " + boolWords + " such as true,false,true"
	case "durationSlice":
		return "a comma-separated list of durations such as 500ms,60s,2m"
	case "stringSlice":
		return `a comma-separated list such as a,b,c (quote an item that holds a comma as in a CSV line: "a,b",c)`
	}
	return ""
}
