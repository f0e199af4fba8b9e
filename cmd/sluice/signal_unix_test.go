//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
)

// sendSIGTERM sends the test process a real SIGTERM.
func sendSIGTERM(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}
