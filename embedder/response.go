package embedder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
)

// embedResponse is the body of a successful embeddings answer (OpenAI and
// Azure OpenAI). Its pointers tell a missing or null member from a zero one.
type embedResponse struct {
	Data []*embedItem `json:"data"`
	// Error is what servers that answer 200 with an error object (some
	// OpenAI-compatible proxies) send instead of data. It is read only
	// then, and leniently: it cannot make a body with data fail.
	Error json.RawMessage `json:"error"`
}

// embedItem is one vector of an embeddings answer.
type embedItem struct {
	Index     *int      `json:"index"` // nil when missing or null
	Embedding []float32 `json:"embedding"`
}

// decode reads the vectors of a successful answer for n inputs: the items
// of its data list, each mapped back to its input by its index (by its
// position in the list when it has none, as LlamaIndex.TS reads them). A
// body of another shape is a *ResponseError naming the field that is wrong
// ("data", data[i].index, data[i].embedding); a provider's error message
// it quotes has secrets redacted, and so is an answer whose vectors differ
// in length. Vectors all of one length that is not embedder.dimensions
// are a *DimensionError.
func (c *Client) decode(r io.Reader, n int, secrets []string) ([][]float32, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return &ResponseError{Provider: c.provider, Reason: fmt.Sprintf(format, args...)}
	}
	var resp embedResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, bad("%s", jsonProblem(err))
	}
	if resp.Data == nil {
		var body errorBody
		if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
			return nil, bad(`no "data" list of embeddings; the body holds an error instead: %s`,
				truncate(redact(body.Error.Message, secrets...), maxRawMessage))
		}
		return nil, bad(`no "data" list of embeddings in the body`)
	}
	if len(resp.Data) != n {
		return nil, bad(`"data" holds %d embeddings for %d inputs`, len(resp.Data), n)
	}
	var nulls map[int]int // item → its first null number
	if bytes.Contains(raw, []byte("null")) {
		nulls = nullNumbers(raw)
	}
	out := make([][]float32, n)
	for i, d := range resp.Data {
		if d == nil {
			return nil, bad("data[%d] is null, not an embedding object", i)
		}
		k := i
		if d.Index != nil {
			k = *d.Index
		}
		j, hasNull := nulls[i]
		switch {
		case k < 0 || k >= n:
			return nil, bad("data[%d].index is %d, out of range for %d inputs", i, k, n)
		case out[k] != nil && d.Index == nil:
			return nil, bad("data[%d] has no index, and an earlier item has its position, %d", i, k)
		case out[k] != nil:
			return nil, bad("data[%d].index is %d, which an earlier item has too", i, k)
		case d.Embedding == nil:
			return nil, bad("data[%d] has no embedding (a list of numbers)", i)
		case hasNull:
			// encoding/json would read it as 0; JavaScript's JSON.stringify
			// writes NaN and infinities as null.
			return nil, bad("data[%d].embedding[%d] is null, not a number", i, j)
		case len(d.Embedding) != c.cfg.Dimensions:
			// Vectors of one answer that differ in length are a damaged
			// answer, retried; only a length they all share tells the
			// model's output size.
			if o := otherLength(resp.Data, len(d.Embedding)); o >= 0 {
				return nil, bad("data[%d].embedding has %d numbers but data[%d].embedding has %d: the vectors of one answer differ in length",
					i, len(d.Embedding), o, len(resp.Data[o].Embedding))
			}
			return nil, &DimensionError{Want: c.cfg.Dimensions, Got: len(d.Embedding)}
		}
		out[k] = d.Embedding
	}
	return out, nil
}

// otherLength returns the position of the first item of data whose
// embedding is not n numbers long, or -1.
func otherLength(data []*embedItem, n int) int {
	for i, d := range data {
		if d != nil && d.Embedding != nil && len(d.Embedding) != n {
			return i
		}
	}
	return -1
}

// nullNumbers returns, for each item of the data list of raw whose
// embedding holds a null, the position of the first null.
func nullNumbers(raw []byte) map[int]int {
	var probe struct {
		Data []*struct {
			Embedding []*float32 `json:"embedding"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return nil
	}
	out := map[int]int{}
	for i, d := range probe.Data {
		if d == nil {
			continue
		}
		for j, x := range d.Embedding {
			if x == nil {
				out[i] = j
				break
			}
		}
	}
	return out
}

// jsonProblem says why encoding/json could not read a body as an
// embeddings answer, naming the field at fault for a value of the wrong
// type, in JSON's words rather than Go's.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := "the body"
		if te.Field != "" {
			where = strconv.Quote(te.Field)
		}
		return fmt.Sprintf("%s is a JSON %s where %s was expected (at byte %d)", where, te.Value, jsonKind(te.Type), te.Offset)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("the body is not JSON: %v (at byte %d)", se, se.Offset)
	}
	return "the body is not JSON: " + err.Error()
}

// jsonKind names what JSON value encoding/json decodes into t.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "an object"
	case reflect.Int:
		return "an integer"
	case reflect.Float32:
		return "a number within float32's range"
	}
	return "a value of Go type " + t.String()
}
