//go:build !unix

package main

import "testing"

// sendSIGTERM skips the test: a process cannot send itself a real SIGTERM
// here.
func sendSIGTERM(t *testing.T) {
	t.Helper()
	t.Skip("sending a real SIGTERM needs unix")
}
