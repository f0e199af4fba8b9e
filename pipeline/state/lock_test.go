package state

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openForWriting(t *testing.T, path, scope string) *Store {
	t.Helper()
	s, err := OpenForWriting(context.Background(), path, scope)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// wantLocked fails unless err is a *LockedError for path and scope held by
// the process pid.
func wantLocked(t *testing.T, what string, err error, path, scope string, pid int) *LockedError {
	t.Helper()
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("%s: %v, want a *LockedError (ErrLocked)", what, err)
	}
	if le.Path != path || le.Scope != scope || le.Holder.PID != pid {
		t.Errorf("%s: LockedError %+v, want path %s, scope %s, holder pid %d", what, le, path, scope, pid)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), scope) {
		t.Errorf("%s: message %q does not name the state file and the index", what, err)
	}
	return le
}

// TestSecondWriterLocked: while a Store holds the write lock of a scope,
// another one cannot take it, neither at once (OpenForWriting) nor at its
// first write (Open), but reads all it likes; the lock of another scope of
// the same file is free; after Close the lock is free again.
func TestSecondWriterLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	first := openForWriting(t, path, "x")
	run := begin(t, first)
	ackCommit(t, run, "a.md", "h", "n1")
	if err := first.Fail(ctx, "b.md", "boom", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}

	_, err := OpenForWriting(ctx, path, "x")
	le := wantLocked(t, "second OpenForWriting", err, path, "x", os.Getpid())
	if !strings.Contains(err.Error(), "close that Store first") {
		t.Errorf("a lock held by this very process: message %q does not say to close the other Store", err)
	}
	if want := lockPaths(path, "x")[0]; le.Lock != want {
		t.Errorf("lock file %s, want %s", le.Lock, want)
	}

	reader := open(t, path, "x")
	reads := []struct {
		name string
		fn   func() error
	}{
		{"Doc", func() error { _, _, err := reader.Doc(ctx, "a.md"); return err }},
		{"DocIDs", func() error { _, err := reader.DocIDs(ctx); return err }},
		{"Stamps", func() error { _, err := reader.Stamps(ctx); return err }},
		{"Failures", func() error { _, err := reader.Failures(ctx); return err }},
		{"Pending", func() error { _, _, err := reader.Pending(ctx, "a.md"); return err }},
		{"Uncommitted", func() error { _, err := reader.Uncommitted(ctx); return err }},
		{"Unsettled", func() error { _, err := reader.Unsettled(ctx); return err }},
		{"CheckEmbedder", func() error { return reader.CheckEmbedder(ctx, Embedder{Provider: "hash", Dimensions: 8}) }},
		{"LoadVectors", func() error { _, err := reader.LoadVectors(ctx, "m", []string{"k"}); return err }},
	}
	for _, r := range reads {
		if err := r.fn(); err != nil {
			t.Errorf("%s while another Store writes: %v", r.name, err)
		}
	}
	if d, ok, _ := reader.Doc(ctx, "a.md"); !ok || !slices.Equal(d.NodeIDs, []string{"n1"}) {
		t.Errorf("reader sees %+v, %v; want the writer's committed record", d, ok)
	}
	writes := []struct {
		name string
		fn   func() error
	}{
		{"Begin", func() error { _, err := reader.Begin(ctx); return err }},
		{"Fail", func() error { return reader.Fail(ctx, "a.md", "x", time.Now()) }},
		{"Touch", func() error { return reader.Touch(ctx, "a.md", time.Now(), "") }},
		{"ClearFailure", func() error { return reader.ClearFailure(ctx, "b.md") }},
		{"Reset", func() error { return reader.Reset(ctx, "a.md") }},
		{"Forget", func() error { return reader.Forget(ctx, "a.md") }},
		{"SaveVectors", func() error { return reader.SaveVectors(ctx, "m", map[string][]float32{"k": {1}}) }},
		{"ClearVectors", func() error { return reader.ClearVectors(ctx, "m") }},
		{"SetEmbedder", func() error { return reader.SetEmbedder(ctx, Embedder{Provider: "hash"}) }},
	}
	for _, w := range writes {
		wantLocked(t, w.name+" without the lock", w.fn(), path, "x", os.Getpid())
	}
	if d, ok, _ := first.Doc(ctx, "a.md"); !ok || d.Hash != "h" {
		t.Errorf("after the refused writes the record is %+v, %v; want it intact", d, ok)
	}
	if f, _ := first.Failures(ctx); len(f) != 1 || f[0].Attempts != 1 {
		t.Errorf("after the refused writes the dead letters are %+v; want b.md once", f)
	}

	other := openForWriting(t, path, "y") // another index, same state file
	if err := other.Fail(ctx, "c.md", "boom", time.Now()); err != nil {
		t.Errorf("writing another scope of the file: %v", err)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := openForWriting(t, path, "x")
	if err := second.Touch(ctx, "a.md", time.Unix(5, 0), ""); err != nil {
		t.Errorf("writing after the first writer closed: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if err := reader.Touch(ctx, "a.md", time.Unix(6, 0), ""); err != nil {
		t.Errorf("a Store from Open writing once the lock is free: %v", err)
	}
	if _, err := OpenForWriting(ctx, path, "x"); !errors.Is(err, ErrLocked) {
		t.Errorf("OpenForWriting while a Store from Open holds the lock after writing: %v, want ErrLocked", err)
	}
}

// lockHelperEnv, set to the path of a state file in the environment of this
// package's test binary, makes TestHelperProcess take the write lock of its
// scope "x", say so on stdout and hold it until stdin closes.
const lockHelperEnv = "SLUICE_STATE_LOCK_HELPER"

// TestHelperProcess is not a test: it is the lock holder of
// TestKilledHolderReleasesLock, run in a process of its own.
func TestHelperProcess(t *testing.T) {
	arg := os.Getenv(lockHelperEnv)
	if arg == "" {
		return
	}
	s, err := OpenForWriting(context.Background(), arg, "x")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// A run that dies leaves pending rows: the next writer deletes them.
	run, err := s.Begin(context.Background())
	if err == nil {
		err = run.Intend(context.Background(), nodes("a.md", "orphan"))
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin) // until killed, or the test's end closes stdin
	os.Exit(0)
}

// TestKilledHolderReleasesLock: a process holding the write lock keeps
// other processes from writing; once it is killed (SIGKILL: no chance to
// clean up), the lock is free, and the next writer takes its rows for a
// dead run's.
func TestKilledHolderReleasesLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() { // the helper never outlives the test
		if !waited {
			cmd.Process.Kill()
			stdin.Close()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v; want locked", line, err)
	}

	_, err = OpenForWriting(ctx, path, "x")
	le := wantLocked(t, "OpenForWriting while another process holds the lock", err, path, "x", cmd.Process.Pid)
	msg := err.Error()
	for _, want := range []string{"another sluice process", "pid " + strconv.Itoa(cmd.Process.Pid), filepath.Base(exe), "wait for that process to finish", "stop it"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if le.Holder.Since.IsZero() || le.Holder.Scope != "x" {
		t.Errorf("holder %+v, want the time it took the lock and its scope", le.Holder)
	}
	reader := open(t, path, "x")
	if acked, intended, err := reader.Pending(ctx, "a.md"); err != nil || len(acked) != 0 || !slices.Equal(intended, []string{"orphan"}) {
		t.Errorf("reading while another process writes: %v, %v, %v", acked, intended, err)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	cmd.Wait() // an error: it was killed
	waited = true

	s := openForWriting(t, path, "x")
	run := begin(t, s)
	if stale, err := run.Stale(ctx, "a.md"); err != nil || !slices.Equal(stale, []string{"orphan"}) {
		t.Errorf("Stale after the holder was killed = %v, %v; want its pending node", stale, err)
	}
}

// TestOverlappingRuns: should two runs of a scope overlap (where nothing
// locks), the older one neither deletes the younger one's nodes as stale
// nor clears its pending rows on Commit.
func TestOverlappingRuns(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	older := begin(t, s)
	younger := begin(t, s)
	if younger.id <= older.id {
		t.Fatalf("run tags %d then %d do not increase", older.id, younger.id)
	}
	if err := younger.Ack(ctx, nodes("d", "y1", "y2")); err != nil {
		t.Fatal(err)
	}
	if err := older.Ack(ctx, nodes("d", "o1")); err != nil {
		t.Fatal(err)
	}
	if stale, err := older.Stale(ctx, "d"); err != nil || len(stale) != 0 {
		t.Errorf("older run's Stale = %v, %v; want nothing of the younger run", stale, err)
	}
	if err := older.Commit(ctx, "d", Stamp{Hash: "o"}, ""); err != nil {
		t.Fatal(err)
	}
	if acked, _, _ := s.Pending(ctx, "d"); !slices.Equal(acked, []string{"y1", "y2"}) {
		t.Errorf("after the older run's Commit, pending = %v; want the younger run's y1, y2", acked)
	}
	if stale, _ := younger.Stale(ctx, "d"); !slices.Equal(stale, []string{"o1"}) {
		t.Errorf("younger run's Stale = %v; want the committed o1", stale)
	}
	if err := younger.Commit(ctx, "d", Stamp{Hash: "y"}, ""); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := s.Doc(ctx, "d"); !slices.Equal(d.NodeIDs, []string{"y1", "y2"}) {
		t.Errorf("record %+v, want the younger run's nodes", d)
	}
	if acked, intended, _ := s.Pending(ctx, "d"); len(acked)+len(intended) != 0 {
		t.Errorf("pending %v %v after both commits", acked, intended)
	}
}

// TestLockIsTheIndexs: the lock belongs to the index, not to the state
// file: writers of one index through two state files exclude each other,
// and the refused one learns the holder's state file. A local store's lock
// is beside its file; a search service's is in the lock folder, whatever
// the case of the service's host name; writers of other indexes go on.
func TestLockIsTheIndexs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a", "state.db"), filepath.Join(dir, "b", "state.db")
	index := filepath.Join(dir, "index.db")
	folder, err := lockFolder()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		scope, again string // the index as the first and the second writer name it
		other        string // another index
		lock         string // where its lock is
	}{
		{"local store", LocalScope(index), LocalScope(filepath.Join(dir, "b", "..", "index.db")), LocalScope(filepath.Join(dir, "other.db")), index + ".lock"},
		{"search service", ServiceScope("cloudsearch", "https://svc.search.windows.net/indexes/docs/"),
			ServiceScope("cloudsearch", "https://SVC.search.windows.net/indexes/docs"),
			ServiceScope("cloudsearch", "https://svc.search.windows.net/indexes/other"), folder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			holder := openForWriting(t, first, tt.scope)
			_, err := OpenForWriting(ctx, second, tt.again)
			var le *LockedError
			if !errors.As(err, &le) {
				t.Fatalf("second writer through another state file: %v, want a *LockedError", err)
			}
			if le.Holder.State != first || le.Holder.PID != os.Getpid() {
				t.Errorf("holder %+v, want this process through %s", le.Holder, first)
			}
			if !strings.HasPrefix(le.Lock, tt.lock) {
				t.Errorf("lock file %s, want it at %s", le.Lock, tt.lock)
			}
			openForWriting(t, second, tt.other)
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			openForWriting(t, second, tt.again)
		})
	}
}

