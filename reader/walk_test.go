package reader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// textTypes selects every file type the reader names (see fileTypes), more
// than the default *.md.
var textTypes = []string{"*.md", "*.markdown", "*.txt", "*.text", "*.rst"}

// orderTree has names whose directory-wise order differs from lexical id order.
var orderTree = map[string]string{
	"a.md":            "root a",
	"a/b.md":          "a b",
	"a-b.md":          "dash",
	"a/z/deep.txt":    "deep",
	"B.md":            "capital",
	"b.markdown":      "markdown",
	"c.rst":           "rst",
	"d.text":          "text",
	"e.go":            "package e",
	"docs/guide.md":   "guide",
	"docs/img.png":    "png",
	".git/HEAD.md":    "hidden dir",
	".sluice/x.md":    "state",
	"docs/.draft.md":  "hidden file",
	"empty-dir/":      "",
	"z/y/x/w/v/u.txt": "very deep",
}

func TestWalkOrderGolden(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, orderTree)
	res := walkAll(t, Config{Dir: root, Include: textTypes})
	if len(res.failures) != 0 {
		t.Fatalf("unexpected failures: %v", res.failures)
	}
	if !sort.StringsAreSorted(res.files) {
		t.Errorf("walk order is not lexical by id: %q", res.files)
	}
	date := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	var b strings.Builder
	for _, f := range res.all {
		keys := make([]string, 0, len(f.Metadata))
		for k := range f.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "%s\t%s\t%d\t%s\n", f.ID, f.Metadata[KeyFileType], f.Metadata[KeyFileSize], strings.Join(keys, ","))
		if want := filepath.Join(root, filepath.FromSlash(f.ID)); f.Path != want || f.Metadata[KeyFilePath] != want {
			t.Errorf("%s: Path %q, file_path %v, want %q", f.ID, f.Path, f.Metadata[KeyFilePath], want)
		}
		if f.Metadata[KeyFileName] != filepath.Base(f.Path) {
			t.Errorf("%s: file_name %v", f.ID, f.Metadata[KeyFileName])
		}
		if f.Metadata[KeyFileSize] != f.Size {
			t.Errorf("%s: file_size %v (%T) != Size %d", f.ID, f.Metadata[KeyFileSize], f.Metadata[KeyFileSize], f.Size)
		}
		for _, k := range []string{KeyCreationDate, KeyLastModifiedDate} {
			if s, _ := f.Metadata[k].(string); !date.MatchString(s) {
				t.Errorf("%s: %s = %v, want YYYY-MM-DD", f.ID, k, f.Metadata[k])
			}
		}
	}
	checkGolden(t, "walk_order.golden", b.String())
}

// checkGolden compares got with testdata/name, or rewrites the file with
// -update: testenv.Golden for the text this package's tests build.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), []byte(got))
}

func TestWalkIsDeterministic(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, orderTree)
	first := walkAll(t, Config{Dir: root, Include: textTypes}).files
	for i := 0; i < 3; i++ {
		if again := walkAll(t, Config{Dir: root, Include: textTypes}).files; !equalStrings(first, again) {
			t.Fatalf("walk %d gave %q, first gave %q", i, again, first)
		}
	}
}

// TestWalkDefaultInclude walks orderTree with the default include: only
// the *.md files, at any depth, in id order; other text types are skipped.
func TestWalkDefaultInclude(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, orderTree)
	res := walkAll(t, Config{Dir: root})
	if len(res.failures) != 0 {
		t.Fatalf("unexpected failures: %v", res.failures)
	}
	if want := []string{"B.md", "a-b.md", "a.md", "a/b.md", "docs/guide.md"}; !equalStrings(res.files, want) {
		t.Errorf("files = %q, want %q", res.files, want)
	}
}

