package embedder_test

import (
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func itoa(n int) string { return strconv.Itoa(n) }