// TestServiceScope: the spellings of one index's address that differ only
// where URLs are case-insensitive, or by a trailing slash, name one scope;
// the path, which is case-sensitive, is kept; an address that is not a URL
// is named by its hash.
func TestServiceScope(t *testing.T) {
	tests := []struct {
		address, want string
	}{
		{"https://svc.search.windows.net/indexes/docs", "cloudsearch:https://svc.search.windows.net/indexes/docs"},
		{"https://svc.search.windows.net/indexes/docs/", "cloudsearch:https://svc.search.windows.net/indexes/docs"},
		{"HTTPS://SVC.Search.Windows.Net/indexes/docs", "cloudsearch:https://svc.search.windows.net/indexes/docs"},
		{"http://LOCALHOST:8080/indexes/Docs", "cloudsearch:http://localhost:8080/indexes/Docs"},
		// A key where the endpoint goes is not shown, and another key
		// is another scope.
		{"k3yAzSeAAbCdEfGhIjKlMnOpQrStUvWx/indexes/docs", "cloudsearch:not-a-url-" + hashOf("k3yAzSeAAbCdEfGhIjKlMnOpQrStUvWx/indexes/docs")},
		{"other-key/indexes/docs", "cloudsearch:not-a-url-" + hashOf("other-key/indexes/docs")},
	}
	for _, tt := range tests {
		if got := ServiceScope("cloudsearch", tt.address); got != tt.want {
			t.Errorf("ServiceScope(%q) = %q, want %q", tt.address, got, tt.want)
		}
	}
	if a, b := ServiceScope("cloudsearch", "key-a/indexes/docs"), ServiceScope("cloudsearch", "key-b/indexes/docs"); a == b || strings.Contains(a, "key-a") {
		t.Errorf("scopes of two addresses that are not URLs: %q and %q, want two that do not show them", a, b)
	}
}

