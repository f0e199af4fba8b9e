package reader

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors. A per-file problem is reported as a *FileError that wraps
// one of them, so callers classify failures with errors.Is.
var (
	// ErrBinary marks a file that contains a NUL byte.
	ErrBinary = errors.New("reader: binary file")
	// ErrInvalidUTF8 marks a file that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("reader: invalid UTF-8")
	// ErrUTF16 marks a file that starts with a UTF-16 byte-order mark (FF FE
	// or FE FF), or without one reads as UTF-16 (a NUL in every other byte,
	// printable ASCII between): text, but not in UTF-8. It is not
	// transcoded.
	ErrUTF16 = errors.New("reader: UTF-16 text")
	// ErrUTF32 marks a file that starts with a UTF-32 byte-order mark
	// (FF FE 00 00 or 00 00 FE FF). It is not transcoded.
	ErrUTF32 = errors.New("reader: UTF-32 text")
	// ErrEmpty marks a file with nothing to index: no bytes, or only white
	// space (a lone byte-order mark counts as none). White space is what
	// the splitter trims (JavaScript's \s), so such a file would give no
	// chunk.
	ErrEmpty = errors.New("reader: empty file")
	// ErrUnreadable marks a file or directory that cannot be read: permission
	// denied, an I/O error, a path too long for the system, or an entry that
	// is not a regular file (see ErrNotRegular).
	ErrUnreadable = errors.New("reader: unreadable")
	// ErrNotRegular marks an entry that is not a regular file: a named pipe,
	// a socket, a device, or a directory where a file was expected. It is a
	// kind of ErrUnreadable: errors.Is(err, ErrUnreadable) holds for it too.
	ErrNotRegular error = &refinedError{msg: "reader: not a regular file", kind: ErrUnreadable}
	// ErrVanished marks a file removed between the walk and the read, or
	// removed or truncated while it was being read.
	ErrVanished = errors.New("reader: file vanished")
	// ErrShrank marks a file truncated while it was being read: the text
	// read is not the file's. It is a kind of ErrVanished, as the next
	// read of the file decides what it holds.
	ErrShrank error = &refinedError{msg: "reader: file shrank while being read", kind: ErrVanished}
	// ErrOutsideRoot marks a symbolic link whose target lies outside the root.
	ErrOutsideRoot = errors.New("reader: symlink leaves the root")
	// ErrSymlinkLoop marks a symbolic link that leads back to a directory
	// already being walked, or a chain of links that never ends.
	ErrSymlinkLoop = errors.New("reader: symlink loop")
	// ErrBrokenSymlink marks a symbolic link whose target does not exist.
	ErrBrokenSymlink = errors.New("reader: broken symlink")
	// ErrInvalidName marks a file whose path (its name or a folder's) is not
	// valid UTF-8, such as a Latin-1 name on Linux. Document ids, metadata
	// and Cloud AI Search keep text in UTF-8, where two such names could
	// become one, so the file is refused rather than renamed.
	ErrInvalidName = errors.New("reader: path not valid UTF-8")
	// ErrConfig marks an invalid source setting; see ConfigError.
	ErrConfig = errors.New("reader: invalid configuration")
)

// refinedError is a sentinel that is a more precise kind of another one.
type refinedError struct {
	msg  string
	kind error
}

func (e *refinedError) Error() string { return e.msg }
func (e *refinedError) Unwrap() error { return e.kind }

// FileError reports why one file or directory could not be read. It never
// stops a walk on its own: the caller records it and goes on.
type FileError struct {
	// Path is the root-relative id of the file or folder.
	Path string
	// Err is one of the package's sentinel errors (ErrBinary, ErrVanished, ...).
	Err error
	// Offset is the byte offset in the file of the offending byte, for
	// ErrBinary and ErrInvalidUTF8, or in Path, for ErrInvalidName; it is
	// zero otherwise.
	Offset int64
	// Detail adds facts to the reason, such as a symlink's target or the
	// size a file shrank to; it may be empty.
	Detail string
	// Cause is the underlying operating-system error, if any.
	Cause error
}

// Error names the file and the reason, and says how to fix it where that
// helps; the remedy may name a source setting (source.exclude).
func (e *FileError) Error() string {
	s := "reader: " + Printable(e.Path) + ": " + e.Problem()
	if h := e.hint(); h != "" {
		s += "; " + h
	}
	return s
}

