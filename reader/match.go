package reader

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// pattern is one compiled include or exclude glob.
type pattern struct {
	glob     string   // normalized: anchored at the root
	segments []string // glob split on '/'
	hidden   bool     // names a hidden path explicitly
}

// matcher applies a Config's patterns.
type matcher struct {
	include []pattern
	exclude []pattern
	hidden  bool // some include pattern names hidden paths
	rules   []metadataRule
	// dropFileKeys are the file metadata keys documents leave out
	// (Config.ExcludeFileMetadata).
	dropFileKeys []string
	// own are the root-relative paths of Config.Own that lie inside the
	// root (see isOwn).
	own []string
}

func compile(c Config) *matcher {
	m := &matcher{}
	for _, p := range c.Include {
		cp := newPattern(p)
		m.include = append(m.include, cp)
		m.hidden = m.hidden || cp.hidden
	}
	for _, p := range c.Exclude {
		m.exclude = append(m.exclude, newPattern(p))
	}
	m.rules = compileRules(c.Metadata)
	m.dropFileKeys = c.ExcludeFileMetadata
	m.own = ownPaths(c.Dir, c.Own)
	return m
}

// ownPaths returns the root-relative paths of the files own that lie
// inside the folder dir, compared as given (made absolute) and with the
// symbolic links of both folders resolved, so that a manifest reached
// through a link is still recognised.
func ownPaths(dir string, own []string) []string {
	if len(own) == 0 || dir == "" {
		return nil
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	realRoot, rerr := filepath.EvalSymlinks(root)
	var out []string
	add := func(root, p string) {
		if r, err := filepath.Rel(root, p); err == nil && r != "." && filepath.IsLocal(r) {
			if r = filepath.ToSlash(r); !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	for _, p := range own {
		if strings.TrimSpace(p) == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		add(root, abs)
		if real, err := realPathMissing(abs); err == nil && rerr == nil { // its folder may not exist yet
			add(realRoot, real)
		}
	}
	return out
}

// isOwn reports whether the file at rel is one of Config.Own or a file
// SQLite or Sluice keeps beside it: its -wal, -shm and -journal files, and
// lock files named after it (index.db.lock, state.db.<scope>.lock).
func (m *matcher) isOwn(rel string) bool {
	for _, o := range m.own {
		rest, ok := strings.CutPrefix(rel, o)
		switch {
		case !ok:
		case rest == "" || rest == "-wal" || rest == "-shm" || rest == "-journal":
			return true
		case strings.HasPrefix(rest, ".") && strings.HasSuffix(rest, ".lock") && !strings.Contains(rest, "/"):
			return true
		}
	}
	return false
}

// ownReal reports whether real, the resolved path of a file, is one of
// Config.Own or a file kept beside it (see isOwn), inside the resolved root
// realRoot: the file a symbolic link, or a file in a linked folder, leads
// to, which is none of a document either.
func (m *matcher) ownReal(realRoot, real string) bool {
	if len(m.own) == 0 || real == "" {
		return false
	}
	r, ok := relTo(realRoot, real)
	return ok && r != "" && m.isOwn(r)
}

// normalizePattern anchors p at the root: a pattern without '/' gets a
// leading "**/"; a leading "/" or "./" is dropped.
func normalizePattern(p string) string {
	p = strings.TrimSpace(p)
	switch {
	case strings.HasPrefix(p, "./"):
		return strings.TrimPrefix(p, "./")
	case strings.HasPrefix(p, "/"):
		return strings.TrimPrefix(p, "/")
	case !strings.Contains(p, "/"):
		return "**/" + p
	}
	return p
}

func newPattern(p string) pattern {
	g := normalizePattern(p)
	segs := strings.Split(g, "/")
	hidden := false
	for _, s := range segs {
		if strings.HasPrefix(s, ".") || strings.Contains(s, "{.") || strings.Contains(s, ",.") {
			hidden = true
		}
	}
	return pattern{glob: g, segments: segs, hidden: hidden}
}

func (p pattern) matches(rel string) bool {
	return doublestar.MatchUnvalidated(p.glob, rel)
}

// mayMatchBelow reports whether p could match some path inside directory
// dir. It errs on the side of yes.
func (p pattern) mayMatchBelow(dir string) bool {
	if strings.Contains(p.glob, "{") {
		return true // alternatives may hide a '/'; do not prune
	}
	for i, d := range strings.Split(dir, "/") {
		if i >= len(p.segments) {
			return false
		}
		s := p.segments[i]
		if s == "**" {
			return true
		}
		if !doublestar.MatchUnvalidated(s, d) {
			return false
		}
	}
	return len(p.segments) > strings.Count(dir, "/")+1
}

// isHidden reports whether any segment of rel starts with '.'.
func isHidden(rel string) bool {
	return strings.HasPrefix(rel, ".") || strings.Contains(rel, "/.")
}

// excluded reports whether rel, or a directory above it, matches an exclude pattern.
func (m *matcher) excluded(rel string) bool {
	for _, p := range m.exclude {
		for dir := rel; ; {
			if p.matches(dir) {
				return true
			}
			i := strings.LastIndexByte(dir, '/')
			if i < 0 {
				break
			}
			dir = dir[:i]
		}
	}
	return false
}

// match reports whether the file at rel is selected.
func (m *matcher) match(rel string) bool {
	if rel == "" || m.isOwn(rel) || m.excluded(rel) {
		return false
	}
	hidden := isHidden(rel)
	for _, p := range m.include {
		if (!hidden || p.hidden) && p.matches(rel) {
			return true
		}
	}
	return false
}

// descend reports whether the walk should enter the directory at rel.
func (m *matcher) descend(rel string) bool {
	if m.excluded(rel) {
		return false
	}
	hidden := isHidden(rel)
	if hidden && !m.hidden {
		return false
	}
	for _, p := range m.include {
		if (!hidden || p.hidden) && p.mayMatchBelow(rel) {
			return true
		}
	}
	return false
}

// PatternWarning is a warning about one include or exclude pattern.
type PatternWarning struct {
	// Setting is the pattern's place, as Validate names it:
	// source.include[0], source.exclude[2].
	Setting string
	// Text is the warning after the name of the pattern's list; it starts
	// with the pattern, quoted.
	Text string
}

// String returns the warning with the list it names: source.include "[x].md"
// does not match ...
func (w PatternWarning) String() string {
	list, _, _ := strings.Cut(w.Setting, "[")
	return list + " " + w.Text
}

// Unescaped returns a warning for each include or exclude pattern of c that
// does not match the path it names when read literally, although a file or
// folder of that name exists in c.Dir: in a glob, brackets, braces, '*' and
// '?' are syntax, so "[draft].md" matches d.md, not the file "[draft].md".
// Each warning names the pattern escaped to match the name. A pattern
// without '/' is checked at the top of c.Dir only.
func (c Config) Unescaped() []PatternWarning {
	var out []PatternWarning
	for _, set := range []struct {
		name     string
		patterns []string
	}{{"source.include", c.Include}, {"source.exclude", c.Exclude}} {
		for i, p := range set.patterns {
			if !strings.ContainsAny(p, globMeta) {
				continue
			}
			name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "./"), "/")
			if _, err := os.Lstat(filepath.Join(c.Dir, filepath.FromSlash(name))); err != nil || newPattern(p).matches(name) {
				continue
			}
			out = append(out, PatternWarning{
				Setting: fmt.Sprintf("%s[%d]", set.name, i),
				Text: fmt.Sprintf("%q does not match %s, which is there: in a glob, %s; to match the name, write '%s' (a bracket around one character stands for that character; keep the single quotes, in YAML as on a command line)",
					p, name, metaMeaning(p), escapeGlob(p)),
			})
		}
	}
	return out
}

// globMeta are the characters with a meaning in a glob.
const globMeta = "*?[]{}\\"

// metaMeaning says what the glob syntax in p, which does not match its
// own name, stands for: brackets, braces or a backslash ('*' and '?'
// alone match themselves).
func metaMeaning(p string) string {
	switch {
	case strings.ContainsAny(p, "[]"):
		return "[...] stands for one of the characters between the brackets"
	case strings.ContainsAny(p, "{}"):
		return "{a,b} stands for a or b"
	}
	return "a backslash escapes the character after it"
}

// escapeGlob returns p with each glob character made literal, so that it
// matches the name p: '[', '{', '}', '*' and '?' each in a bracket of its
// own ("[[]"), which needs no backslash (a backslash, doubled, remains);
// ']' outside a bracket is literal already.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '[', '{', '}', '*', '?':
			b.WriteString("[" + string(r) + "]")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
