package search

import (
	"cmp"
	"math"
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
// the semantic side weighed by SemanticWeight and the keyword side by the
// rest.
func FuseHybrid(semTop, kwTop []Hit, semanticOf, keywordOf ScoreOf) []Hit {
	sem, kw := Candidates(semTop, kwTop, semanticOf, keywordOf)
	ws := SemanticWeight(semTop, kwTop)
	return FuseWeighted(sem, kw, ws, 1-ws)
}

// AgreementDepth is how many of each side's best hits SemanticWeight
// compares.
const AgreementDepth = 10

// SemanticWeight is hybrid's weight of the semantic side for one query,
// estimated without labels from how far the two sides agree:
// HybridSemanticWeight (seed 002's 70 %) times the square root of the
// share of keyword search's top AgreementDepth documents that semantic
// search's top AgreementDepth holds too. semTop and kwTop are each side's
// hits, best first.
//
// A fixed 70 % let a weak model pull the default below keyword search.
// nDCG@10 through the daemon (`cue eval`, the built-in model), keyword /
// fixed 70 % / this weight:
//
//   - SciFact (the model alone 0.227): 0.7087 / 0.6865 / 0.7107
//   - Go code search, 51,217 functions (alone 0.106): 0.4930 / 0.5018 / 0.4949
//   - questions from prometheus' docs: 0.8589 / 0.9063 / 0.8962
//   - questions from task's docs: 0.8096 / 0.8446 / 0.8278
//
// The fixed weight gains more where the model is good and loses where it
// is not. A floor under the weight (0.3 plus 0.4 times the share) kept
// more of the gains (0.7103, 0.4987, 0.8964, 0.8297), as did 0.5 plus
// 0.2 times it on the docs (0.9008, 0.8368), but that one fell below
// keyword on SciFact (0.7030), and any floor lets a model that agrees
// with nothing move the ranking. A model that ranks unrelated documents
// agrees with BM25 on next to nothing and so moves the ranking little,
// whatever the corpus; one that finds what the words find gets close to
// the seed's weight and decides among them. When no query term matches
// a document the semantic side alone can rank, and its weight is 1.
func SemanticWeight(semTop, kwTop []Hit) float64 {
	matched := 0
	for _, h := range kwTop {
		if h.Score > KeywordFloor {
			matched++
		}
	}
	if matched == 0 {
		return 1
	}
	n := min(AgreementDepth, matched, len(semTop))
	if n == 0 {
		return HybridSemanticWeight
	}
	top := make(map[string]bool, n)
	for _, h := range kwTop[:n] {
		top[h.ID] = true
	}
	shared := 0
	for _, h := range semTop[:n] {
		if top[h.ID] {
			shared++
		}
	}
	return HybridSemanticWeight * math.Sqrt(float64(shared)/float64(n))
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
