package reader

import (
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// File is one source document found by the walk.
type File struct {
	// ID is the root-relative path with '/' separators: the document id.
	ID string
	// Path is the path on disk: the root as given joined with ID.
	Path string
	// Size is the file's size in bytes when it was found.
	Size int64
	// ModTime is the file's modification time when it was found.
	ModTime time.Time
	// Change identifies the file itself beyond its size and modification
	// time, on Linux its device, inode and inode change time; "" elsewhere.
	// A file replaced by another of the same size and time (a rename over
	// it, a copy that keeps the time, a link to another file) has another
	// Change, so an incremental run reads it again instead of taking it
	// for unchanged.
	Change string
	// Metadata holds the document metadata, with LlamaIndex's directory
	// reader keys: file_path (string, Path), file_name (string),
	// file_type (string, a MIME type such as text/markdown), file_size
	// (int64), creation_date and last_modified_date (string, YYYY-MM-DD in
	// UTC), less those Config.ExcludeFileMetadata lists, and the keys of
	// the Config.Metadata rules that match. It is nil on a File passed to a
	// walk callback with an error.
	Metadata map[string]any
}

// Metadata keys set on every File found by Walk.
const (
	KeyFilePath         = "file_path"
	KeyFileName         = "file_name"
	KeyFileType         = "file_type"
	KeyFileSize         = "file_size"
	KeyCreationDate     = "creation_date"
	KeyLastModifiedDate = "last_modified_date"
)

// dateLayout is LlamaIndex's "%Y-%m-%d".
const dateLayout = "2006-01-02"

// newFile describes the file id at path p with info fi.
func newFile(id, p string, fi fs.FileInfo) File {
	created := creationTime(fi)
	return File{
		ID:      id,
		Path:    p,
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
		Change:  changeStamp(fi),
		Metadata: map[string]any{
			KeyFilePath:         p,
			KeyFileName:         path.Base(id),
			KeyFileType:         MIMEType(id),
			KeyFileSize:         fi.Size(),
			KeyCreationDate:     created.UTC().Format(dateLayout),
			KeyLastModifiedDate: fi.ModTime().UTC().Format(dateLayout),
		},
	}
}

// mimeTypes maps lower-case extensions to MIME types. The table is fixed
// (not read from the system) so metadata is the same on every machine.
var mimeTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".txt":      "text/plain",
	".text":     "text/plain",
	".rst":      "text/x-rst",
	".html":     "text/html",
	".htm":      "text/html",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".json":     "application/json",
	".xml":      "text/xml",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".org":      "text/org",
	".adoc":     "text/asciidoc",
	".tex":      "text/x-tex",
}

// MIMEType returns the MIME type for a file name by its extension, as
// LlamaIndex records in file_type; unknown extensions give "text/plain",
// since every document Sluice reads has been checked to be text.
func MIMEType(name string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "text/plain"
}

// CheckRegular returns nil if fi describes a regular file, and otherwise a
// *FileError for the file id wrapping ErrNotRegular that says what it is
// (a directory, a named pipe, a socket, a device). Reading anything but a
// regular file could block forever (a named pipe without a writer) or never
// end (a device), so Walk, Stat and Open refuse them.
func CheckRegular(id string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &FileError{Path: id, Err: ErrNotRegular, Detail: fileKind(fi.Mode())}
}

// checkName returns nil if the document id is valid UTF-8, and otherwise a
// *FileError wrapping ErrInvalidName with the offset of the first bad byte
// (its message shows the id quoted, the byte escaped: see Printable).
func checkName(id string) error {
	if utf8.ValidString(id) {
		return nil
	}
	return &FileError{Path: id, Err: ErrInvalidName, Offset: int64(invalidAt([]byte(id)))}
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "type " + t.String()
	}
}
