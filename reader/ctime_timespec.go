//go:build darwin || freebsd || netbsd

package reader

import (
	"syscall"
	"time"
)

// statCtime returns the inode change time of st.
func statCtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
}
