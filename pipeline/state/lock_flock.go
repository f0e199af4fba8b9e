//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package state

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on f without waiting; false if
// another open file holds it. The lock belongs to f's open file
// description, so a second open of the lock file in the same process
// conflicts too, and the kernel releases it when the process exits, even
// on SIGKILL. The lock file is a separate file because SQLite's own POSIX
// record locks on the database file would be dropped by closing any other
// descriptor of it in this process.
func tryLock(f *os.File) (bool, error) {
	return flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
}

// unlock releases the lock taken by tryLock.
func unlock(f *os.File) error {
	_, err := flock(f, syscall.LOCK_UN)
	return err
}

func flock(f *os.File, how int) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	})
	switch {
	case err != nil:
		return false, err
	case errors.Is(ferr, syscall.EWOULDBLOCK):
		return false, nil
	case ferr != nil:
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: ferr}
	}
	return true, nil
}
