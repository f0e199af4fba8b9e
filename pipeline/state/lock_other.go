//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package state

import "os"

// tryLock takes no lock on systems without flock(2) or LockFileEx (none of
// them runs the SQLite driver today): there, nothing keeps two writers of
// one index apart.
func tryLock(*os.File) (bool, error) { return true, nil }

// unlock releases nothing.
func unlock(*os.File) error { return nil }
