package testenv

import (
	"strings"

	"github.com/sluice-dev/sluice/internal/credential"
)

// SecretRun returns the first run of credential.MinRun characters of
// secret that s shows, or "": a test's check that no part of a key or
// token long enough to be redacted reached an error, a log or a report.
func SecretRun(s, secret string) string {
	for i := 0; i+credential.MinRun <= len(secret); i++ {
		if part := secret[i : i+credential.MinRun]; strings.Contains(s, part) {
			return part
		}
	}
	return ""
}
