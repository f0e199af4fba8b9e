//go:build linux || darwin || freebsd || netbsd || openbsd

package reader

import (
	"io/fs"
	"strconv"
	"syscall"
	"time"
)

// creationTime returns the inode change time, which is what LlamaIndex
// records as creation_date on Unix systems (st_ctime); it falls back to
// ModTime.
func creationTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return statCtime(st)
	}
	return fi.ModTime()
}

// changeStamp returns the file's device, inode and inode change time: any
// replacement of the file (a rename over it, a copy that keeps its
// modification time) or write to it changes one of them.
func changeStamp(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10) + ":" +
		strconv.FormatInt(statCtime(st).UnixNano(), 10)
}
