//go:build !(linux || darwin || freebsd || netbsd || openbsd || windows)

package reader

import (
	"io/fs"
	"time"
)

// creationTime returns ModTime where the platform's creation time is not
// read.
func creationTime(fi fs.FileInfo) time.Time { return fi.ModTime() }

// changeStamp returns "" where the platform's inode and change time are
// not read: size and modification time alone then tell a file unchanged.
func changeStamp(fs.FileInfo) string { return "" }
