package reader

// pathSet is a set of root-relative paths ("" is the root) that lists its
// members at or below a folder in time proportional to their number, not
// to the size of the set. The watcher removes a folder (rm -rf, a branch
// switch, a folder moved away) one subfolder at a time: with a plain map,
// each would cost a pass over every document of the tree, which makes
// removing a large tree quadratic and starves the event queue.
//
// The zero value is not usable; call newPathSet.
type pathSet struct {
	has map[string]bool
	// kids holds, for each folder above a member (the root included), the
	// paths of its entries that are members or lead to members.
	kids map[string]map[string]struct{}
}

func newPathSet() *pathSet {
	return &pathSet{has: map[string]bool{}, kids: map[string]map[string]struct{}{}}
}

// contains reports whether p is a member.
func (s *pathSet) contains(p string) bool { return s.has[p] }

// add makes p a member.
func (s *pathSet) add(p string) {
	if s.has[p] {
		return
	}
	s.has[p] = true
	for child := p; child != ""; child = parentRel(child) {
		parent := parentRel(child)
		k := s.kids[parent]
		if k == nil {
			k = map[string]struct{}{}
			s.kids[parent] = k
		}
		if _, ok := k[child]; ok {
			return // its folders lead to it already
		}
		k[child] = struct{}{}
	}
}

// remove makes p no longer a member.
func (s *pathSet) remove(p string) {
	if !s.has[p] {
		return
	}
	delete(s.has, p)
	for node := p; node != "" && !s.has[node] && len(s.kids[node]) == 0; node = parentRel(node) {
		parent := parentRel(node)
		delete(s.kids[parent], node)
		if len(s.kids[parent]) == 0 {
			delete(s.kids, parent)
		}
	}
}

// any reports whether a member is dir or below it.
func (s *pathSet) any(dir string) bool { return s.has[dir] || len(s.kids[dir]) > 0 }

// clear removes every member.
func (s *pathSet) clear() {
	clear(s.has)
	clear(s.kids)
}

// under returns the members that are dir or below it, in no particular
// order. The caller may change the set while it goes through them.
func (s *pathSet) under(dir string) []string {
	var out []string
	if s.has[dir] {
		out = append(out, dir)
	}
	for stack := []string{dir}; len(stack) > 0; {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := range s.kids[p] {
			if s.has[c] {
				out = append(out, c)
			}
			stack = append(stack, c)
		}
	}
	return out
}
