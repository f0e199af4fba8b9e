package state

import (
	"os"
	"testing"
)

// lockFolderEnv carries the lock folder of the tests to the helper processes
// they start, so that both take the locks of search-service scopes in the
// same place.
const lockFolderEnv = "SLUICE_STATE_TEST_LOCKS"

// TestMain moves the lock folder of search-service scopes from the user's
// cache folder into a temporary one.
func TestMain(m *testing.M) {
	dir := os.Getenv(lockFolderEnv)
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "sluice-state-locks-"); err != nil {
			panic(err)
		}
		os.Setenv(lockFolderEnv, dir)
	}
	lockFolder = func() (string, error) { return dir, nil }
	code := m.Run()
	if os.Getenv(lockHelperEnv) == "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
