//go:build unix

package reader

import "testing"

// makeFIFO creates a named pipe at path.
func makeFIFO(t *testing.T, path string) {
	t.Helper()
	if err := mkfifo(path); err != nil {
		t.Fatal(err)
	}
}
