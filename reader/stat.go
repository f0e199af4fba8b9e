package reader

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Gone reports whether nothing stands any more at document id under the
// folder dir, as after an rm -rf or a branch switch: the path does not
// exist, or a file stands where one of its folders was (ENOTDIR). Symbolic
// links are not followed. Other errors, such as a folder that cannot be
// searched, do not count as gone.
func Gone(dir, id string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(id)))
	return removed(err)
}

// removed reports whether err, from a file-system call on a path, means
// that the path is gone: it does not exist, or one of its folders is a
// file now (ENOTDIR).
func removed(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// Stat describes the document id under cfg.Dir as Walk would, for callers
// that learn ids from elsewhere (watch events, a retry list). It returns a
// *FileError wrapping ErrVanished if the file is gone, ErrBrokenSymlink or
// ErrSymlinkLoop if id is a symbolic link that cannot be followed (a
// document that fails, not one that is gone; that includes a link to a
// folder that leads back to the root or to a folder above it, which Walk
// does not enter), ErrOutsideRoot if it
// is reached through a symlink leaving the root, ErrNotRegular (a kind of
// ErrUnreadable) if it is not a regular file, or a *ConfigError for a bad
// root or an id that is not a clean root-relative path. Stat does not apply
// include/exclude; use Config.Match for that.
func Stat(cfg Config, id string) (File, error) {
	cfg = cfg.WithDefaults()
	if id == "" || path.IsAbs(id) || path.Clean(id) != id || id == ".." || strings.HasPrefix(id, "../") {
		return File{}, &ConfigError{Setting: "document id", Reason: "\"" + id + "\" is not a clean root-relative path with '/' separators"}
	}
	realRoot, err := resolveRoot(cfg.Dir)
	if err != nil {
		return File{}, err
	}
	p := filepath.Join(cfg.Dir, filepath.FromSlash(id))
	fi, err := os.Stat(p)
	switch {
	case err != nil && isSymlink(p):
		return File{ID: id, Path: p}, linkFault(id, p, err)
	case err != nil:
		return File{ID: id, Path: p}, statFault(id, err)
	}
	real, err := realPath(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return File{ID: id, Path: p}, statFault(id, err)
	case err != nil:
		return File{ID: id, Path: p}, &FileError{Path: id, Err: ErrUnreadable, Detail: "cannot resolve path", Cause: err}
	case !within(realRoot, real):
		return File{ID: id, Path: p}, &FileError{Path: id, Err: ErrOutsideRoot, Detail: "target " + real}
	case fi.IsDir() && loopsBack(cfg.Dir, realRoot, id, real):
		return File{ID: id, Path: p}, &FileError{Path: id, Err: ErrSymlinkLoop, Detail: "leads back to " + displayIn(realRoot, real)}
	}
	if err := CheckRegular(id, fi); err != nil {
		return File{ID: id, Path: p}, err
	}
	if err := checkName(id); err != nil {
		return File{ID: id, Path: p}, err
	}
	f := newFile(id, p, fi)
	compile(cfg).applyMetadata(&f)
	return f, nil
}

// loopsBack reports whether real, the resolved path of the folder at the
// document id under dir, is the resolved root realRoot or one of the
// folders on the path from the root to id: a link that Walk, which enters
// each resolved folder at most once on any path from the root, reports as
// a loop.
func loopsBack(dir, realRoot, id, real string) bool {
	if real == realRoot {
		return true
	}
	for i := 0; i < len(id); i++ {
		if id[i] != '/' {
			continue
		}
		if r, err := realPath(filepath.Join(dir, filepath.FromSlash(id[:i]))); err == nil && r == real {
			return true
		}
	}
	return false
}
