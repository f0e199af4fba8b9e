package reader

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestStat(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"o.md": "o"})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a/b.md": "hello", "in.md": "->a/b.md", "out.md": "->" + filepath.Join(outside, "o.md"), "dir.md/": "", "file": "now a file",
	})
	tests := []struct {
		id      string
		wantErr error
		size    int64
	}{
		{"a/b.md", nil, 5},
		{"in.md", nil, 5},
		{"out.md", ErrOutsideRoot, 0},
		{"gone.md", ErrVanished, 0},
		{"file/was-a-folder.md", ErrVanished, 0}, // ENOTDIR: a branch switch put a file where its folder was
		{"dir.md", ErrUnreadable, 0},
		{"../x.md", ErrConfig, 0},
		{"/etc/passwd", ErrConfig, 0},
		{"a/../a/b.md", ErrConfig, 0},
		{"", ErrConfig, 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			f, err := Stat(Config{Dir: root}, tt.id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Stat(%q) = %v, want %v", tt.id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.ID != tt.id || f.Size != tt.size || f.Metadata[KeyFileSize] != tt.size || f.Path != filepath.Join(root, filepath.FromSlash(tt.id)) {
				t.Errorf("Stat(%q) = %+v", tt.id, f)
			}
		})
	}
}

// TestGone: a path is gone when nothing is there or a file stands where one
// of its folders was; a file, a folder and a broken link are not gone.
func TestGone(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.md": "A.", "sub/b.md": "B."} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("nowhere.md", filepath.Join(dir, "broken.md")); err != nil {
		t.Skipf("cannot create a symbolic link: %v", err)
	}
	for _, tt := range []struct {
		id   string
		gone bool
	}{
		{"a.md", false},
		{"sub", false},
		{"sub/b.md", false},
		{"broken.md", false}, // the link itself is there
		{"missing.md", true},
		{"sub/missing.md", true},
		{"a.md/x.md", true}, // a file where a folder was: ENOTDIR
	} {
		if got := Gone(dir, tt.id); got != tt.gone {
			t.Errorf("Gone(%q) = %v, want %v", tt.id, got, tt.gone)
		}
	}
}