// TestLockWithoutCacheFolder: without a user cache folder, the lock of a
// search service's index is next to the state file.
func TestLockWithoutCacheFolder(t *testing.T) {
	saved := lockFolder
	t.Cleanup(func() { lockFolder = saved })
	lockFolder = func() (string, error) { return "", errors.New("no cache folder") }
	path := filepath.Join(t.TempDir(), "state.db")
	scope := ServiceScope("cloudsearch", "https://svc.search.windows.net/indexes/docs")
	openForWriting(t, path, scope)
	_, err := OpenForWriting(context.Background(), path, scope)
	var le *LockedError
	if !errors.As(err, &le) || filepath.Dir(le.Lock) != filepath.Dir(path) || !strings.HasPrefix(filepath.Base(le.Lock), "state.db.") {
		t.Fatalf("%v: want a *LockedError whose lock is next to %s", err, path)
	}
}

// TestPrivateScopeLock: a scope that LocalScope and ServiceScope did not
// build is private to its state file: the same name in two state files
// names two indexes, which do not exclude each other.
func TestPrivateScopeLock(t *testing.T) {
	dir := t.TempDir()
	first := openForWriting(t, filepath.Join(dir, "a.db"), "test")
	openForWriting(t, filepath.Join(dir, "b.db"), "test")
	if want := filepath.Join(dir, "a.db") + "."; !strings.HasPrefix(first.lock.files[0].Name(), want) {
		t.Errorf("lock file %s, want it next to the state file (%s…)", first.lock.files[0].Name(), want)
	}
}

