package cloudsearch

import (
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// golden compares got with testdata/name, or rewrites the file with
// -update: testenv.Golden for the files of this package's tests.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), got)
}
