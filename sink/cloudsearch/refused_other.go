//go:build !windows

package cloudsearch

import (
	"errors"
	"syscall"
)

// refused reports whether err is a refused connection (ECONNREFUSED).
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
