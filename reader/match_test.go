package reader

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestConfigMatch(t *testing.T) {
	tests := []struct {
		name    string
		include []string
		exclude []string
		path    string
		want    bool
	}{
		{"default md at root", nil, nil, "a.md", true},
		{"default md deep", nil, nil, "x/y/z/a.md", true},
		{"default skips markdown extension", nil, nil, "a.markdown", false},
		{"default skips txt", nil, nil, "notes/a.txt", false},
		{"default skips text", nil, nil, "a.text", false},
		{"default skips rst", nil, nil, "docs/index.rst", false},
		{"listed txt at root", []string{"**/*.md", "**/*.txt"}, nil, "a.txt", true},
		{"listed txt deep", []string{"**/*.md", "**/*.txt"}, nil, "notes/x/a.txt", true},
		{"listed txt keeps md", []string{"**/*.md", "**/*.txt"}, nil, "notes/a.md", true},
		{"listed txt skips rst", []string{"**/*.md", "**/*.txt"}, nil, "docs/index.rst", false},
		{"default skips go", nil, nil, "main.go", false},
		{"default skips hidden dir", nil, nil, ".git/HEAD.md", false},
		{"default skips .sluice", nil, nil, ".sluice/x.md", false},
		{"default skips nested hidden dir", nil, nil, "a/.cache/b.md", false},
		{"default skips hidden file", nil, nil, "a/.draft.md", false},
		{"anchored pattern at root", []string{"docs/*.md"}, nil, "docs/a.md", true},
		{"anchored pattern not deeper", []string{"docs/*.md"}, nil, "x/docs/a.md", false},
		{"anchored pattern one level only", []string{"docs/*.md"}, nil, "docs/sub/a.md", false},
		{"doublestar pattern", []string{"docs/**/*.md"}, nil, "docs/sub/deep/a.md", true},
		{"doublestar zero dirs", []string{"docs/**/*.md"}, nil, "docs/a.md", true},
		{"leading slash anchors", []string{"/a.md"}, nil, "a.md", true},
		{"leading slash not deeper", []string{"/a.md"}, nil, "x/a.md", false},
		{"leading dot slash", []string{"./docs/*.md"}, nil, "docs/a.md", true},
		{"braces", []string{"*.{md,txt}"}, nil, "x/a.txt", true},
		{"exclude file name", nil, []string{"README.md"}, "x/README.md", false},
		{"exclude dir name prunes subtree", nil, []string{"drafts"}, "a/drafts/b/c.md", false},
		{"exclude anchored dir", nil, []string{"docs/old"}, "docs/old/a.md", false},
		{"exclude anchored dir leaves others", nil, []string{"docs/old"}, "x/docs/old/a.md", true},
		{"exclude glob", nil, []string{"**/*.draft.md"}, "a/b.draft.md", false},
		{"exclude does not hit sibling", nil, []string{"drafts"}, "a/drafts.md", true},
		{"explicit hidden include", []string{".github/**/*.md"}, nil, ".github/x/a.md", true},
		{"explicit hidden bare", []string{".notes.md"}, nil, "a/.notes.md", true},
		{"explicit hidden still excluded", []string{".github/**/*.md"}, []string{"*.md"}, ".github/a.md", false},
		{"non-hidden include does not reach hidden", []string{"**/*.md"}, nil, ".github/a.md", false},
		{"empty path", nil, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Dir: ".", Include: tt.include, Exclude: tt.exclude}
			if got := cfg.Match(tt.path); got != tt.want {
				t.Errorf("Match(%q) with include %q exclude %q = %v, want %v", tt.path, tt.include, tt.exclude, got, tt.want)
			}
		})
	}
}

