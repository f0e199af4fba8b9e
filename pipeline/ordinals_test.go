package pipeline

import (
	"math/rand/v2"
	"testing"
)

// TestOrdinals checks the table against a map, across growth, with repeats
// (including of the hash 0, which marks empty slots) and colliding slots.
func TestOrdinals(t *testing.T) {
	var o ordinals
	want := map[uint64]int{}
	rng := rand.New(rand.NewPCG(3, 4))
	seen := []uint64{0, 1, 1 << 40, 1<<40 + 64} // 1<<40 and 1<<40+64 start in the same slot of small tables
	for i := range 20000 {
		var h uint64
		switch {
		case i < len(seen):
			h = seen[i]
		case rng.IntN(10) == 0: // a repeat
			h = seen[rng.IntN(len(seen))]
		default:
			h = rng.Uint64()
			seen = append(seen, h)
		}
		key := max(h, 1) // 0 and 1 count as one hash
		if got := o.next(h); got != want[key] {
			t.Fatalf("step %d: next(%#x) = %d, want %d", i, h, got, want[key])
		}
		want[key]++
	}
	if o.n != len(want) || 4*o.n > 3*len(o.once) {
		t.Errorf("%d hashes in a table of %d slots; want %d, at most 3/4 full", o.n, len(o.once), len(want))
	}
}
