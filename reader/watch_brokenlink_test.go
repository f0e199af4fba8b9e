package reader

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLinkFaults checks that Walk and Stat describe a symbolic link that
// cannot be followed alike: a failed document (not a vanished one) whose
// message names the link and, for a broken link, its missing target.
func TestLinkFaults(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"broken.md": "->nowhere.md",
		"chain.md":  "->broken.md",
		"deep.md":   "->sub/gone/x.md",
		"self.md":   "->self.md",
	})
	tests := []struct {
		id     string
		want   error
		detail string
	}{
		{"broken.md", ErrBrokenSymlink, "target nowhere.md"},
		{"chain.md", ErrBrokenSymlink, "target broken.md, a link to nowhere.md"},
		{"deep.md", ErrBrokenSymlink, "target " + filepath.FromSlash("sub/gone/x.md")},
		{"self.md", ErrSymlinkLoop, "the chain of links never ends"},
	}
	walked := walkAll(t, Config{Dir: root})
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, statErr := Stat(Config{Dir: root}, tt.id)
			for _, c := range []struct {
				by  string
				err error
			}{{"Walk", walked.failures[tt.id]}, {"Stat", statErr}} {
				var fe *FileError
				if !errors.As(c.err, &fe) || !errors.Is(c.err, tt.want) || errors.Is(c.err, ErrVanished) {
					t.Fatalf("%s: %v, want a *FileError wrapping %v", c.by, c.err, tt.want)
				}
				if fe.Path != tt.id || fe.Detail != tt.detail {
					t.Errorf("%s: Path %q, Detail %q; want %q, %q", c.by, fe.Path, fe.Detail, tt.id, tt.detail)
				}
			}
			if statErr.Error() != walked.failures[tt.id].Error() {
				t.Errorf("Stat says %q, Walk %q", statErr, walked.failures[tt.id])
			}
		})
	}
}

// TestWatchBrokenLinks checks that a symbolic link that cannot be
// followed is reported Changed, for the pipeline to fail it as Walk does,
// whether it is created broken or its target goes; that it is reported
// again when its missing target appears, even in a folder created with
// it; and that it is Removed only when the link itself goes.
func TestWatchBrokenLinks(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.md": "a", "broken.md": "->nowhere.md", "real/t.md": "t", "link.md": "->real/t.md",
	})
	r := startWatch(t, Config{Dir: root}, nil)
	symlink := func(target, name string) func() {
		return func() {
			if err := os.Symlink(filepath.FromSlash(target), r.path(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(name string) func() {
		return func() {
			if err := os.Remove(r.path(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name string) func() { return func() { r.write(name, "text of "+name) } }
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"broken link created", symlink("gone/missing.md", "late.md"), []string{"changed late.md"}},
		{"looping link created", symlink("loop.md", "loop.md"), []string{"changed loop.md"}},
		{"missing target created", write("nowhere.md"), []string{"changed broken.md", "changed nowhere.md"}},
		{"missing target created with its folder", write("gone/missing.md"), []string{"changed gone/missing.md", "changed late.md"}},
		{"target removed", remove("real/t.md"), []string{"changed link.md", "removed real/t.md"}},
		{"target back", write("real/t.md"), []string{"changed link.md", "changed real/t.md"}},
		{"target of a link found broken at the start removed", remove("nowhere.md"), []string{"changed broken.md", "removed nowhere.md"}},
		{"broken link removed", remove("broken.md"), []string{"removed broken.md"}},
		{"looping link removed", remove("loop.md"), []string{"removed loop.md"}},
	}
	for _, s := range steps {
		s.change()
		if got := sorted(r.until()); !slices.Equal(got, s.want) {
			t.Errorf("%s: %q, want %q", s.name, got, s.want)
		}
	}
}