func TestWalkIncludeExclude(t *testing.T) {
	tree := map[string]string{
		"README.md":              "r",
		"notes.txt":              "n",
		"main.go":                "g",
		"docs/a.md":              "a",
		"docs/old/b.md":          "b",
		"docs/sub/c.md":          "c",
		"drafts/d.md":            "d",
		"x/drafts/e.md":          "e",
		"x/f.draft.md":           "f",
		".github/ISSUE.md":       "i",
		".github/workflows/w.md": "w",
		".git/config.md":         "git",
	}
	tests := []struct {
		name    string
		include []string
		exclude []string
		want    []string
	}{
		{"defaults", nil, nil, []string{"README.md", "docs/a.md", "docs/old/b.md", "docs/sub/c.md", "drafts/d.md", "x/drafts/e.md", "x/f.draft.md"}},
		{"markdown and text", []string{"**/*.md", "**/*.txt"}, nil, []string{"README.md", "docs/a.md", "docs/old/b.md", "docs/sub/c.md", "drafts/d.md", "notes.txt", "x/drafts/e.md", "x/f.draft.md"}},
		{"only docs top level", []string{"docs/*.md"}, nil, []string{"docs/a.md"}},
		{"docs recursive", []string{"docs/**/*.md"}, nil, []string{"docs/a.md", "docs/old/b.md", "docs/sub/c.md"}},
		{"exclude folder name anywhere", nil, []string{"drafts"}, []string{"README.md", "docs/a.md", "docs/old/b.md", "docs/sub/c.md", "x/f.draft.md"}},
		{"exclude anchored folder", nil, []string{"docs/old", "*.draft.md"}, []string{"README.md", "docs/a.md", "docs/sub/c.md", "drafts/d.md", "x/drafts/e.md"}},
		{"exclude with text listed", []string{"*.md", "*.txt"}, []string{"drafts", "*.draft.md"}, []string{"README.md", "docs/a.md", "docs/old/b.md", "docs/sub/c.md", "notes.txt"}},
		{"go files", []string{"*.go"}, nil, []string{"main.go"}},
		{"explicit hidden folder", []string{".github/**/*.md"}, nil, []string{".github/ISSUE.md", ".github/workflows/w.md"}},
		{"explicit hidden folder with exclude", []string{".github/**/*.md"}, []string{"workflows"}, []string{".github/ISSUE.md"}},
		{"nothing matches", []string{"*.pdf"}, nil, nil},
	}
	root := t.TempDir()
	writeTree(t, root, tree)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Dir: root, Include: tt.include, Exclude: tt.exclude}
			res := walkAll(t, cfg)
			if !equalStrings(res.files, tt.want) {
				t.Errorf("files = %q, want %q", res.files, tt.want)
			}
			for _, id := range res.files {
				if !cfg.Match(id) {
					t.Errorf("Walk returned %q but Match says no", id)
				}
			}
		})
	}
}

func TestWalkSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.md": "outside", "dir/o.md": "outside dir"})
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, root, map[string]string{
		"real/a.md":     "a",
		"link-in.md":    "->real/a.md",
		"link-dir":      "->real",
		"link-out.md":   "->" + filepath.Join(outside, "secret.md"),
		"link-out-dir":  "->" + filepath.Join(outside, "dir"),
		"link-up":       "->..",
		"broken.md":     "->nowhere.md",
		"broken.png":    "->nowhere.png",
		"real/loop":     "->..",
		"self.md":       "->self.md",
		"real/sub/b.md": "b",
		"real/sub/back": "->../../real",
	})
	res := walkAll(t, Config{Dir: root})
	wantFiles := []string{"link-dir/a.md", "link-dir/sub/b.md", "link-in.md", "real/a.md", "real/sub/b.md"}
	if !equalStrings(res.files, wantFiles) {
		t.Errorf("files = %q, want %q", res.files, wantFiles)
	}
	wantFail := map[string]error{
		"link-out.md":       ErrOutsideRoot,
		"link-out-dir":      ErrOutsideRoot,
		"link-up":           ErrOutsideRoot,
		"broken.md":         ErrBrokenSymlink,
		"self.md":           ErrSymlinkLoop,
		"real/loop":         ErrSymlinkLoop,
		"real/sub/back":     ErrSymlinkLoop,
		"link-dir/loop":     ErrSymlinkLoop,
		"link-dir/sub/back": ErrSymlinkLoop,
	}
	for id, want := range wantFail {
		if got := res.failures[id]; !errors.Is(got, want) {
			t.Errorf("failure for %s = %v, want %v", id, got, want)
		}
	}
	for id, err := range res.failures {
		if _, ok := wantFail[id]; !ok {
			t.Errorf("unexpected failure %s: %v", id, err)
		}
	}
	if msg := res.failures["link-out.md"].Error(); !strings.Contains(msg, "link-out.md") || !strings.Contains(msg, "source.exclude") {
		t.Errorf("outside-root message %q should name the link and the fix", msg)
	}
}

