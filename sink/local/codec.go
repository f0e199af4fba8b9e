package local

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// norm returns the Euclidean length of v.
func norm(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// cosine returns the cosine similarity of q (whose length is qnorm) and the
// encoded vector b, reading b in place. ok is false when b has another
// length. A zero vector has similarity 0 with everything.
func cosine(q []float32, qnorm float64, b []byte) (sim float64, ok bool) {
	if len(b) != 4*len(q) {
		return 0, false
	}
	var dot, nn float64
	for i, x := range q {
		y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		dot += float64(x) * y
		nn += y * y
	}
	if qnorm == 0 || nn == 0 {
		return 0, true
	}
	return dot / (qnorm * math.Sqrt(nn)), true
}

// encodeMetadata checks that every value is a scalar or a flat list of
// scalars and returns the metadata as a JSON object.
func encodeMetadata(md map[string]any) (string, error) {
	if len(md) == 0 {
		return "{}", nil
	}
	for _, k := range sortedKeys(md) {
		if err := checkValue(md[k], true); err != nil {
			return "", fmt.Errorf("metadata key %q: %w", k, err)
		}
	}
	b, err := json.Marshal(md)
	if err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	return string(b), nil
}

func sortedKeys(md map[string]any) []string {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkValue accepts strings, numbers, bools and nil, and, when list is
// true, lists of strings, numbers or bools.
func checkValue(v any, list bool) error {
	switch x := v.(type) {
	case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return nil
	case nil:
		if list {
			return nil
		}
		return fmt.Errorf("a list may not hold null")
	case float32:
		return checkFloat(float64(x))
	case float64:
		return checkFloat(x)
	case []string:
		if list {
			return nil
		}
	case []int:
		if list {
			return nil
		}
	case []float64:
		if list {
			for _, f := range x {
				if err := checkFloat(f); err != nil {
					return err
				}
			}
			return nil
		}
	case []any:
		if list {
			for _, e := range x {
				if err := checkValue(e, false); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if list {
		return fmt.Errorf("value of type %T is not supported; use a string, number, bool or a list of them", v)
	}
	return fmt.Errorf("a list may hold only strings, numbers and bools, not %T", v)
}

func checkFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("number %v cannot be stored; use a finite number", f)
	}
	return nil
}

// decodeMetadata parses stored metadata: numbers become float64, lists of
// strings []string, lists of numbers []float64, other lists []any.
func decodeMetadata(s string) (map[string]any, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(s), &md); err != nil {
		return nil, fmt.Errorf("stored metadata is not a JSON object: %w", err)
	}
	for k, v := range md {
		if l, ok := v.([]any); ok {
			md[k] = typedList(l)
		}
	}
	return md, nil
}

func typedList(l []any) any {
	if len(l) == 0 {
		return []string{}
	}
	switch l[0].(type) {
	case string:
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return l
			}
			out[i] = s
		}
		return out
	case float64:
		out := make([]float64, len(l))
		for i, e := range l {
			f, ok := e.(float64)
			if !ok {
				return l
			}
			out[i] = f
		}
		return out
	}
	return l
}
