// Package testenv holds helpers that tests share about the environment they
// run in, and Golden, their one way to compare output with a golden file.
// It is for tests only: production code must not depend on it, not least
// because importing it registers the -update flag (see Golden).
package testenv

import (
	"os"
	"strings"
)

// InCI reports whether the tests run in continuous integration, as the CI
// environment variable says. CI counts as set when it holds anything but
// "", "0" or "false" (in any case, surrounding spaces ignored): CI=true,
// CI=1 and CI=yes mean CI, while an unset CI, CI=, CI=0 and CI=false do
// not.
//
// Tests that need files kept outside the repository (the shared folder
// beside it) skip when those are missing, but fail under CI, which always
// has them, so that a skip cannot hide a check there.
func InCI() bool { return isCI(os.Getenv("CI")) }

// isCI is InCI's rule for a value of CI.
func isCI(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}
