//go:build !unix

package watch

import (
	"testing"
	"time"
)

// mkfifo skips the test: there are no named pipes here.
func mkfifo(t testing.TB, path string) error {
	t.Helper()
	t.Skip("named pipes need unix")
	return nil
}

// cpuTime skips the benchmark: it reads the CPU time with getrusage(2).
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	b.Skip("measuring the process's CPU time needs getrusage (unix)")
	return 0
}
