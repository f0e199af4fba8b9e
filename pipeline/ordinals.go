package pipeline

// ordinals counts the occurrences of text hashes within one document, so
// that identical chunks get distinct ordinals (and node ids). Nearly every
// hash occurs once, so a single occurrence costs one word in an
// open-addressing table; only repeats go to a map. A huge document's
// hundreds of thousands of chunks then cost about 12 bytes each.
type ordinals struct {
	once    []uint64 // hashes seen, linear probing; 0 marks an empty slot
	n       int      // hashes in once
	repeats map[uint64]int32
}

// next returns how many times h was seen before, and records it once more.
func (o *ordinals) next(h uint64) int {
	if h == 0 {
		h = 1 // 0 marks empty slots
	}
	if 4*(o.n+1) > 3*len(o.once) {
		o.grow()
	}
	mask := uint64(len(o.once) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch o.once[i] {
		case 0:
			o.once[i] = h
			o.n++
			return 0
		case h:
			if o.repeats == nil {
				o.repeats = make(map[uint64]int32)
			}
			o.repeats[h]++
			return int(o.repeats[h])
		}
	}
}

// grow doubles the table (from 64 slots).
func (o *ordinals) grow() {
	old := o.once
	o.once = make([]uint64, max(64, 2*len(old)))
	mask := uint64(len(o.once) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for o.once[i] != 0 {
			i = (i + 1) & mask
		}
		o.once[i] = h
	}
}
