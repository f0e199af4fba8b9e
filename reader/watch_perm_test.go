//go:build unix

package reader

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// asNobodyEnv is set to 1 in the environment of the child process that
// runs a permission test as user nobody.
const asNobodyEnv = "SLUICE_READER_TEST_AS_NOBODY"

// runAsNobody makes the calling test run as a user whom permissions stop.
// As another user than root it returns true: the test goes on in this
// process. As root it runs the test (all its subtests) again in a child
// process as user nobody (this test binary, copied where nobody may run
// it, with a temporary folder nobody may write), fails the test if the
// child fails, and returns false: the caller returns at once.
func runAsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	if os.Getenv(asNobodyEnv) == "1" {
		t.Fatal("the child process still runs as root")
	}
	dir := testenv.OpenTempDir(t)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil { // Mkdir applies the umask
		t.Fatal(err)
	}
	exe := testenv.CopyTestBinary(t, dir, "reader.test")
	run := "^" + regexp.QuoteMeta(t.Name()) + "$"
	cmd := exec.CommandContext(t.Context(), exe, "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Dir = tmp
	// Without the race detector's default second of sleep at exit.
	cmd.Env = append(os.Environ(), asNobodyEnv+"=1", "TMPDIR="+tmp, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = testenv.AsNobody()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		t.Fatalf("running %s as user nobody: %v", t.Name(), err)
	case err != nil:
		t.Fatalf("%s as user nobody failed:\n%s", t.Name(), out.String())
	case !strings.Contains(out.String(), "--- PASS: "+t.Name()):
		t.Fatalf("%s as user nobody did not pass:\n%s", t.Name(), out.String())
	}
	t.Logf("as user nobody:\n%s", out.String())
	return false
}

// await receives events until each of want (as "op id") has come, and
// returns all it received, markers of until aside. Events that follow a
// folder's change of permissions come one quiet period after the folder's
// own, so a marker written at once may come before them.
func (r *watchRun) await(want ...string) []string {
	r.t.Helper()
	var got []string
	timeout := time.After(waitLimit)
	for missing := slices.Clone(want); len(missing) > 0; {
		select {
		case ev, ok := <-r.out:
			if !ok {
				r.t.Fatal("out closed early")
			}
			if strings.HasPrefix(ev.ID, "zz-mark-") {
				continue
			}
			s := ev.Op.String() + " " + ev.ID
			got = append(got, s)
			if i := slices.Index(missing, s); i >= 0 {
				missing = slices.Delete(missing, i, i+1)
			}
		case <-timeout:
			r.t.Fatalf("no %q within %v; got %q", missing, waitLimit, got)
		}
	}
	return got
}

// chmod sets the mode of the folder name, and gives it back its access
// when the test ends so the folder can be removed.
func (r *watchRun) chmod(name string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(r.path(name), mode); err != nil {
		r.t.Fatal(err)
	}
	if mode&0o700 != 0o700 {
		r.t.Cleanup(func() { os.Chmod(r.path(name), 0o755) })
	}
}