// TestLockOfOneStoreFile: every path that reaches a local store's file —
// through a link to the file, a dangling link to the file yet to be
// created, a link to its folder, or a folder that does not exist yet —
// takes the same lock, whose file is created with its folder if need be;
// another file's lock is another.
func TestLockOfOneStoreFile(t *testing.T) {
	ctx := context.Background()
	symlink := func(t *testing.T, target, link string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	tests := []struct {
		name string
		// setup prepares dir and returns the store's path as the two
		// writers name it.
		setup func(t *testing.T, dir string) (first, second string)
	}{
		{"folder not created yet", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "new", "sub", "index.db")
			return p, p
		}},
		{"link to the file", func(t *testing.T, dir string) (string, string) {
			index := filepath.Join(dir, "data", "index.db")
			writeFile(t, index)
			symlink(t, filepath.Join("..", "data", "index.db"), filepath.Join(dir, "other", "link.db"))
			return index, filepath.Join(dir, "other", "link.db")
		}},
		{"dangling link to the file", func(t *testing.T, dir string) (string, string) {
			index := filepath.Join(dir, "data", "index.db")
			if err := os.MkdirAll(filepath.Dir(index), 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, index, filepath.Join(dir, "link.db"))
			return filepath.Join(dir, "link.db"), index
		}},
		{"link to the folder", func(t *testing.T, dir string) (string, string) {
			index := filepath.Join(dir, "data", "index.db")
			writeFile(t, index)
			symlink(t, filepath.Join(dir, "data"), filepath.Join(dir, "alias"))
			return filepath.Join(dir, "alias", "index.db"), index
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first, second := tt.setup(t, dir)
			holder := openForWriting(t, filepath.Join(dir, "a", "state.db"), LocalScope(first))
			_, err := OpenForWriting(ctx, filepath.Join(dir, "b", "state.db"), LocalScope(second))
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("second writer of %s as %s: %v, want ErrLocked", first, second, err)
			}
			openForWriting(t, filepath.Join(dir, "b", "state.db"), LocalScope(filepath.Join(dir, "another.db")))
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			openForWriting(t, filepath.Join(dir, "b", "state.db"), LocalScope(second))
		})
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServiceLockWithAndWithoutCacheFolder: two writers of a search
// service's index through one state file exclude each other even when only
// one of them has a user cache folder (a service started without HOME).
func TestServiceLockWithAndWithoutCacheFolder(t *testing.T) {
	saved := lockFolder
	t.Cleanup(func() { lockFolder = saved })
	none := func() (string, error) { return "", errors.New("no cache folder") }
	path := filepath.Join(t.TempDir(), "state.db")
	scope := ServiceScope("cloudsearch", "https://svc.search.windows.net/indexes/docs")
	for _, tt := range []struct {
		name          string
		first, second func() (string, error)
	}{
		{"cache folder first", saved, none},
		{"no cache folder first", none, saved},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lockFolder = tt.first
			holder := openForWriting(t, path, scope)
			lockFolder = tt.second
			_, err := OpenForWriting(context.Background(), path, scope)
			wantLocked(t, "second writer", err, path, scope, os.Getpid())
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			openForWriting(t, path, scope).Close()
		})
	}
}

