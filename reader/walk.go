package reader

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Walk calls fn for each file under cfg.Dir selected by cfg, in lexical order
// of File.ID, so two walks of the same tree visit the same sequence.
//
// Empty settings get their defaults (see Config.WithDefaults); an invalid
// setting or a missing root is returned as a *ConfigError before fn is
// called. Per-entry problems (an unreadable directory, a broken symlink, a
// symlink leaving the root, a symlink loop, an entry that is not a regular
// file) are passed to fn as a *FileError together with a File carrying only
// ID and Path; the walk goes on unless fn returns an error. If fn returns a
// non-nil error, Walk stops and returns it unchanged. Walk returns ctx.Err()
// if ctx is cancelled, and a *RootVanishedError if the root folder itself
// goes (or is replaced) while it is walked.
//
// Symbolic links are followed only when their resolved target lies inside
// the resolved root; a linked directory is entered at most once on any path
// from the root, so loops end.
func Walk(ctx context.Context, cfg Config, fn func(File, error) error) error {
	return newWalker(cfg, fn).run(ctx)
}

type walker struct {
	cfg      Config
	m        *matcher
	fn       func(File, error) error
	readDir  func(string) ([]os.DirEntry, error) // replaced by tests to inject faults
	realRoot string
	rootInfo fs.FileInfo     // of the root when the walk started: see rootGone
	active   map[string]bool // resolved directories on the current walk path
}

func newWalker(cfg Config, fn func(File, error) error) *walker {
	cfg = cfg.WithDefaults()
	return &walker{cfg: cfg, m: compile(cfg), fn: fn, readDir: os.ReadDir, active: make(map[string]bool)}
}

func (w *walker) run(ctx context.Context) error {
	if err := w.cfg.Validate(); err != nil {
		return err
	}
	root := w.cfg.Dir
	real, err := resolveRoot(root)
	if err != nil {
		return err
	}
	w.realRoot = real
	if w.rootInfo, err = os.Stat(root); err != nil {
		return &ConfigError{Setting: "source.dir", Reason: "cannot open folder " + root + "; check its permissions", Cause: err}
	}
	entries, err := w.readDir(root)
	if err != nil {
		return &ConfigError{Setting: "source.dir", Reason: "cannot list folder " + root + "; check its permissions", Cause: err}
	}
	return w.walkEntries(ctx, "", root, real, entries)
}

// rootGone reports whether the root's path no longer leads to the folder
// the walk started in: it was removed or renamed away, or another folder
// stands at its path now (an unmounted disk's mount point).
func (w *walker) rootGone() bool {
	fi, err := os.Stat(w.cfg.Dir)
	return err != nil || !os.SameFile(fi, w.rootInfo)
}

// ErrRootVanished marks a walk that stopped because its root folder went
// while it was walked; see RootVanishedError.
var ErrRootVanished = errors.New("reader: source folder vanished during the walk")

// RootVanishedError is returned by Walk when the root folder itself was
// removed, renamed away or replaced (a disk unmounted) while it was walked,
// found when a folder below it could no longer be listed. The walk stops
// there: the folders not yet listed are not gone, the root is, and a caller
// that deletes the documents a walk did not list must not take them for
// deleted.
type RootVanishedError struct {
	// Dir is the root folder, as given in Config.Dir.
	Dir string
}

// Error names the folder and says what to do.
func (e *RootVanishedError) Error() string {
	return "reader: source.dir: folder " + e.Dir + " was removed, renamed or replaced (an unmounted disk?) while it was read; the walk stopped so that no document is taken for deleted: restore the folder and run again"
}

// Unwrap returns ErrRootVanished.
func (e *RootVanishedError) Unwrap() error { return ErrRootVanished }

