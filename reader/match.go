package reader

import (
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
	return m
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
	if rel == "" || m.excluded(rel) {
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