// TestLockIndexWithoutManifest: LockIndex takes the lock OpenForWriting
// takes, without creating the state file.
func TestLockIndexWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	scope := LocalScope(filepath.Join(dir, "index.db"))
	l, err := LockIndex(path, scope)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LockIndex created the state file: %v", err)
	}
	if _, err := LockIndex(filepath.Join(dir, "other.db"), scope); !errors.Is(err, ErrLocked) {
		t.Errorf("LockIndex while the lock is held: %v, want ErrLocked", err)
	}
	_, err = OpenForWriting(context.Background(), filepath.Join(dir, "other.db"), scope)
	wantLocked(t, "OpenForWriting while LockIndex holds the lock", err, filepath.Join(dir, "other.db"), scope, os.Getpid())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	openForWriting(t, path, scope)
}

// TestLockFileOfAnotherUser: a lock file this process may not write (another
// user's, beside a store they share) is locked read-only, and excludes the
// other writers all the same; one it cannot open at all is an error naming
// it, not the state file.
func TestLockFileOfAnotherUser(t *testing.T) {
	saved := openFile
	t.Cleanup(func() { openFile = saved })
	denied := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	readOnly := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if flag&(os.O_RDWR|os.O_WRONLY) != 0 {
			return denied(name, flag, perm)
		}
		return saved(name, flag, perm)
	}
	ctx := context.Background()
	dir := t.TempDir()
	index := filepath.Join(dir, "shared", "index.db")
	scope := LocalScope(index)
	openForWriting(t, filepath.Join(dir, "owner", "state.db"), scope).Close() // the owner's lock file

	openFile = readOnly
	holder := openForWriting(t, filepath.Join(dir, "a", "state.db"), scope)
	openFile = saved
	if _, err := OpenForWriting(ctx, filepath.Join(dir, "b", "state.db"), scope); !errors.Is(err, ErrLocked) {
		t.Errorf("while a read-only lock file is locked: %v, want ErrLocked", err)
	}
	holder.Close()

	openFile = denied
	_, err := OpenForWriting(ctx, filepath.Join(dir, "a", "state.db"), scope)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), index+".lock") || strings.Contains(err.Error(), "(state.path)") {
		t.Errorf("a lock file that cannot be opened: %v; want a permission error naming %s.lock, not state.path", err, index)
	}
}

// hashOf returns the first 8 bytes of s's SHA-256 in hex.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
