package reader

import (
	"io/fs"
	"syscall"
	"time"
)

// creationTime returns the file's creation time, which is what LlamaIndex
// records as creation_date on Windows (st_ctime); it falls back to ModTime.
func creationTime(fi fs.FileInfo) time.Time {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return time.Unix(0, d.CreationTime.Nanoseconds())
	}
	return fi.ModTime()
}

// changeStamp returns "": Windows keeps no inode change time, so size and
// modification time alone tell a file unchanged.
func changeStamp(fs.FileInfo) string { return "" }
