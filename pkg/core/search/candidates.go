package search

import (
	"cmp"
	"slices"
	"strings"
)

// FusionPool is how many hits of each side the fused modes draw as
// candidates: evaluated on SciFact with 100, and a document one side ranks
// low and the other high must be drawn by at least one of them.
const FusionPool = 100

// ScoreOf gives one side's score of a candidate the other side found; ok
// is false when that side has no score for it (a document without vectors
// yet).
type ScoreOf func(id string) (score float64, ok bool)

// Candidates pairs the union of both sides' top hits with both of their
// scores, in two lists over the same ids, as FuseWeighted wants them.
// Counting a document one side ranked just below its cut as that side's
// floor, as fusing the two top lists does, cost hybrid nDCG@10 on SciFact
// 0.28 (0.32 against 0.60 with min-max). A keyword score that keywordOf
// lacks is KeywordFloor (no query term matches). A semantic score that
// semanticOf lacks — the document's vectors trail its indexing — is the
// mean of the candidates that have one, so an unembedded document is
// neither buried nor lifted by the side that cannot see it.
func Candidates(semTop, kwTop []Hit, semanticOf, keywordOf ScoreOf) (semantic, keyword []Hit) {
	seen := make(map[string]bool, len(semTop)+len(kwTop))
	var missing []int
	sum, n := 0.0, 0
	for _, h := range append(slices.Clip(semTop), kwTop...) {
		if seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		s, ok := semanticOf(h.ID)
		if ok {
			sum, n = sum+s, n+1
		} else {
			missing = append(missing, len(semantic))
		}
		k, ok := keywordOf(h.ID)
		if !ok {
			k = KeywordFloor
		}
		semantic = append(semantic, Hit{ID: h.ID, Score: s})
		keyword = append(keyword, Hit{ID: h.ID, Score: k})
	}
	if n > 0 {
		for _, i := range missing {
			semantic[i].Score = sum / float64(n)
		}
	} else {
		for _, i := range missing {
			semantic[i].Score = SemanticFloor
		}
	}
	return semantic, keyword
}

// FuseHybrid is seed 002's hybrid mode over Candidates: FuseWeighted with
// HybridSemanticWeight and HybridKeywordWeight.
func FuseHybrid(semTop, kwTop []Hit, semanticOf, keywordOf ScoreOf) []Hit {
	sem, kw := Candidates(semTop, kwTop, semanticOf, keywordOf)
	return FuseWeighted(sem, kw, HybridSemanticWeight, HybridKeywordWeight)
}

// FuseCandidatesRRF is seed 004's reciprocal rank fusion over Candidates:
// each candidate is ranked on both sides, except that among documents no
// query term matches BM25 has no order to give, so those get no keyword
// rank.
func FuseCandidatesRRF(semTop, kwTop []Hit, semanticOf, keywordOf ScoreOf) []Hit {
	sem, kw := Candidates(semTop, kwTop, semanticOf, keywordOf)
	kw = slices.DeleteFunc(kw, func(h Hit) bool { return h.Score <= KeywordFloor })
	return FuseRRF(RRFK, byScore(sem), byScore(kw))
}

// byScore sorts hits best first, ties by id.
func byScore(hits []Hit) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	return hits
}