// TestWatchClosedFolder closes a watched folder (its owner takes its
// permissions away, as another owner's chmod 700 does to a reader), with
// or without a change below it within the quiet period, then opens it
// again. The closed folder is reported Failed, as Walk reports a folder it
// cannot read, instead of the change being dropped (a new document) or
// reported removed (a known one); once the folder is open again the
// failure is over and every document below it is reported changed, so the
// pipeline checks them again. Root ignores permissions: as root the test
// runs as user nobody.
func TestWatchClosedFolder(t *testing.T) {
	if !runAsNobody(t) {
		return
	}
	tests := []struct {
		name   string
		tree   map[string]string
		before func(r *watchRun) // before the folder is closed, checked with until
		change func(r *watchRun) // within the quiet period of closing it
		closed string            // the folder closed
		// Events once it is closed, and once it is open again. A change
		// may come before the folder is closed on a slow machine: maybe
		// lists events allowed then.
		whenClosed, maybe, whenOpen []string
	}{
		{
			name:   "new folder closed after a new document", // repro A
			before: func(r *watchRun) { r.mkdir("nd") },
			change: func(r *watchRun) { r.write("nd/x.md", "x") },
			closed: "nd", whenClosed: []string{"failed nd"}, maybe: []string{"changed nd/x.md"},
			whenOpen: []string{"changed nd/x.md", "removed nd"},
		},
		{
			name:   "known document edited, folder closed", // repro B
			tree:   map[string]string{"sub/x.md": "v1", "sub/y.md": "y"},
			change: func(r *watchRun) { r.write("sub/x.md", "v2") },
			closed: "sub", whenClosed: []string{"failed sub"}, maybe: []string{"changed sub/x.md"},
			whenOpen: []string{"changed sub/x.md", "changed sub/y.md", "removed sub"},
		},
		{
			name:   "folder above the document closed",
			tree:   map[string]string{"a/b/x.md": "v1", "a/b/c/": ""},
			change: func(r *watchRun) { r.write("a/b/x.md", "v2"); r.write("a/b/c/n.md", "n") },
			closed: "a", whenClosed: []string{"failed a"}, maybe: []string{"changed a/b/x.md", "changed a/b/c/n.md"},
			whenOpen: []string{"changed a/b/c/n.md", "changed a/b/x.md", "removed a"},
		},
		{
			name:   "folder closed, nothing changed",
			tree:   map[string]string{"sub/x.md": "x", "top.md": "t"},
			closed: "sub", whenClosed: []string{"failed sub"},
			whenOpen: []string{"changed sub/x.md", "removed sub"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.tree)
			r := startWatch(t, Config{Dir: root}, nil)
			if tt.before != nil {
				tt.before(r)
				if got := r.until(); len(got) != 0 {
					t.Fatalf("before: %q, want nothing", got)
				}
			}
			if tt.change != nil {
				tt.change(r)
			}
			r.chmod(tt.closed, 0)
			got := append(r.await(tt.whenClosed...), r.until()...)
			got = slices.DeleteFunc(got, func(s string) bool { return slices.Contains(tt.maybe, s) })
			if want := sorted(tt.whenClosed); !slices.Equal(sorted(got), want) {
				t.Errorf("closed: %q, want %q", got, want)
			}
			r.chmod(tt.closed, 0o755)
			got = append(r.await(tt.whenOpen...), r.until()...)
			if want := sorted(tt.whenOpen); !slices.Equal(sorted(got), want) {
				t.Errorf("open again: %q, want %q", got, want)
			}
			r.write(tt.closed+"/later.md", "later")
			if got, want := r.until(), []string{"changed " + tt.closed + "/later.md"}; !slices.Equal(got, want) {
				t.Errorf("in the folder open again: %q, want %q", got, want)
			}
		})
	}
}

// TestWatchFolderChmodRechecks drives the Watcher with explicit times: a
// change of attributes of watched folders schedules a recheck of the
// topmost (chmod -R changes a folder before the folders below it, so the
// tree is scanned once), due once quiet, which reports every document
// below it Changed; a document removed meanwhile is reported Removed.
func TestWatchFolderChmodRechecks(t *testing.T) {
	tests := []struct {
		name     string
		chmods   []string // folders whose attributes change, in order; "" is the root
		rechecks []string // folders with a recheck scheduled
		want     []string
	}{
		{"chmod -R", []string{"a", "a/b", "a/b/c"}, []string{"a"},
			[]string{"changed a/b/c/z.md", "changed a/b/y.md", "changed a/x.md", "removed a/gone.md"}},
		{"bottom up", []string{"a/b/c", "a/b"}, []string{"a/b", "a/b/c"},
			[]string{"changed a/b/c/z.md", "changed a/b/y.md"}},
		{"the root", []string{"", "a"}, []string{""},
			[]string{"changed a/b/c/z.md", "changed a/b/y.md", "changed a/x.md", "changed top.md", "removed a/gone.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"a/x.md": "x", "a/gone.md": "g", "a/b/y.md": "y", "a/b/c/z.md": "z", "top.md": "t"})
			w, err := NewWatcher(Config{Dir: root}, WatchOptions{Debounce: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := os.Remove(filepath.Join(root, "a/gone.md")); err != nil { // its event is not handled
				t.Fatal(err)
			}
			t0 := time.Unix(1000, 0)
			for i, dir := range tt.chmods {
				w.handle(fsnotify.Event{Name: filepath.Join(root, filepath.FromSlash(dir)), Op: fsnotify.Chmod}, t0.Add(time.Duration(i)*time.Millisecond))
			}
			var rechecks []string
			for id, p := range w.pending {
				if p.recheck {
					rechecks = append(rechecks, id)
				}
			}
			if got := sorted(rechecks); !slices.Equal(got, tt.rechecks) {
				t.Errorf("rechecks scheduled for %q, want %q", got, tt.rechecks)
			}
			var got []string
			for _, at := range []time.Duration{time.Second, 2 * time.Second} { // the recheck, then the documents it touched
				w.flush(t0.Add(at))
				for ; w.head < len(w.ready); w.pop() {
					got = append(got, w.ready[w.head].Op.String()+" "+w.ready[w.head].ID)
				}
			}
			if !slices.Equal(sorted(got), tt.want) {
				t.Errorf("events %q, want %q", sorted(got), tt.want)
			}
		})
	}
}

func (r *watchRun) mkdir(name string) {
	r.t.Helper()
	if err := os.Mkdir(r.path(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
}
