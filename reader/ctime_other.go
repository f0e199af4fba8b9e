//go:build !linux

package reader

import (
	"io/fs"
	"time"
)

// creationTime returns ModTime where the platform's creation time is not
// read.
func creationTime(fi fs.FileInfo) time.Time { return fi.ModTime() }
