package memory

import "math"

// DefaultConfidence stands in for a missing confidence (seed 003 §5).
const DefaultConfidence = 0.5

// MergeConfidence combines two confidences as seed 003 §5 does: a missing
// value (NaN, the seed's undefined) becomes DefaultConfidence, both are
// clamped to [0, 1], two zeros give 0, and otherwise the result is their
// harmonic mean 2xy/(x+y), which leans towards the lower value, rounded to
// 6 decimal places.
//
// The rounding is part of the contract: stored confidences are compared
// and folded again, and every implementation must get the same digits.
func MergeConfidence(base, provider float64) float64 {
	x, y := clampConfidence(base), clampConfidence(provider)
	if x == 0 && y == 0 {
		return 0
	}
	return math.Round(2*x*y/(x+y)*1e6) / 1e6
}

func clampConfidence(v float64) float64 {
	if math.IsNaN(v) {
		v = DefaultConfidence
	}
	return math.Max(0, math.Min(1, v))
}

// FoldConfidence merges values pairwise from the left with MergeConfidence,
// so the rounding applies at every step as the seed requires and a fold
// equals merging the values into a stored memory one at a time:
// fold([0.8, 0.6, 0.7]) = merge(0.685714, 0.7) = 0.692783. (The seed prints
// 0.692784, which is what an unrounded first step would give; it is within
// the seed's stated tolerance of 5e-6.) One value
// v gives MergeConfidence(v, v) (v clamped and rounded); none gives
// DefaultConfidence.
func FoldConfidence(values ...float64) float64 {
	switch len(values) {
	case 0:
		return DefaultConfidence
	case 1:
		return MergeConfidence(values[0], values[0])
	}
	acc := values[0]
	for _, v := range values[1:] {
		acc = MergeConfidence(acc, v)
	}
	return acc
}