// resolveRoot checks that root is a folder and returns its absolute path
// with symlinks resolved.
func resolveRoot(root string) (string, error) {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &ConfigError{Setting: "source.dir", Reason: "folder " + root + " does not exist; create it or point source.dir at the folder to read", Cause: err}
	case err != nil:
		return "", &ConfigError{Setting: "source.dir", Reason: "cannot open folder " + root + "; check its permissions", Cause: err}
	case !fi.IsDir():
		return "", &ConfigError{Setting: "source.dir", Reason: root + " is a file, not a folder; point source.dir at the folder that contains it"}
	}
	real, err := realPath(root)
	if err != nil {
		return "", &ConfigError{Setting: "source.dir", Reason: "cannot resolve folder " + root, Cause: err}
	}
	return real, nil
}

// realPath returns the absolute path of p with symbolic links resolved.
func realPath(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// entry is one directory entry with its symlink resolved.
type entry struct {
	name  string
	key   string // sort key: name, plus "/" for directories
	dir   bool
	real  string      // resolved path ("" for a link that cannot be followed)
	info  fs.FileInfo // of the target, for symlinked files
	de    os.DirEntry // for plain files, whose info is read on demand
	fault *FileError  // a problem found while resolving
}

func (w *walker) walkDir(ctx context.Context, rel, dir, real string) error {
	entries, err := w.readDir(dir)
	if removed(err) {
		if w.rootGone() {
			// Not this folder but the whole root went (renamed away,
			// deleted, a disk unmounted): stop, rather than take every
			// folder not yet listed for removed.
			return &RootVanishedError{Dir: w.cfg.Dir}
		}
		// Removed (or replaced by a file) since its parent was listed, as
		// during an rm -rf or a branch switch: as if the parent's listing
		// had not held it, so that its documents are deleted, not kept as
		// those of a folder that cannot be read.
		return nil
	}
	if err != nil {
		return w.fn(File{ID: rel, Path: dir}, &FileError{Path: rel, Err: ErrUnreadable, Detail: "directory", Cause: err})
	}
	return w.walkEntries(ctx, rel, dir, real, entries)
}

func (w *walker) walkEntries(ctx context.Context, rel, dir, real string, des []os.DirEntry) error {
	list := make([]entry, 0, len(des))
	for _, de := range des {
		list = append(list, w.resolve(joinRel(rel, de.Name()), dir, real, de))
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	w.active[real] = true
	defer delete(w.active, real)
	for _, e := range list {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.visit(ctx, rel, dir, e); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) visit(ctx context.Context, rel, dir string, e entry) error {
	id := joinRel(rel, e.name)
	p := filepath.Join(dir, e.name)
	if e.dir {
		if !w.m.descend(id) {
			return nil
		}
		if e.fault == nil && w.active[e.real] {
			e.fault = &FileError{Path: id, Err: ErrSymlinkLoop, Detail: "leads back to " + w.display(e.real)}
		}
		if e.fault != nil {
			return w.fn(File{ID: id, Path: p}, e.fault)
		}
		return w.walkDir(ctx, id, p, e.real)
	}
	if !w.m.match(id) || w.m.ownReal(w.realRoot, e.real) {
		// A link to the manifest or the store (or a file in a linked
		// folder that is one) is no document, as they are not.
		return nil
	}
	if e.fault == nil && e.info == nil {
		info, err := e.de.Info()
		if err != nil {
			e.fault = statFault(id, err)
		}
		e.info = info
	}
	if e.fault != nil {
		return w.fn(File{ID: id, Path: p}, e.fault)
	}
	if err := CheckRegular(id, e.info); err != nil {
		return w.fn(File{ID: id, Path: p}, err)
	}
	if err := checkName(id); err != nil {
		return w.fn(File{ID: id, Path: p}, err)
	}
	f := newFile(id, p, e.info)
	w.m.applyMetadata(&f)
	return w.fn(f, nil)
}

// resolve classifies a directory entry, following a symlink if it stays
// inside the root.
func (w *walker) resolve(id, dir, real string, de os.DirEntry) entry {
	name := de.Name()
	e := entry{name: name, key: name}
	p := filepath.Join(dir, name)
	if de.Type()&fs.ModeSymlink == 0 {
		if de.IsDir() {
			e.dir, e.key, e.real = true, name+"/", filepath.Join(real, name)
			return e
		}
		e.de = de // stat lazily: most entries are not selected
		e.real = filepath.Join(real, name)
		return e
	}
	// os.Stat follows the chain in the kernel, which classifies loops
	// (ELOOP) and dangling links for us; EvalSymlinks then names the target.
	info, err := os.Stat(p)
	if err != nil {
		e.fault = linkFault(id, p, err)
		return e
	}
	target, err := realPath(p)
	if err != nil {
		e.fault = &FileError{Path: id, Err: ErrUnreadable, Detail: "cannot resolve symlink", Cause: err}
		return e
	}
	if info.IsDir() {
		e.dir, e.key = true, name+"/"
	}
	e.real, e.info = target, info
	if !within(w.realRoot, target) {
		e.fault = &FileError{Path: id, Err: ErrOutsideRoot, Detail: "target " + target}
	}
	return e
}

// linkFault describes the symbolic link id, at p, that cannot be followed:
// os.Stat(p) failed with err. A loop is ErrSymlinkLoop, a missing target
// ErrBrokenSymlink (naming the target, see missingTarget), anything else
// (a target in a folder that cannot be searched) ErrUnreadable.
func linkFault(id, p string, err error) *FileError {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return &FileError{Path: id, Err: ErrSymlinkLoop, Detail: "the chain of links never ends"}
	case errors.Is(err, fs.ErrNotExist):
		return &FileError{Path: id, Err: ErrBrokenSymlink, Detail: missingTarget(p)}
	}
	return &FileError{Path: id, Err: ErrUnreadable, Detail: "cannot follow symlink", Cause: err}
}

// maxLinkHops bounds the links missingTarget follows, as the kernel bounds
// a chain of links.
const maxLinkHops = 40

// missingTarget names the target of the broken link at p as the link
// spells it ("target notes/old.md"), and, if that is a link too, the
// missing path its chain ends at ("target b.md, a link to gone.md").
// It returns "" if p cannot be read as a link.
func missingTarget(p string) string {
	first, err := os.Readlink(p)
	if err != nil {
		return ""
	}
	last, at := first, p
	for range maxLinkHops {
		next := last
		if !filepath.IsAbs(next) {
			next = filepath.Join(filepath.Dir(at), next)
		}
		if !isSymlink(next) {
			break
		}
		dest, err := os.Readlink(next)
		if err != nil {
			break
		}
		last, at = dest, next
	}
	if at == p {
		return "target " + first
	}
	return "target " + first + ", a link to " + last
}

// isSymlink reports whether p is a symbolic link itself (not followed).
func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// display shows a resolved path relative to the root where possible.
func (w *walker) display(real string) string { return displayIn(w.realRoot, real) }

// displayIn shows the resolved path real relative to the resolved root
// realRoot where possible, as a link loop's message names the folder it
// leads back to.
func displayIn(realRoot, real string) string {
	r, err := filepath.Rel(realRoot, real)
	if err != nil || r == "." {
		return "the root"
	}
	return filepath.ToSlash(r)
}

// statFault describes a failed stat or open of document id: ErrVanished
// if nothing stands at its path any more (see removed), ErrUnreadable
// otherwise.
func statFault(id string, err error) *FileError {
	if removed(err) {
		return &FileError{Path: id, Err: ErrVanished, Detail: "removed before it could be read", Cause: err}
	}
	return &FileError{Path: id, Err: ErrUnreadable, Cause: err}
}

// within reports whether the resolved path p is root or inside it.
func within(root, p string) bool {
	_, ok := relTo(root, p)
	return ok
}

// relTo returns p relative to root with forward slashes ("" for root
// itself), and false if p is neither root nor inside it.
func relTo(root, p string) (string, bool) {
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		return "", true
	}
	return filepath.ToSlash(r), true
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
