package cloudsearch

import (
	"errors"
	"syscall"
)

// wsaeconnrefused is WSAECONNREFUSED, Windows' refused connection, which
// package syscall does not name.
const wsaeconnrefused = syscall.Errno(10061)

// refused reports whether err is a refused connection: on Windows the
// dial fails with WSAECONNREFUSED, which syscall.ECONNREFUSED does not
// match.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, wsaeconnrefused)
}
