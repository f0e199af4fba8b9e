package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrLocked marks an index that another writer holds: another process, or
// another Store of this process, has it open for writing. *LockedError
// wraps it.
var ErrLocked = errors.New("state: index locked by another writer")

// LockedError reports that the write lock of an index is held by another
// writer. It names the state file, the index and, as far as the lock file
// tells, the process holding it, and says what to do.
type LockedError struct {
	Path   string // the state file (absolute)
	Scope  string // the index
	Lock   string // the lock file (absolute)
	Holder Holder // who holds the lock; zero if the lock file does not say
}

// Holder describes the process holding an index's write lock, as it
// recorded itself in the lock file.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // its command line
	Since   time.Time `json:"since"`   // when it took the lock
	Scope   string    `json:"scope"`
	State   string    `json:"state,omitempty"` // its state file (absolute)
}

// Error returns the message of the LockedError.
func (e *LockedError) Error() string {
	h := e.Holder
	if h.PID != 0 && h.PID == os.Getpid() {
		return fmt.Sprintf("state: this process already writes the index %s through %s (state.path): another Store has it open for writing; close that Store first", e.Scope, e.Path)
	}
	who := "another sluice process"
	if h.PID != 0 {
		var about []string
		about = append(about, "pid "+strconv.Itoa(h.PID))
		if h.Command != "" {
			about = append(about, "`"+h.Command+"`")
		}
		if !h.Since.IsZero() {
			about = append(about, "since "+h.Since.Format(time.DateTime))
		}
		if h.State != "" && h.State != e.Path {
			about = append(about, "through the state file "+h.State)
		}
		who += " (" + strings.Join(about, ", ") + ")"
	}
	return fmt.Sprintf("state: %s is writing the index %s; two writers would corrupt it, so this one (state.path %s) stops before writing anything: "+
		"wait for that process to finish, or stop it (a `sluice watch` runs until it gets Ctrl-C or SIGTERM), then run again. "+
		"Its lock (%s) is released when it exits, even if it is killed", who, e.Scope, e.Path, e.Lock)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// IndexLock is the write lock of an index held without its manifest; see
// LockIndex.
type IndexLock struct {
	l *writeLock
}

// LockIndex takes the write lock of the index scope, the one OpenForWriting
// takes through the state file at path, without opening that file: for a
// command that writes the index while its manifest does not exist, which it
// should not create, or cannot be opened (damaged, say). Like
// OpenForWriting it does not wait: while another writer holds the lock, it
// fails with a *LockedError. The lock is held until Close, or until the
// process exits. A Store of this process cannot write the scope meanwhile.
func LockIndex(path, scope string) (*IndexLock, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	l, err := lock(abs, scope)
	if err != nil {
		return nil, err
	}
	return &IndexLock{l: l}, nil
}

// Close releases the lock; calling it twice is harmless.
func (l *IndexLock) Close() error {
	if l.l == nil {
		return nil
	}
	err := l.l.release()
	l.l = nil
	return err
}

// localScope starts the scope of a local store; see LocalScope.
const localScope = "local:"

// LocalScope returns the scope of the local store whose file is at path:
// "local:" and the file's absolute path.
func LocalScope(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return localScope + path
}

// ServiceScope returns the scope of the index at address (its URL) of a
// search service of the given kind, such as "cloudsearch". The scope names
// the URL without a trailing slash and with its scheme and host in lower
// case, since they are case-insensitive: every spelling of one service's
// address reaches the same manifest records and the same lock. An address
// that is not a URL (a key set where the endpoint goes) is named by a hash
// of it, as a scope reaches lock files and messages and a key must not.
func ServiceScope(kind, address string) string {
	address = strings.TrimRight(address, "/")
	u, err := url.Parse(address)
	if err != nil || u.Scheme == "" || u.Host == "" {
		sum := sha256.Sum256([]byte(address))
		return kind + ":not-a-url-" + hex.EncodeToString(sum[:8])
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return kind + ":" + u.String()
}

// lockFolder is where the locks of the indexes of search services are,
// under the user's cache folder; a variable so that tests can move it.
var lockFolder = func() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sluice", "locks"), nil
}

// lockPaths returns the lock files of the index scope, written through the
// state file at path, in the order a writer takes them. For the scopes
// LocalScope and ServiceScope build, they are the index's, whichever state
// file reaches it:
//   - a local store's is beside its file (index.db.lock), its symbolic links
//     resolved, so that every process writing that file, through any path,
//     any state file and as any user, takes the same lock;
//   - a search service's index's is in the user's cache folder
//     (~/.cache/sluice/locks on Linux), named after the service and the
//     index (host names are case-insensitive, index names lower-case), so
//     that every configuration of that user on this machine takes the same
//     lock; and a second one is next to the state file, so that the writers
//     sharing a state file exclude each other even when one of them has no
//     cache folder (a service started without HOME, say).
//
// Any other scope has its lock next to the state file only, named after it
// and the scope. Writers of different indexes never exclude each other.
func lockPaths(path, scope string) []string {
	if file, ok := strings.CutPrefix(scope, localScope); ok && filepath.IsAbs(file) {
		return []string{realPath(file) + ".lock"}
	}
	service := isServiceScope(scope)
	key := scope
	if service {
		key = strings.ToLower(scope)
	}
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:6]) + ".lock"
	beside := path + "." + name
	if service {
		if dir, err := lockFolder(); err == nil && os.MkdirAll(dir, 0o700) == nil {
			return []string{filepath.Join(dir, name), beside}
		}
	}
	return []string{beside}
}

