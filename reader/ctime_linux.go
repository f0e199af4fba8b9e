//go:build linux

package reader

import (
	"io/fs"
	"syscall"
	"time"
)

// creationTime returns the inode change time, which is what LlamaIndex
// records as creation_date on Linux (st_ctime); it falls back to ModTime.
func creationTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}
