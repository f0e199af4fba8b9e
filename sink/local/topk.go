package local

import "sort"

// hit is a candidate row and its score; higher is better.
type hit struct {
	seq   int64
	score float64
}

// better orders hits best first: higher score, then lower seq (older row),
// so that rankings are deterministic.
func better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.seq < b.seq
}

// topK keeps the k best hits pushed into it, in O(log k) per push: a heap
// whose root is the worst hit kept.
type topK struct {
	k int
	h []hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]hit, 0, min(k, 1024))} }

func (t *topK) push(x hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		t.up(len(t.h) - 1)
		return
	}
	if t.k == 0 || !better(x, t.h[0]) {
		return
	}
	t.h[0] = x
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(t.h[p], t.h[i]) {
			break
		}
		t.h[p], t.h[i] = t.h[i], t.h[p]
		i = p
	}
}

func (t *topK) down(i int) {
	for {
		w := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(t.h) && better(t.h[w], t.h[c]) {
				w = c
			}
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// sorted returns the kept hits, best first.
func (t *topK) sorted() []hit {
	out := append([]hit(nil), t.h...)
	sortHits(out)
	return out
}

func sortHits(h []hit) {
	sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) })
}

// rrfK is the constant of reciprocal rank fusion, as in Cloud AI Search.
const rrfK = 60

// fuse combines rankings (each best first) by reciprocal rank fusion: a
// row's score is the sum over the rankings that hold it of 1/(rrfK+rank),
// ranks starting at 1. It returns the best k.
func fuse(k int, rankings ...[]hit) []hit {
	scores := make(map[int64]float64)
	for _, r := range rankings {
		for i, h := range r {
			scores[h.seq] += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]hit, 0, len(scores))
	for seq, sc := range scores {
		out = append(out, hit{seq: seq, score: sc})
	}
	sortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}
