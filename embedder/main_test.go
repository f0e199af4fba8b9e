package embedder_test

import (
	"flag"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func itoa(n int) string { return strconv.Itoa(n) }
