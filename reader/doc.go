// Package reader finds the documents of a source folder and streams their
// text.
//
// Walk visits the files of a root folder selected by include and exclude
// glob patterns (see Config for the pattern rules), in lexical order of their
// document id: the root-relative path with '/' separators. It never follows
// a symbolic link out of the root and survives link loops. Each File carries
// LlamaIndex-style metadata (file_path, file_name, file_type, file_size,
// creation_date, last_modified_date).
//
// Open streams one file through a fixed-size buffer while computing the
// SHA-256 of its raw bytes and checking that it is UTF-8 text: a binary file,
// invalid UTF-8, UTF-16 or UTF-32 text, an empty file, an unreadable file, an
// entry that is not a regular file or a file that vanishes mid-read is
// reported as a *FileError wrapping one of the package's sentinel errors, so
// the caller can record the failure and go on with the next file. Its Error
// says how to fix the file or leave it out with source.exclude; Problem and
// Fix give the same without naming settings, for callers that read files
// given by name.
//
// Decisions about what counts as text:
//
//   - Only UTF-8 is read. A leading UTF-8 byte-order mark is removed from the
//     text but included in the hash; Content.TextStart says how many bytes it
//     took, so text offsets can be turned into file offsets. A UTF-16 or
//     UTF-32 byte-order mark gives ErrUTF16 or ErrUTF32: such a file is not
//     transcoded (one encoding, one hash of the bytes that were indexed, no
//     guessing), it is to be re-saved as UTF-8. Without a mark, UTF-16 text
//     holds NUL bytes and is reported as binary.
//   - A file with nothing to index is ErrEmpty, whether it has no bytes or
//     only white space (JavaScript's \s, which the splitter trims, so such a
//     file would give no chunk). Like any failed file, it keeps the chunks an
//     earlier version put in an index. A streamed file is found to be white
//     space at its end, without holding more than one buffer.
//   - Only regular files are read. Opening a named pipe would block until a
//     writer appears and a device may never end, so Walk, Stat and Open
//     refuse them (ErrNotRegular, a kind of ErrUnreadable), and Open opens
//     without blocking and checks the opened file again, in case the path
//     was replaced after the check.
//
// A Watcher reports later changes as debounced Changed and Removed events
// per document id, watching new folders as they appear, and asks for a full
// reconciliation with a Rescan event when events may have been lost. It
// reports the ids Walk lists: documents reached through symbolic links
// change with their targets (whose folders it watches too), and a folder it
// cannot watch is reported with a Failed event (one the watch limit refuses
// is counted by Unwatched and retried instead). If the root folder itself
// is removed or renamed away, or its path comes to lead to another folder,
// its Run ends with a *RootError. Stat turns an id from such an event back
// into a File.
//
// Problems with one file never stop a walk; only the callback's own error,
// cancellation of the context, or an invalid configuration do.
package reader
