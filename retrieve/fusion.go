package retrieve

import (
	"cmp"
	"slices"
)

// RRFK is the constant of reciprocal rank fusion: a candidate at rank r
// (from 1) of a list adds 1/(RRFK + r). 60 is the value of the original
// paper (Cormack et al., 2009) and of most systems since.
const RRFK = 60

// candidate is one item in one ranked list.
type candidate struct {
	key   itemKey
	score float64 // the signal's own score (bm25 or cosine)
}

type itemKey struct{ scope, id string }

// fused is an item with its fused score and the scores of each signal.
type fused struct {
	key    itemKey
	rrf    float64            // Σ 1/(RRFK + rank) over the lists it is in
	ranks  map[string]int     // signal → rank (from 1)
	scores map[string]float64 // signal → the signal's own score
}

// fuse combines ranked lists (best first) by weighted reciprocal rank
// fusion and returns the items best first:
// score(d) = Σ_lists weight_list / (RRFK + rank_list(d)), a nil weights
// weighing every list 1. Ties keep the order of first appearance, lists
// taken in the order of names.
func fuse(names []string, weights []float64, lists [][]candidate) []*fused {
	byKey := map[itemKey]*fused{}
	var order []*fused
	for li, list := range lists {
		for r, c := range list {
			f := byKey[c.key]
			if f == nil {
				f = &fused{key: c.key, ranks: map[string]int{}, scores: map[string]float64{}}
				byKey[c.key] = f
				order = append(order, f)
			}
			if _, seen := f.ranks[names[li]]; seen {
				continue // a list names an item once; keep its best rank
			}
			f.ranks[names[li]] = r + 1
			f.scores[names[li]] = c.score
			w := 1.0
			if weights != nil {
				w = weights[li]
			}
			f.rrf += w / float64(RRFK+r+1)
		}
	}
	slices.SortStableFunc(order, func(a, b *fused) int { return cmp.Compare(b.rrf, a.rrf) })
	return order
}

// maxRRF is the fused score of an item ranked first in every list of
// these names and weights: the scale that normalises fused scores into
// (0, 1]. Lists of one name (the vector lists of two spaces) hold no item
// in common, so an item counts the best weight of each name.
func maxRRF(names []string, weights []float64) float64 {
	best := map[string]float64{}
	for i, w := range weights {
		best[names[i]] = max(best[names[i]], w)
	}
	sum := 0.0
	for _, w := range best {
		sum += w
	}
	return sum / float64(RRFK+1)
}
