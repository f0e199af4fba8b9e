//go:build unix

package sqliteread

import (
	"errors"
	"syscall"
)

// fileReadOnly reports whether this process may read the file at path but
// not write it, as access(2) tells: its permissions, or a read-only file
// system.
func fileReadOnly(path string) bool {
	const rOK = 0x4 // R_OK, the same on every unix
	return syscall.Access(path, rOK) == nil && fileUnwritable(path)
}

// fileUnwritable reports whether the file at path exists and this process
// may not write it.
func fileUnwritable(path string) bool {
	const wOK = 0x2 // W_OK, the same on every unix
	err := syscall.Access(path, wOK)
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EROFS)
}
