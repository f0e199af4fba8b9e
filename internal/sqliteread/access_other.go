//go:build !unix

package sqliteread

import "os"

// fileReadOnly reports whether the file at path is marked read-only (on
// Windows, its read-only attribute); access denied by other means is not
// seen, and neither is whether the process may read it.
func fileReadOnly(path string) bool { return fileUnwritable(path) }

// fileUnwritable reports whether the file at path exists and is marked
// read-only.
func fileUnwritable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o200 == 0
}
