package reader

import (
	"errors"
	"strconv"
)

// Sentinel errors. A per-file problem is reported as a *FileError that wraps
// one of them, so callers classify failures with errors.Is.
var (
	// ErrBinary marks a file that contains a NUL byte.
	ErrBinary = errors.New("reader: binary file")
	// ErrInvalidUTF8 marks a file that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("reader: invalid UTF-8")
	// ErrEmpty marks a file with no content (a lone byte-order mark counts as none).
	ErrEmpty = errors.New("reader: empty file")
	// ErrUnreadable marks a file or directory that cannot be read: permission
	// denied, an I/O error, or an entry that is not a regular file.
	ErrUnreadable = errors.New("reader: unreadable")
	// ErrVanished marks a file removed between the walk and the read, or
	// removed or truncated while it was being read.
	ErrVanished = errors.New("reader: file vanished")
	// ErrOutsideRoot marks a symbolic link whose target lies outside the root.
	ErrOutsideRoot = errors.New("reader: symlink leaves the root")
	// ErrSymlinkLoop marks a symbolic link that leads back to a directory
	// already being walked, or a chain of links that never ends.
	ErrSymlinkLoop = errors.New("reader: symlink loop")
	// ErrBrokenSymlink marks a symbolic link whose target does not exist.
	ErrBrokenSymlink = errors.New("reader: broken symlink")
	// ErrConfig marks an invalid source setting; see ConfigError.
	ErrConfig = errors.New("reader: invalid configuration")
)

// FileError reports why one file or directory could not be read. It never
// stops a walk on its own: the caller records it and goes on.
type FileError struct {
	// Path is the root-relative id of the file or folder.
	Path string
	// Err is one of the package's sentinel errors (ErrBinary, ErrVanished, ...).
	Err error
	// Offset is the byte offset in the file of the offending byte, for
	// ErrBinary and ErrInvalidUTF8; it is zero otherwise.
	Offset int64
	// Detail adds facts to the reason, such as a symlink's target or the
	// size a file shrank to; it may be empty.
	Detail string
	// Cause is the underlying operating-system error, if any.
	Cause error
}

// Error names the file and the reason, and says how to fix it where that helps.
func (e *FileError) Error() string {
	s := "reader: " + e.Path + ": " + e.reason()
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	if e.Cause != nil && !errors.Is(e.Err, ErrVanished) {
		s += ": " + e.Cause.Error()
	}
	if h := e.hint(); h != "" {
		s += "; " + h
	}
	return s
}

func (e *FileError) reason() string {
	off := strconv.FormatInt(e.Offset, 10)
	switch {
	case errors.Is(e.Err, ErrBinary):
		return "binary file: NUL byte at offset " + off
	case errors.Is(e.Err, ErrInvalidUTF8):
		return "not valid UTF-8: bad byte at offset " + off
	case errors.Is(e.Err, ErrEmpty):
		return "empty file: nothing to index"
	case errors.Is(e.Err, ErrUnreadable):
		return "cannot read"
	case errors.Is(e.Err, ErrVanished):
		return "file vanished while being read"
	case errors.Is(e.Err, ErrOutsideRoot):
		return "symlink points outside source.dir, not followed"
	case errors.Is(e.Err, ErrSymlinkLoop):
		return "symlink loop, not followed"
	case errors.Is(e.Err, ErrBrokenSymlink):
		return "broken symlink: its target does not exist"
	case e.Err != nil:
		return e.Err.Error()
	}
	return "failed"
}

func (e *FileError) hint() string {
	switch {
	case errors.Is(e.Err, ErrBinary):
		return "exclude it with source.exclude"
	case errors.Is(e.Err, ErrInvalidUTF8):
		return "re-save it as UTF-8 or exclude it with source.exclude"
	case errors.Is(e.Err, ErrUnreadable):
		return "check its permissions or exclude it with source.exclude"
	case errors.Is(e.Err, ErrVanished):
		return "it will be picked up by the next run"
	case errors.Is(e.Err, ErrOutsideRoot):
		return "move the target inside source.dir or exclude the link with source.exclude"
	case errors.Is(e.Err, ErrSymlinkLoop), errors.Is(e.Err, ErrBrokenSymlink):
		return "fix or remove the link, or exclude it with source.exclude"
	}
	return ""
}

// Unwrap returns the sentinel error and, if set, the underlying cause.
func (e *FileError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// ConfigError reports an invalid source setting, naming it as in the
// configuration file (for example "source.include[1]").
type ConfigError struct {
	// Setting is the configuration key, such as "source.dir".
	Setting string
	// Reason says what is wrong and how to fix it.
	Reason string
	// Cause is the underlying error, if any.
	Cause error
}

// Error names the setting and the problem.
func (e *ConfigError) Error() string {
	s := "reader: " + e.Setting + ": " + e.Reason
	if e.Cause != nil {
		s += " (" + e.Cause.Error() + ")"
	}
	return s
}

// Unwrap returns ErrConfig and, if set, the underlying cause.
func (e *ConfigError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.Cause}
}