func TestWalkUnreadableDirectory(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a", "locked/b.md": "b", "z.md": "z"})
	var files []string
	var failed []error
	w := newWalker(Config{Dir: root}, func(f File, err error) error {
		if err != nil {
			failed = append(failed, err)
			return nil
		}
		files = append(files, f.ID)
		return nil
	})
	w.readDir = func(dir string) ([]os.DirEntry, error) {
		if filepath.Base(dir) == "locked" {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		}
		return os.ReadDir(dir)
	}
	if err := w.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.md", "z.md"}; !equalStrings(files, want) {
		t.Errorf("files = %q, want %q", files, want)
	}
	if len(failed) != 1 || !errors.Is(failed[0], ErrUnreadable) || !errors.Is(failed[0], fs.ErrPermission) {
		t.Fatalf("failures = %v, want one ErrUnreadable wrapping ErrPermission", failed)
	}
	if msg := failed[0].Error(); !strings.Contains(msg, "locked") || !strings.Contains(msg, "permissions") {
		t.Errorf("message %q should name the folder and the fix", msg)
	}
}

// TestWalkFolderVanished: a folder removed (or replaced by a file) after
// its parent was listed and before it is read is no failure: the walk goes
// on as if the listing had not held it, so a run deletes its documents
// rather than keeping them as those of an unreadable folder.
func TestWalkFolderVanished(t *testing.T) {
	for _, cause := range []error{fs.ErrNotExist, syscall.ENOTDIR} {
		t.Run(cause.Error(), func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"a.md": "a", "gone/b.md": "b", "z.md": "z"})
			res := walkResult{failures: map[string]error{}}
			w := newWalker(Config{Dir: root}, func(f File, err error) error {
				if err != nil {
					res.failures[f.ID] = err
				} else {
					res.files = append(res.files, f.ID)
				}
				return nil
			})
			w.readDir = func(dir string) ([]os.DirEntry, error) {
				if filepath.Base(dir) == "gone" {
					return nil, &fs.PathError{Op: "open", Path: dir, Err: cause}
				}
				return os.ReadDir(dir)
			}
			if err := w.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if want := []string{"a.md", "z.md"}; !equalStrings(res.files, want) || len(res.failures) != 0 {
				t.Errorf("files %q, failures %v; want %q and no failure", res.files, res.failures, want)
			}
		})
	}
}

// TestWalkRootVanished: a root folder renamed away, deleted or replaced
// (an unmounted disk leaves its mount point, another folder) while it is
// walked stops the walk with a *RootVanishedError, rather than passing the
// folders not yet listed over as removed, which made a run delete every
// document below them.
func TestWalkRootVanished(t *testing.T) {
	tests := []struct {
		name string
		move func(t *testing.T, root string)
	}{
		{"renamed away", func(t *testing.T, root string) {
			if err := os.Rename(root, root+".moved"); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", func(t *testing.T, root string) {
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by an empty folder", func(t *testing.T, root string) {
			if err := os.Rename(root, root+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			writeTree(t, root, map[string]string{"a/x.md": "x", "b/y.md": "y", "c/z.md": "z"})
			var files []string
			w := newWalker(Config{Dir: root}, func(f File, err error) error {
				if err != nil {
					t.Errorf("failure %v, want none", err)
				}
				files = append(files, f.ID)
				return nil
			})
			w.readDir = func(dir string) ([]os.DirEntry, error) {
				if filepath.Base(dir) == "b" {
					tt.move(t, root)
				}
				return os.ReadDir(dir)
			}
			err := w.run(context.Background())
			var re *RootVanishedError
			if !errors.As(err, &re) || !errors.Is(err, ErrRootVanished) || re.Dir != root {
				t.Fatalf("Walk = %v, want a *RootVanishedError for %s", err, root)
			}
			if !strings.Contains(err.Error(), "source.dir") || !strings.Contains(err.Error(), "run again") {
				t.Errorf("message %q should name the setting and the fix", err)
			}
			if want := []string{"a/x.md"}; !equalStrings(files, want) {
				t.Errorf("files = %q, want %q, the walk stopped at b", files, want)
			}
		})
	}
}

func TestWalkSpecialFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a"})
	makeFIFO(t, filepath.Join(root, "pipe.md"))
	res := walkAll(t, Config{Dir: root})
	err := res.failures["pipe.md"]
	if !errors.Is(err, ErrNotRegular) || !errors.Is(err, ErrUnreadable) {
		t.Fatalf("fifo: got %v, want ErrNotRegular, a kind of ErrUnreadable", err)
	}
	if want := "reader: pipe.md: not a regular file (a named pipe); exclude it with source.exclude"; err.Error() != want {
		t.Errorf("fifo: message %q, want %q", err, want)
	}
}

func TestWalkRootErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file.md")
	writeTree(t, filepath.Dir(file), map[string]string{"file.md": "x"})
	tests := []struct {
		name string
		cfg  Config
	}{
		{"missing", Config{Dir: filepath.Join(t.TempDir(), "nope")}},
		{"file", Config{Dir: file}},
		{"bad pattern", Config{Dir: t.TempDir(), Include: []string{"[x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			err := Walk(context.Background(), tt.cfg, func(File, error) error { called = true; return nil })
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Setting, "source.") {
				t.Fatalf("Walk = %v, want *ConfigError naming a source setting", err)
			}
			if called {
				t.Error("fn was called")
			}
		})
	}
}

func TestWalkStopsOnCallbackError(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "a", "b.md": "b", "c.md": "c"})
	stop := errors.New("stop")
	var seen []string
	err := Walk(context.Background(), Config{Dir: root}, func(f File, _ error) error {
		seen = append(seen, f.ID)
		if f.ID == "b.md" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Walk = %v, want the callback's error unchanged", err)
	}
	if want := []string{"a.md", "b.md"}; !equalStrings(seen, want) {
		t.Errorf("seen = %q, want %q", seen, want)
	}
}

func TestWalkCancel(t *testing.T) {
	root := t.TempDir()
	tree := map[string]string{}
	for i := 0; i < 50; i++ {
		tree[fmt.Sprintf("d%02d/f.md", i)] = "x"
	}
	writeTree(t, root, tree)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Walk(ctx, Config{Dir: root}, func(File, error) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Walk = %v, want context.Canceled", err)
	}
	if n != 3 {
		t.Errorf("callback ran %d times after cancel at 3", n)
	}

	ctx2, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	if err := Walk(ctx2, Config{Dir: root}, func(File, error) error { t.Error("called"); return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Walk with expired ctx = %v", err)
	}
}

func TestWalkRelativeRoot(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/b.md": "b"})
	t.Chdir(root)
	res := walkAll(t, Config{})
	if len(res.all) != 1 || res.all[0].ID != "a/b.md" || res.all[0].Path != filepath.Join("a", "b.md") {
		t.Fatalf("got %+v, want a/b.md at path a/b.md", res.all)
	}
}

// TestInvalidUTF8Names: a file whose path is not valid UTF-8 (a Latin-1
// name, in the file's name or a folder's) is a failure naming the bad
// byte and the path with it escaped, from Walk and from Stat alike, while
// the other files are read. Two such names would be one in UTF-8 text.
func TestInvalidUTF8Names(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"good.md": "fine", "ok/caf\u00e9.md": "fine"})
	for _, name := range []string{"caf\xe9.md", "d\xe9j\xe0/x.md"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Skipf("this file system refuses names that are not UTF-8: %v", err)
		}
		if err := os.WriteFile(p, []byte("text"), 0o644); err != nil {
			t.Skipf("this file system refuses names that are not UTF-8: %v", err)
		}
	}
	res := walkAll(t, Config{Dir: root})
	if want := []string{"good.md", "ok/caf\u00e9.md"}; !equalStrings(res.files, want) {
		t.Errorf("files read %q, want %q", res.files, want)
	}
	want := map[string]string{
		"caf\xe9.md":      `reader: "caf\xe9.md": path not valid UTF-8: bad byte at offset 3 of the path; rename it in UTF-8 (convmv -f latin1 -t utf8 converts Latin-1 names) or exclude it with source.exclude`,
		"d\xe9j\xe0/x.md": `reader: "d\xe9j\xe0/x.md": path not valid UTF-8: bad byte at offset 1 of the path; rename it in UTF-8 (convmv -f latin1 -t utf8 converts Latin-1 names) or exclude it with source.exclude`,
	}
	if len(res.failures) != len(want) {
		t.Errorf("failures %v, want %d", res.failures, len(want))
	}
	for id, msg := range want {
		err := res.failures[id]
		if !errors.Is(err, ErrInvalidName) || err.Error() != msg {
			t.Errorf("walk, %q: %v\nwant ErrInvalidName and %s", id, err, msg)
		}
		if _, err := Stat(Config{Dir: root}, id); !errors.Is(err, ErrInvalidName) || err.Error() != msg {
			t.Errorf("Stat(%q): %v\nwant ErrInvalidName and %s", id, err, msg)
		}
	}
}
