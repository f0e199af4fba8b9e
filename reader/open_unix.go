//go:build unix

package reader

import (
	"os"
	"syscall"
)

// openNonblock makes Open's open return at once on a named pipe without a
// writer, instead of blocking until one appears.
const openNonblock = syscall.O_NONBLOCK

// setBlocking clears the O_NONBLOCK that Open opened a regular file with.
// Reads of regular files ignore it on Linux, but not necessarily everywhere.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
