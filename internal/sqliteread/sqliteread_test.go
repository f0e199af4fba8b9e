package sqliteread

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var (
	errAccess = errors.New("access")
	errOther  = errors.New("other")
)

func isAccess(err error) bool { return errors.Is(err, errAccess) }

// openCalls calls Open on path with an open function that returns
// "locked" and the error locked, or "unlocked" and the error unlocked, and
// returns what Open returned and the unlocked argument of each call.
func openCalls(path string, locked, unlocked error) (string, []bool, error) {
	var calls []bool
	got, err := Open(path, func(u bool) (string, error) {
		calls = append(calls, u)
		if u {
			return "unlocked", unlocked
		}
		return "locked", locked
	}, isAccess)
	return got, calls, err
}

// TestOpen: Open reads with locks, and reads as immutable only when that
// failed for want of access and no -wal file holds content; when the
// immutable read fails for want of access too, the first error is
// returned.
func TestOpen(t *testing.T) {
	tests := []struct {
		name         string
		wal          string // content of the -wal file; "-" for none
		locked       error  // open(false)'s error
		unlocked     error  // open(true)'s error
		wantUnlocked bool   // open(true) is called
		wantErr      error
	}{
		{name: "locked read works", wal: "-"},
		{name: "not the file's access", wal: "-", locked: errOther, wantErr: errOther},
		{name: "no -wal: immutable", wal: "-", locked: errAccess, wantUnlocked: true},
		{name: "empty -wal: immutable", wal: "", locked: errAccess, wantUnlocked: true},
		{name: "-wal with content: no immutable read", wal: "frames", locked: errAccess, wantErr: errAccess},
		{name: "immutable read refused too: the first error", wal: "-", locked: errAccess,
			unlocked: errors.Join(errAccess, errors.New("second")), wantUnlocked: true, wantErr: errAccess},
		{name: "immutable read fails otherwise: its error", wal: "-", locked: errAccess, unlocked: errOther,
			wantUnlocked: true, wantErr: errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			if tt.wal != "-" {
				if err := os.WriteFile(path+"-wal", []byte(tt.wal), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, calls, err := openCalls(path, tt.locked, tt.unlocked)
			if tt.wantUnlocked != (len(calls) == 2) {
				t.Errorf("calls %v; want the immutable read %v", calls, tt.wantUnlocked)
			}
			if tt.wantErr != nil {
				if err != tt.wantErr { // the very error, not the immutable read's
					t.Errorf("err = %v; want %v", err, tt.wantErr)
				}
				return
			}
			want := "locked"
			if tt.wantUnlocked {
				want = "unlocked"
			}
			if err != nil || got != want {
				t.Errorf("Open = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestDSN: the path is escaped, mode=ro is always set and immutable=1 only
// when unlocked, and the pragmas follow in order.
func TestDSN(t *testing.T) {
	tests := []struct {
		path     string
		unlocked bool
		pragmas  []string
		want     string
	}{
		{"/data/index.db", false, []string{"busy_timeout(10000)"}, "file:/data/index.db?_pragma=busy_timeout%2810000%29&mode=ro"},
		{"/data/index.db", true, nil, "file:/data/index.db?immutable=1&mode=ro"},
		{"/data/a?b#c.db", false, []string{"busy_timeout(1)", "cache_size(-1024)"},
			"file:/data/a%3Fb%23c.db?_pragma=busy_timeout%281%29&_pragma=cache_size%28-1024%29&mode=ro"},
	}
	for _, tt := range tests {
		if got := DSN(tt.path, tt.unlocked, tt.pragmas...); got != tt.want {
			t.Errorf("DSN(%q, %v, %q) =\n  %s\nwant\n  %s", tt.path, tt.unlocked, tt.pragmas, got, tt.want)
		}
	}
}

// TestUnlockedError: the message says to try again and the cause stays
// reachable.
func TestUnlockedError(t *testing.T) {
	err := error(&UnlockedError{Err: errOther})
	if !errors.Is(err, errOther) || !strings.Contains(err.Error(), "other (read without locks") ||
		!strings.Contains(err.Error(), "run the command again first") {
		t.Errorf("UnlockedError = %q; want the cause, wrapped, and the advice", err)
	}
}

// TestOpenReadOnlyFile: a database at rest that the process may not write
// is read as immutable at once, without the read with locks that would
// create -shm and -wal files the process could not remove; one that a
// writer holds (its -shm exists) or whose -wal holds content is read with
// locks first, as any other; when the immutable read is refused for want of
// access, the read with locks says why.
func TestOpenReadOnlyFile(t *testing.T) {
	defer func(f func(string) bool) { readOnlyFile = f }(readOnlyFile)
	readOnlyFile = func(string) bool { return true }
	tests := []struct {
		name     string
		files    map[string]string // beside the database: suffix and content
		unlocked error             // open(true)'s error
		want     []bool            // the calls of open
	}{
		{name: "at rest", want: []bool{true}},
		{name: "empty -wal", files: map[string]string{"-wal": ""}, want: []bool{true}},
		{name: "a writer holds it", files: map[string]string{"-wal": "", "-shm": "index"}, want: []bool{false}},
		{name: "-wal with content", files: map[string]string{"-wal": "frames"}, want: []bool{false}},
		{name: "immutable read refused", unlocked: errAccess, want: []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			for suffix, content := range tt.files {
				if err := os.WriteFile(path+suffix, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, calls, err := openCalls(path, nil, tt.unlocked)
			if err != nil || !slices.Equal(calls, tt.want) {
				t.Errorf("calls %v, err %v; want calls %v and no error", calls, err, tt.want)
			}
		})
	}
}

// TestReadOnlyFile: a file the process may read and write, and a missing
// one, are not read-only; one without write permission is, unless the
// process is root, which may write it anyway.
func TestReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	if ReadOnlyFile(path) {
		t.Error("ReadOnlyFile of a missing file = true")
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ReadOnlyFile(path) {
		t.Error("ReadOnlyFile of a writable file = true")
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(path, 0o644) })
	if got, want := ReadOnlyFile(path), runtime.GOOS == "windows" || os.Geteuid() != 0; got != want {
		t.Errorf("ReadOnlyFile of a file without write permission = %v; want %v", got, want)
	}
}

// TestUnwritable: the -wal and -shm files that unwritable reports, in that
// order, and nothing for a database whose files are writable or absent.
func TestUnwritable(t *testing.T) {
	saved := unwritable
	t.Cleanup(func() { unwritable = saved })
	tests := []struct {
		name  string
		stuck func(string) bool
		want  []string
	}{
		{"both", func(string) bool { return true }, []string{"/d/state.db-wal", "/d/state.db-shm"}},
		{"the -shm only", func(p string) bool { return strings.HasSuffix(p, "-shm") }, []string{"/d/state.db-shm"}},
		{"none", func(string) bool { return false }, nil},
	}
	for _, tt := range tests {
		unwritable = tt.stuck
		if got := Unwritable("/d/state.db"); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Unwritable = %q; want %q", tt.name, got, tt.want)
		}
	}
	unwritable = saved
	if got := Unwritable(filepath.Join(t.TempDir(), "state.db")); got != nil {
		t.Errorf("Unwritable of a database without -wal or -shm = %q; want none", got)
	}
}
