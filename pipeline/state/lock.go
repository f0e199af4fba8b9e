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

// ServiceScope returns the scope of the index at address (its URL, without
// a trailing slash) of a search service of the given kind, such as
// "cloudsearch".
func ServiceScope(kind, address string) string {
	return kind + ":" + strings.TrimRight(address, "/")
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

// lockPath is the lock file of the index scope, written through the state
// file at path. For the scopes LocalScope and ServiceScope build, it is the
// index's, whichever state file reaches it:
//   - a local store's is beside its file (index.db.lock), so that every
//     process writing that file, through any state file and as any user,
//     takes the same lock;
//   - a search service's index's is in the user's cache folder
//     (~/.cache/sluice/locks on Linux), named after the service and the
//     index, so that every configuration of that user on this machine takes
//     the same lock.
//
// Any other scope, or a service's index without a cache folder, has its
// lock next to the state file, named after it and the scope. Writers of
// different indexes never exclude each other.
func lockPath(path, scope string) string {
	if file, ok := strings.CutPrefix(scope, localScope); ok && filepath.IsAbs(file) {
		return file + ".lock"
	}
	// Host names are case-insensitive, index names lower-case.
	sum := sha256.Sum256([]byte(strings.ToLower(scope)))
	name := hex.EncodeToString(sum[:6]) + ".lock"
	if isServiceScope(scope) {
		if dir, err := lockFolder(); err == nil && os.MkdirAll(dir, 0o700) == nil {
			return filepath.Join(dir, name)
		}
	}
	return path + "." + name
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

// writeLock is a held write lock: an OS lock on the lock file, which the
// operating system releases when the process exits, however it exits.
type writeLock struct {
	f *os.File
}

// maxHolderBytes bounds what is read of a lock file.
const maxHolderBytes = 4 << 10

// lock takes the write lock of scope in the state file at path (absolute)
// without waiting. A lock held by another writer is a *LockedError.
func lock(path, scope string) (*writeLock, error) {
	name := lockPath(path, scope)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
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
	// failure to record it costs them the details, not the lock.
	if data, err := json.Marshal(Holder{PID: os.Getpid(), Command: commandLine(), Since: time.Now().Truncate(time.Second), Scope: scope, State: path}); err == nil {
		if f.Truncate(0) == nil {
			f.WriteAt(append(data, '\n'), 0)
		}
	}
	return &writeLock{f: f}, nil
}

// release empties the lock file and releases the lock.
func (l *writeLock) release() error {
	l.f.Truncate(0) // before unlocking: the next holder's record is its own
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
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
