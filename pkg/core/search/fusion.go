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

// Theoretical minimums of the scores FuseWeighted normalises: the least
// score each side can give any document, whatever the query.
const (
	// SemanticFloor is the least cosine similarity.
	SemanticFloor = -1.0
	// KeywordFloor is the least BM25F score: no query term matches.
	KeywordFloor = 0.0
)

// FuseWeighted merges semantic and keyword hits as seed 002's hybrid mode:
// semanticWeight·s + keywordWeight·k, where each side's score is first
// normalised per query by theoretical min-max, (score − floor)/(best −
// floor), floor being SemanticFloor or KeywordFloor and best the side's
// top score for the query. BM25 scores are unbounded and cosines are not,
// so some normalisation is needed; this one (TMM in Bruch, Gai and Ingber,
// "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023)
// was chosen over min-max on the observed scores for two reasons the
// paper discusses. Min-max stretches
// whatever spread a side has to [0, 1], so a weak model whose cosines for
// the candidates differ by a few hundredths weighs as much as a clear
// keyword match; TMM keeps each side's spread on the scale of the scores
// it could give, so a side that barely tells the candidates apart moves
// the ranking little. And min-max depends on the worst candidate, so
// adding or dropping one reorders the rest; TMM does not. On BEIR SciFact
// with the built-in model, over the same candidates, min-max gave nDCG@10
// 0.63 and TMM 0.70 (keyword alone 0.700); z-scores gave 0.63 and a
// cosine floor of 0 rather than −1 gave 0.68. (Those figures are from
// when `cue eval` embedded titled passages of its own; through the
// daemon, see SemanticWeight.)
//
// Pass both lists over the same candidates, each with its own score for
// every candidate (a document no query term matches scores KeywordFloor);
// an id missing from a list is taken to score the floor and gets 0 from
// it, which underrates it unless it truly does. A side whose best score is
// its floor adds 0 to every hit. Scores are clamped to [0, 1] after
// normalising, should a caller pass a score below the floor.
func FuseWeighted(semantic, keyword []Hit, semanticWeight, keywordWeight float64) []Hit {
	scores := make(map[string]float64, len(semantic)+len(keyword))
	for _, part := range []struct {
		hits  []Hit
		w     float64
		floor float64
	}{{semantic, semanticWeight, SemanticFloor}, {keyword, keywordWeight, KeywordFloor}} {
		best := part.floor
		for _, h := range part.hits {
			best = math.Max(best, h.Score)
		}
		for _, h := range part.hits {
			norm := 0.0
			if best > part.floor {
				norm = min(max((h.Score-part.floor)/(best-part.floor), 0), 1)
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
// semantic ones, and anything else is hybrid. It reads the query as
// written: the words that route it ("how does", "what calls") are function
// words that keyword search leaves out (QueryTerms), and still route it.
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
