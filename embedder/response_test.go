package embedder

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDecode checks what decode makes of answers for two inputs of two
// dimensions: the vectors in input order, or an error that names the
// field that is wrong.
func TestDecode(t *testing.T) {
	const key = "sk-abcdefghijklmnop"
	tests := []struct {
		name, body string
		want       string // the vectors as %v, or a part of the error
		wantErr    error
	}{
		{"by index", `{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, "[[3 4] [1 2]]", nil},
		{"no index: by position", `{"data":[{"embedding":[1,2]},{"index":null,"embedding":[3,4]}]}`, "[[1 2] [3 4]]", nil},
		{"an error field beside data", `{"data":[{"embedding":[1,2]},{"embedding":[3,4]}],"error":false}`, "[[1 2] [3 4]]", nil},
		{"no data", `{}`, `no "data" list of embeddings in the body`, ErrBadResponse},
		{"null body", `null`, `no "data" list`, ErrBadResponse},
		{"an error with status 200", `{"error":{"message":"The server is overloaded (key ` + key + `)","type":"server_error"}}`,
			`the body holds an error instead: The server is overloaded (key [redacted])`, ErrBadResponse},
		{"too few", `{"data":[{"index":0,"embedding":[1,2]}]}`, `"data" holds 1 embeddings for 2 inputs`, ErrBadResponse},
		{"data is an object", `{"data":{"index":0,"embedding":[1,2]}}`, `"data" is a JSON object where a list was expected`, ErrBadResponse},
		{"not JSON", `<html>`, `the body is not JSON`, ErrBadResponse},
		{"an array", `[]`, `the body is a JSON array where an object was expected`, ErrBadResponse},
		{"null item", `{"data":[{"embedding":[1,2]},null]}`, `data[1] is null`, ErrBadResponse},
		{"index out of range", `{"data":[{"index":2,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, `data[0].index is 2, out of range for 2 inputs`, ErrBadResponse},
		{"index twice", `{"data":[{"index":1,"embedding":[1,2]},{"index":1,"embedding":[3,4]}]}`, `data[1].index is 1, which an earlier item has too`, ErrBadResponse},
		{"no index where another item is", `{"data":[{"index":1,"embedding":[1,2]},{"embedding":[3,4]}]}`, `data[1] has no index, and an earlier item has its position, 1`, ErrBadResponse},
		{"fractional index", `{"data":[{"index":0.5,"embedding":[1,2]},{"embedding":[3,4]}]}`, `"data.index" is a JSON number 0.5 where an integer was expected`, ErrBadResponse},
		{"no embedding", `{"data":[{"index":0},{"index":1,"embedding":[3,4]}]}`, `data[0] has no embedding`, ErrBadResponse},
		{"null embedding", `{"data":[{"embedding":null},{"embedding":[3,4]}]}`, `data[0] has no embedding`, ErrBadResponse},
		{"null number", `{"data":[{"embedding":[1,2]},{"embedding":[3,null]}]}`, `data[1].embedding[1] is null, not a number`, ErrBadResponse},
		{"base64", `{"data":[{"embedding":"AAAAPwAAgL8="},{"embedding":[3,4]}]}`, `"data.embedding" is a JSON string where a list was expected`, ErrBadResponse},
		{"beyond float32", `{"data":[{"embedding":[1e39,2]},{"embedding":[3,4]}]}`, `"data.embedding" is a JSON number 1e39 where a number within float32's range was expected`, ErrBadResponse},
		{"other dimensions", `{"data":[{"embedding":[1,2,3]},{"embedding":[3,4,5]}]}`, `3-dimensional vectors but embedder.dimensions is 2; set embedder.dimensions to 3 (with the Cloud AI Search sink, sink.cloudsearch.embeddingDimensionality too)`, ErrDimensions},
		{"one vector short", `{"data":[{"embedding":[1]},{"embedding":[3,4]}]}`, `data[0].embedding has 1 numbers but data[1].embedding has 2: the vectors of one answer differ in length`, ErrBadResponse},
		{"one vector long", `{"data":[{"embedding":[1,2]},{"embedding":[3,4,5]}]}`, `data[1].embedding has 3 numbers but data[0].embedding has 2`, ErrBadResponse},
	}
	c := fuzzClient(ProviderOpenAI, 2)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.decode(strings.NewReader(tt.body), 2, []string{key})
			if tt.wantErr == nil {
				if err != nil || fmt.Sprint(got) != tt.want {
					t.Fatalf("decode = %v, %v; want %s", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !errors.Is(err, ErrEmbed) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decode = %v, %v; want an error wrapping %v with %q", got, err, tt.wantErr, tt.want)
			}
		})
	}
}