// Printable returns s, a document id or a message naming one, as it may be
// printed on a terminal or in a line of text output: as it is, or, if it
// holds a control character (a line break, an escape sequence), a
// bidirectional formatting character (such as U+202E, which shows the rest
// of the line reversed) or is not valid UTF-8, quoted with Go's escapes
// ("new\nline.md", "\u202eevil.md"), so that a file name can neither break
// a line of output in two, nor recolour or move the terminal's cursor, nor
// show as another name. JSON output needs none of this: it escapes them.
func Printable(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, Unprintable) {
		return strconv.Quote(s)
	}
	return s
}

// Unprintable reports whether r must not reach a terminal as it is: a
// control character (C0, DEL or C1) or a bidirectional formatting
// character (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069),
// which reorders the text shown after it.
func Unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// Problem says what is wrong with the file, without naming it and without
// a remedy: the reason, the detail and the underlying cause, such as
// "binary file: NUL byte at offset 3" or "not a regular file (a named pipe)".
// Together with Fix it lets a caller that does not read a configured source
// folder (such as `sluice split`) word its own message: Error's remedies
// name source settings.
func (e *FileError) Problem() string {
	s := e.reason()
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	if e.Cause != nil && !errors.Is(e.Err, ErrVanished) {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Fix says how to fix the file itself, without naming any setting, such as
// "re-save it as UTF-8"; it is empty when the only remedy is to leave the
// file out (a binary file, a named pipe) or to try again later.
func (e *FileError) Fix() string {
	switch {
	case errors.Is(e.Err, ErrInvalidUTF8), errors.Is(e.Err, ErrUTF16), errors.Is(e.Err, ErrUTF32):
		return "re-save it as UTF-8"
	case errors.Is(e.Err, ErrEmpty):
		return "write text into it"
	case errors.Is(e.Err, ErrInvalidName):
		return "rename it in UTF-8 (convmv -f latin1 -t utf8 converts Latin-1 names)"
	case errors.Is(e.Err, ErrNotRegular):
		return ""
	case errors.Is(e.Err, ErrUnreadable) && e.pathTooLong():
		return "shorten the folder names"
	case errors.Is(e.Err, ErrUnreadable):
		return "check its permissions"
	case errors.Is(e.Err, ErrSymlinkLoop), errors.Is(e.Err, ErrBrokenSymlink):
		return "fix or remove the link"
	}
	return ""
}

// pathTooLong reports a path the system refused as too long (ENAMETOOLONG).
func (e *FileError) pathTooLong() bool {
	return errors.Is(e.Cause, syscall.ENAMETOOLONG)
}

func (e *FileError) reason() string {
	off := strconv.FormatInt(e.Offset, 10)
	switch {
	case errors.Is(e.Err, ErrBinary):
		return "binary file: NUL byte at offset " + off
	case errors.Is(e.Err, ErrInvalidUTF8):
		return "not valid UTF-8: bad byte at offset " + off
	case errors.Is(e.Err, ErrUTF16):
		return "UTF-16 text, not UTF-8"
	case errors.Is(e.Err, ErrUTF32):
		return "UTF-32 text, not UTF-8"
	case errors.Is(e.Err, ErrEmpty):
		return "empty file: nothing to index"
	case errors.Is(e.Err, ErrInvalidName):
		return "path not valid UTF-8: bad byte at offset " + off + " of the path"
	case errors.Is(e.Err, ErrNotRegular):
		return "not a regular file"
	case errors.Is(e.Err, ErrUnreadable) && e.pathTooLong():
		return "path too long"
	case errors.Is(e.Err, ErrUnreadable):
		return "cannot read"
	case errors.Is(e.Err, ErrShrank):
		return "file shrank while being read"
	case errors.Is(e.Err, ErrVanished):
		return "file vanished"
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

// hint is Error's remedy: Fix, or leaving the file out with source.exclude.
func (e *FileError) hint() string {
	switch {
	case errors.Is(e.Err, ErrBinary), errors.Is(e.Err, ErrNotRegular):
		return "exclude it with source.exclude"
	case errors.Is(e.Err, ErrEmpty):
		// The document fails; it is not deleted from the index.
		return "write text into it, or delete or exclude it (source.exclude); its earlier chunks stay in the index until then"
	case errors.Is(e.Err, ErrVanished):
		return "it will be picked up by the next run"
	case errors.Is(e.Err, ErrOutsideRoot):
		return "move the target inside source.dir or exclude the link with source.exclude"
	case errors.Is(e.Err, ErrSymlinkLoop), errors.Is(e.Err, ErrBrokenSymlink):
		return "fix or remove the link, or exclude it with source.exclude"
	}
	if fix := e.Fix(); fix != "" {
		return fix + " or exclude it with source.exclude"
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
