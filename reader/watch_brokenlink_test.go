package reader

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLinkFaults checks that Walk and Stat describe a symbolic link that
// cannot be followed alike: a failed document (not a vanished one) whose
// message names the link and, for a broken link, its missing target.
func TestLinkFaults(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	realOutside, err := filepath.EvalSymlinks(outside)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]string{
		"broken.md":     "->nowhere.md",
		"chain.md":      "->broken.md",
		"deep.md":       "->sub/gone/x.md",
		"self.md":       "->self.md",
		"sub/here":      "->.",
		"sub/deeper/up": "->..",
		"sub/top":       "->..",
		"out":           "->" + outside,
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
		// Links to folders that Walk does not enter: Stat, which the
		// watch's rounds read events with, fails them alike.
		{"sub/here", ErrSymlinkLoop, "leads back to sub"},
		{"sub/deeper/up", ErrSymlinkLoop, "leads back to sub"},
		{"sub/top", ErrSymlinkLoop, "leads back to the root"},
		{"out", ErrOutsideRoot, "target " + realOutside},
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

// TestWatchFailedFolderLinks checks that a link to a folder that Walk
// reports as a failed document, whatever the include patterns (one that
// leaves the root or leads back to a folder above it), is reported Changed
// when it is created, for the pipeline to fail it as Walk does, and Removed
// when it goes or is replaced by a link Walk follows, so that its failure
// is not kept after it is fixed.
func TestWatchFailedFolderLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{"sub/s.md": "s", "old/up": "->..", "old/out": "->" + outside})
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
	replace := func(target, name string) func() { // as ln -sfn does
		return func() {
			symlink(target, "tmplink")()
			if err := os.Rename(r.path("tmplink"), r.path(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"link back to its folder created", symlink(".", "sub/here"), []string{"changed sub/here"}},
		{"link back to the root created", symlink("..", "sub/top"), []string{"changed sub/top"}},
		{"link out of the root created", symlink(outside, "out"), []string{"changed out"}},
		{"link back removed", remove("sub/here"), []string{"removed sub/here"}},
		{"link out removed", remove("out"), []string{"removed out"}},
		{"link back found at the start removed", remove("old/up"), []string{"removed old/up"}},
		{"link out found at the start replaced by one inside", replace("../sub", "old/out"),
			[]string{"changed old/out/s.md", "changed old/out/top", "removed old/out"}}, // old/out/top: sub/top, back to the root
	}
	for _, s := range steps {
		s.change()
		// The temporary link's document is reported or not, as the
		// watcher sees the link before or after its rename.
		got := slices.DeleteFunc(sorted(r.until()), func(e string) bool { return strings.Contains(e, " tmplink/") })
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: %q, want %q", s.name, got, s.want)
		}
	}
}
