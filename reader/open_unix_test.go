//go:build unix

package reader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openDeadline bounds an Open that must not block. A blocked open is a
// failure, not something to wait for.
const openDeadline = 10 * time.Second

// openWithin runs Open(f) and returns its error, failing the test if Open
// does not return within openDeadline. A blocked open is then released by
// opening the pipe for writing, so that no goroutine is left behind.
func openWithin(t *testing.T, f File) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		c, err := Open(f)
		if c != nil {
			c.Close()
		}
		done <- err
	}()
	timer := time.NewTimer(openDeadline)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		if w, err := os.OpenFile(f.Path, os.O_RDWR, 0); err == nil {
			defer w.Close()
		}
		<-done
		t.Fatalf("Open(%s) still blocked after %v: it waits for a writer of the named pipe", f.ID, openDeadline)
		return nil
	}
}

func TestOpenRefusesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe.md")
	if err := mkfifo(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pipe.md", "link.md"} {
		t.Run(name, func(t *testing.T) {
			err := openWithin(t, File{ID: name, Path: filepath.Join(dir, name)})
			checkNotRegular(t, err, name)
		})
	}
}

// TestOpenRefusesPipeSwappedIn replaces a regular file with a named pipe
// between Open's check and its open.
func TestOpenRefusesPipeSwappedIn(t *testing.T) {
	f := fileAt(t, "swap.md", []byte("text"))
	t.Cleanup(func() { openFile = os.OpenFile })
	openFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if err := os.Remove(name); err != nil {
			return nil, err
		}
		if err := mkfifo(name); err != nil {
			return nil, err
		}
		return os.OpenFile(name, flag, perm)
	}
	checkNotRegular(t, openWithin(t, f), "swap.md")
}

func checkNotRegular(t *testing.T, err error, id string) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, ErrNotRegular) || !errors.Is(err, ErrUnreadable) {
		t.Fatalf("error = %v, want a *FileError wrapping ErrNotRegular (and so ErrUnreadable)", err)
	}
	want := "reader: " + id + ": not a regular file (a named pipe); exclude it with source.exclude"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), "permissions") {
		t.Errorf("error %q suggests permissions for a named pipe", err)
	}
}
