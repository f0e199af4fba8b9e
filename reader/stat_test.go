package reader

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestStat(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"o.md": "o"})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a/b.md": "hello", "in.md": "->a/b.md", "out.md": "->" + filepath.Join(outside, "o.md"), "dir.md/": "",
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
