//go:build !unix

package reader

import "os"

// openNonblock is zero where opening a named pipe does not block.
const openNonblock = 0

// setBlocking has nothing to undo where Open opens files blocking.
func setBlocking(*os.File) error { return nil }
