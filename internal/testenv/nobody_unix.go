//go:build unix

package testenv

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Nobody is the user and group id that permission tests run their child
// processes as when the tests run as root, whom permissions do not stop.
const Nobody = 65534

// AsNobody returns the process attributes that run a child process as
// user and group Nobody. Only root may start such a child.
func AsNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
}

// OpenTempDir returns a new folder that every user may enter and read,
// removed when the test ends whatever the modes left below it. As root it
// skips the test when a folder above it is closed to other users, since a
// child process run as Nobody could not reach it.
func OpenTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sluice-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is closed to other users: user nobody could not reach the test's files", p)
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return dir
}

// CopyTestBinary copies the running test binary into dir, as name, where
// another user may run it (go test's own folder is private), and returns
// its path.
func CopyTestBinary(t testing.TB, dir, name string) string {
	t.Helper()
	src, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, name)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
