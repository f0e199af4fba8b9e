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
// invalid UTF-8, an empty file, an unreadable file or a file that vanishes
// mid-read is reported as a *FileError wrapping one of the package's
// sentinel errors, so the caller can record the failure and go on with the
// next file. A leading UTF-8 byte-order mark is removed from the text but
// included in the hash.
//
// A Watcher reports later changes as debounced Changed and Removed events
// per document id, watching new folders as they appear, and asks for a full
// reconciliation with a Rescan event when events may have been lost. Stat
// turns an id from such an event back into a File.
//
// Problems with one file never stop a walk; only the callback's own error,
// cancellation of the context, or an invalid configuration do.
package reader