// maxLinks bounds the symbolic links realPath follows by hand.
const maxLinks = 40

// realPath returns the absolute path with its symbolic links resolved, so
// that two paths of one file name one lock. A file that does not exist yet
// is only reached through symbolic links to folders, which lead to the same
// folder anyway, or through a dangling link, which realPath follows to the
// file it will create.
func realPath(path string) string {
	for range maxLinks {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
		target, err := os.Readlink(path)
		if err != nil { // not a link: a file yet to be created
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return path
}

// isServiceScope reports whether scope is one ServiceScope builds: a kind,
// a colon and an absolute URL.
func isServiceScope(scope string) bool {
	kind, address, ok := strings.Cut(scope, ":")
	if !ok || kind == "" {
		return false
	}
	u, err := url.Parse(address)
	return err == nil && u.Scheme != "" && u.Host != ""
}

// writeLock is a held write lock: OS locks on the lock files, which the
// operating system releases when the process exits, however it exits.
type writeLock struct {
	files []*os.File
}

// maxHolderBytes bounds what is read of a lock file.
const maxHolderBytes = 4 << 10

// lock takes the write lock of scope in the state file at path (absolute)
// without waiting: each of its lock files (see lockPaths), in order. A lock
// held by another writer is a *LockedError.
func lock(path, scope string) (*writeLock, error) {
	l := &writeLock{}
	for _, name := range lockPaths(path, scope) {
		f, err := lockFile(path, scope, name)
		if err != nil {
			l.release()
			return nil, err
		}
		l.files = append(l.files, f)
	}
	return l, nil
}

// lockFile takes the lock file name of scope in the state file at path.
func lockFile(path, scope, name string) (*os.File, error) {
	f, err := openLockFile(name)
	if err != nil {
		if !strings.HasPrefix(name, path+".") { // beside the index, or in the cache folder
			return nil, fmt.Errorf("state: creating the lock file %s of the index %s: %w; check the permissions of its folder", name, scope, err)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, &FileError{Path: path, Op: "creating the lock file of", Err: err, Kind: ErrAccess}
		}
		return nil, fmt.Errorf("state: creating the lock file of %s (state.path): %w", path, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("state: locking %s for %s (state.path): %w", name, path, err)
	}
	if !ok {
		h := readHolder(f)
		f.Close()
		return nil, &LockedError{Path: path, Scope: scope, Lock: name, Holder: h}
	}
	// Who holds the lock is for the messages of other writers only: a
	// failure to record it (a lock file opened read-only) costs them the
	// details, not the lock.
	if data, err := json.Marshal(Holder{PID: os.Getpid(), Command: commandLine(), Since: time.Now().Truncate(time.Second), Scope: scope, State: path}); err == nil {
		if f.Truncate(0) == nil {
			f.WriteAt(append(data, '\n'), 0)
		}
	}
	return f, nil
}

// openLockFile opens the lock file name, creating it and its folder if
// need be. Another user's lock file, which this one may not write, is
// opened read-only: that is enough to lock it, and the users who share an
// index must share its lock.
func openLockFile(name string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := openFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		if ro, rerr := openFile(name, os.O_RDONLY, 0); rerr == nil {
			return ro, nil
		}
	}
	return f, err
}

// openFile opens lock files; a variable so that tests can refuse access.
var openFile = os.OpenFile

// release empties the lock files and releases the locks, in the reverse
// order of lock.
func (l *writeLock) release() error {
	var first error
	for i := len(l.files) - 1; i >= 0; i-- {
		f := l.files[i]
		f.Truncate(0) // before unlocking: the next holder's record is its own
		err := unlock(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if first == nil {
			first = err
		}
	}
	l.files = nil
	return first
}

// readHolder reads the record of the holder of a lock file; zero if there
// is none, say because the holder is still writing it.
func readHolder(f *os.File) Holder {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, maxHolderBytes))
	if err != nil {
		return Holder{}
	}
	var h Holder
	if json.Unmarshal(data, &h) != nil {
		return Holder{}
	}
	return h
}

// commandLine returns the command line of this process, its program by
// base name, arguments holding spaces or quotes quoted.
func commandLine() string {
	if len(os.Args) == 0 {
		return ""
	}
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'`\\") {
			args[i] = strconv.Quote(a)
		}
	}
	return strings.Join(args, " ")
}
