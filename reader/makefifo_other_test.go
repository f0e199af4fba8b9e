//go:build !unix

package reader

import "testing"

// makeFIFO skips the test: there are no named pipes here.
func makeFIFO(t *testing.T, path string) {
	t.Helper()
	t.Skip("named pipes need unix")
}
