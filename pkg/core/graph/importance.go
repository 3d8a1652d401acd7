package graph

import (
	"cmp"
	"slices"
)

// OrderWithinDepth reorders a linearisation so that, within each depth,
// nodes with a higher score come first (seed 000 §5 strategy 3: the scene
// packs the important files of a depth before the others). The depth
// priority is untouched: the root, then depth 1, then 2 and so on, then
// the Global nodes. Nodes of equal score keep their order, so without
// scores (all zero) the linearisation is unchanged. score is asked once
// per node.
func OrderWithinDepth(entries []Entry, score func(id string) float64) {
	scores := make(map[string]float64, len(entries))
	for _, e := range entries {
		scores[e.ID] = score(e.ID)
	}
	rank := func(e Entry) int {
		if e.Class == Global {
			return int(^uint(0) >> 1)
		}
		return e.Depth
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(scores[b.ID], scores[a.ID]))
	})
}
