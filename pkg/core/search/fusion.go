package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// RRFK is the reciprocal rank fusion constant of seed 004 §4 ("usually 60").
const RRFK = 60

// FuseRRF merges ranked lists by reciprocal rank fusion: each list adds
// 1/(k + rank) to an id's score, rank counting from 1 (the seed's
// 1/(k + i + 1) with i from 0). Scores in the input lists are ignored; only
// their order matters. Ties are broken by id so the result is deterministic
// (the seed's sort is unstable on ties). k <= 0 means RRFK.
func FuseRRF(k float64, lists ...[]Hit) []Hit {
	if k <= 0 {
		k = RRFK
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	scores := make(map[string]float64, n)
	for _, l := range lists {
		for i, h := range l {
			scores[h.ID] += 1 / (k + float64(i) + 1)
		}
	}
	return sortedHits(scores)
}

// Weights of the hybrid mode of seed 002: "70% semantic + 30% keyword".
const (
	HybridSemanticWeight = 0.7
	HybridKeywordWeight  = 0.3
)

// FuseWeighted merges semantic and keyword hits as seed 002's hybrid mode:
// 0.7·semantic + 0.3·keyword, after normalising each list's scores to
// [0, 1] per query (min-max), because BM25 scores are unbounded and cosine
// similarities are not on the same scale. A list whose hits all share one
// score normalises them to 1. An id missing from a list contributes 0 from
// it.
func FuseWeighted(semantic, keyword []Hit, semanticWeight, keywordWeight float64) []Hit {
	scores := make(map[string]float64, len(semantic)+len(keyword))
	for _, part := range []struct {
		hits []Hit
		w    float64
	}{{semantic, semanticWeight}, {keyword, keywordWeight}} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, h := range part.hits {
			lo, hi = math.Min(lo, h.Score), math.Max(hi, h.Score)
		}
		for _, h := range part.hits {
			norm := 1.0
			if hi > lo {
				norm = (h.Score - lo) / (hi - lo)
			}
			scores[h.ID] += part.w * norm
		}
	}
	return sortedHits(scores)
}

func sortedHits(scores map[string]float64) []Hit {
	out := make([]Hit, 0, len(scores))
	for id, s := range scores {
		out = append(out, Hit{ID: id, Score: s})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Intent is where a query is best answered (seed 004 §4).
type Intent string

// Query intents.
const (
	// IntentStructural: the graph and tree ("what calls", "in file").
	IntentStructural Intent = "structural"
	// IntentSemantic: embeddings ("how does", "explain").
	IntentSemantic Intent = "semantic"
	// IntentHybrid: both, fused.
	IntentHybrid Intent = "hybrid"
)

// Classifier routes queries by phrase, as seed 004 §4's QueryClassifier.
// The zero value is not useful; use DefaultClassifier or fill the lists.
type Classifier struct {
	Structural []string
	Semantic   []string
}

// DefaultClassifier holds the seed's phrases. Matching is on the lowercased
// query (the seed matches case-sensitively, which would send "What calls X"
// to hybrid; lowercasing is the choice made here).
var DefaultClassifier = Classifier{
	Structural: []string{"what calls", "who imports", "dependencies of", "in section", "in file", "in module"},
	Semantic:   []string{"how does", "explain", "similar to"},
}

// Classify returns the query's intent: structural phrases win over
// semantic ones, and anything else is hybrid.
func (c Classifier) Classify(query string) Intent {
	q := strings.ToLower(query)
	for _, p := range c.Structural {
		if strings.Contains(q, p) {
			return IntentStructural
		}
	}
	for _, p := range c.Semantic {
		if strings.Contains(q, p) {
			return IntentSemantic
		}
	}
	return IntentHybrid
}