// TestConfigExcludes: Excludes answers for the exclude patterns alone, for
// files and folders, including paths no include pattern selects and paths
// with glob metacharacters, which are only characters in a path.
func TestConfigExcludes(t *testing.T) {
	cfg := Config{Dir: ".", Include: []string{"**/*.md"}, Exclude: []string{"drafts/**", "**/*.tmp", "odd[1].md"}}
	tests := []struct {
		path string
		want bool
	}{
		{"drafts", true},
		{"drafts/a.md", true},
		{"notes/x.tmp", true}, // not included either
		{"odd1.md", true},     // the pattern's [1] is a character class
		{"odd[1].md", false},  // the path's brackets are only characters
		{"notes/a.md", false},
		{"notes/a.txt", false}, // not included, but not excluded
	}
	for _, tt := range tests {
		if got := cfg.Excludes(tt.path); got != tt.want {
			t.Errorf("Excludes(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestMayMatchBelow(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"**/*.md", "a/b", true},
		{"docs/*.md", "docs", true},
		{"docs/*.md", "src", false},
		{"docs/*.md", "docs/sub", false},
		{"docs/**/*.md", "docs/sub/x", true},
		{"d*/sub/*.md", "docs/sub", true},
		{"{a,b/c}/*.md", "b", true},
		{"/a.md", "x", false},
	}
	for _, tt := range tests {
		if got := newPattern(tt.pattern).mayMatchBelow(tt.dir); got != tt.want {
			t.Errorf("pattern %q mayMatchBelow(%q) = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		setting string // "" means valid
		mention string // text the error must contain
	}{
		{"defaults", DefaultConfig(), "", ""},
		{"zero with defaults", Config{}.WithDefaults(), "", ""},
		{"empty dir", Config{Include: DefaultInclude}, "source.dir", "source.dir"},
		{"empty include", Config{Dir: "."}, "source.include", "source.include"},
		{"bad include glob", Config{Dir: ".", Include: []string{"*.md", "[abc"}}, "source.include[1]", `"[abc"`},
		{"bad exclude glob", Config{Dir: ".", Include: DefaultInclude, Exclude: []string{"{a,b"}}, "source.exclude[0]", `"{a,b"`},
		{"blank exclude", Config{Dir: ".", Include: DefaultInclude, Exclude: []string{" "}}, "source.exclude[0]", "empty pattern"},
		{"include above the folder", Config{Dir: ".", Include: []string{"../x/*.md"}}, "source.include[0]", "has a .. segment"},
		{"exclude with .. inside", Config{Dir: ".", Include: DefaultInclude, Exclude: []string{"a/../b"}}, "source.exclude[0]", "has a .. segment"},
		{"dots in a name", Config{Dir: ".", Include: []string{"notes..md", "a/..b/*.md"}}, "", ""},
		{"file metadata left out", Config{Dir: ".", Include: DefaultInclude, ExcludeFileMetadata: []string{"file_size", "last_modified_date"}}, "", ""},
		{"not a file metadata key", Config{Dir: ".", Include: DefaultInclude, ExcludeFileMetadata: []string{"file_size", "size"}},
			"source.excludeFileMetadata[1]", `"size" is not a key of the file metadata; use file_path, file_name, file_type, file_size, creation_date, last_modified_date`},
		{"file metadata key twice", Config{Dir: ".", Include: DefaultInclude, ExcludeFileMetadata: []string{"file_size", "file_name", "file_size"}},
			"source.excludeFileMetadata[2]", `"file_size" is listed twice (also at [0]); remove one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want *ConfigError", err)
			}
			if ce.Setting != tt.setting {
				t.Errorf("Setting = %q, want %q", ce.Setting, tt.setting)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error does not wrap ErrConfig: %v", err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestDefaultConfigIsACopy(t *testing.T) {
	c := DefaultConfig()
	c.Include[0] = "changed"
	if DefaultInclude[0] == "changed" {
		t.Fatalf("DefaultConfig shares DefaultInclude's array")
	}
	w := Config{}.WithDefaults()
	w.Include[0] = "changed"
	if DefaultInclude[0] == "changed" {
		t.Fatalf("WithDefaults shares DefaultInclude's array")
	}
}

// TestDefaultInclude pins the default of source.include to the design's
// configuration shape: Markdown files at any depth, nothing else.
func TestDefaultInclude(t *testing.T) {
	if want := []string{"**/*.md"}; !equalStrings(DefaultInclude, want) {
		t.Errorf("DefaultInclude = %q, want %q", DefaultInclude, want)
	}
	if got := DefaultConfig().Include; !equalStrings(got, DefaultInclude) {
		t.Errorf("DefaultConfig().Include = %q, want %q", got, DefaultInclude)
	}
}

// TestUnescaped checks the warning for a pattern that names an existing
// path literally but, being a glob, does not match it; patterns that match
// their literal name, or name nothing that exists, get none.
func TestUnescaped(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"[draft].md": "d", "{a,b}.md": "ab", "notes/[x].md": "x", "a*.md": "star"})
	c := Config{Dir: dir, Include: []string{"**/*.md", "notes/[x].md"}, Exclude: []string{"[draft].md", "{a,b}.md", "a*.md", "[gone].md", "plain.md"}}
	want := []string{
		`source.include "notes/[x].md" does not match notes/[x].md, which is there: in a glob, [...] stands for one of the characters between the brackets; to match the name, write 'notes/[[]x].md' (a bracket around one character stands for that character; keep the single quotes, in YAML as on a command line)`,
		`source.exclude "[draft].md" does not match [draft].md, which is there: in a glob, [...] stands for one of the characters between the brackets; to match the name, write '[[]draft].md' (a bracket around one character stands for that character; keep the single quotes, in YAML as on a command line)`,
		`source.exclude "{a,b}.md" does not match {a,b}.md, which is there: in a glob, {a,b} stands for a or b; to match the name, write '[{]a,b[}].md' (a bracket around one character stands for that character; keep the single quotes, in YAML as on a command line)`,
	}
	var got, settings []string
	for _, w := range c.Unescaped() {
		got, settings = append(got, w.String()), append(settings, w.Setting)
	}
	if want := []string{"source.include[1]", "source.exclude[0]", "source.exclude[1]"}; !slices.Equal(settings, want) {
		t.Errorf("settings %q, want %q", settings, want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Unescaped =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, name := range []string{"[draft].md", "{a,b}.md", "notes/[x].md", "a*?.md"} {
		if p := escapeGlob(name); !newPattern(p).matches(name) || newPattern(p).matches("a.md") {
			t.Errorf("the escaped pattern %s does not match %s alone", p, name)
		}
	}
}
