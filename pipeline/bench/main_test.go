package bench_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as an Exec child (see exec_test.go).
const helperEnv = "SLUICE_BENCH_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperChild(mode))
	}
	goleak.VerifyTestMain(m)
}
