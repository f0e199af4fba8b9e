//go:build windows

package state

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is where the locked byte range starts: past anything the lock
// file holds, because Windows locks are mandatory and the holder's record
// at the start of the file must stay readable by other writers.
const lockOffset = 1 << 40

// tryLock takes an exclusive LockFileEx lock on f without waiting; false if
// another handle holds it. Windows releases the lock when the handle is
// closed, which it does when the process exits, however it exits.
func tryLock(f *os.File) (bool, error) {
	ol := overlapped()
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	case err != nil:
		return false, &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
	return true, nil
}

// unlock releases the lock taken by tryLock.
func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, overlapped())
}

func overlapped() *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
}
