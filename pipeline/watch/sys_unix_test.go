//go:build unix

package watch

import (
	"syscall"
	"testing"
	"time"
)

// mkfifo creates a named pipe at path.
func mkfifo(t testing.TB, path string) error {
	return syscall.Mkfifo(path, 0o644)
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
