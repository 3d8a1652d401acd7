package search

import (
	"fmt"
	"math"
	"testing"
)

func hits(ids ...string) []Hit {
	out := make([]Hit, len(ids))
	for i, id := range ids {
		out[i] = Hit{ID: id, Score: float64(100 - i)}
	}
	return out
}

func TestFuseRRFMatchesSeedFormula(t *testing.T) {
	got := FuseRRF(0, hits("a", "b", "c"), hits("c", "a"))
	want := map[string]float64{
		"a": 1.0/61 + 1.0/62,
		"b": 1.0 / 62,
		"c": 1.0/63 + 1.0/61,
	}
	if len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	for _, h := range got {
		if math.Abs(h.Score-want[h.ID]) > 1e-15 {
			t.Errorf("%s: %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
	// a (61,62) beats c (63,61) beats b.
	if got[0].ID != "a" || got[1].ID != "c" || got[2].ID != "b" {
		t.Fatalf("order %v", got)
	}
}

func TestFuseRRFTiesByID(t *testing.T) {
	got := FuseRRF(60, hits("z"), hits("y"))
	if got[0].ID != "y" || got[1].ID != "z" {
		t.Fatalf("ties must break by id for determinism: %v", got)
	}
}

func fusedScores(hits []Hit) map[string]float64 {
	score := map[string]float64{}
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	return score
}

func TestFuseWeightedNormalisesFromTheoreticalMinimum(t *testing.T) {
	semantic := []Hit{{"a", 0.5}, {"b", 0.4}, {"c", -1}}
	keyword := []Hit{{"a", 0}, {"b", 10}, {"c", 20}}
	got := FuseWeighted(semantic, keyword, HybridSemanticWeight, HybridKeywordWeight)
	score := fusedScores(got)
	// Cosines count from −1 and BM25 from 0: a: 0.7·1 + 0.3·0;
	// b: 0.7·(1.4/1.5) + 0.3·0.5; c: 0.7·0 + 0.3·1.
	want := map[string]float64{"a": 0.7, "b": 0.7*1.4/1.5 + 0.3*0.5, "c": 0.3}
	for id, w := range want {
		if math.Abs(score[id]-w) > 1e-12 {
			t.Errorf("%s: %v, want %v", id, score[id], w)
		}
	}
	// Min-max on the observed cosines would stretch a's 0.1 lead over b to
	// a tenth of the whole range and rank a first.
	if got[0].ID != "b" || got[1].ID != "a" || got[2].ID != "c" {
		t.Fatalf("order %v", got)
	}
	// Normalisation must cap keyword-only strength at its weight however
	// large BM25 grows.
	if score["c"] > HybridKeywordWeight+1e-12 {
		t.Fatal("keyword score exceeded its weight")
	}
}

func TestFuseWeightedIgnoresTheWorstCandidate(t *testing.T) {
	semantic := []Hit{{"a", 0.6}, {"b", 0.5}}
	keyword := []Hit{{"a", 3}, {"b", 6}}
	before := fusedScores(FuseWeighted(semantic, keyword, 0.7, 0.3))
	after := fusedScores(FuseWeighted(append(semantic, Hit{"z", 0.1}), append(keyword, Hit{"z", 0}), 0.7, 0.3))
	for _, id := range []string{"a", "b"} {
		if math.Abs(before[id]-after[id]) > 1e-12 {
			t.Errorf("%s: %v with a weak extra candidate, %v without; a candidate's score must not depend on the others' minimum", id, after[id], before[id])
		}
	}
}

func TestFuseWeightedMissingScoresTheFloor(t *testing.T) {
	got := fusedScores(FuseWeighted([]Hit{{"a", 0.5}, {"b", 0.5}}, []Hit{{"a", 4}}, 0.7, 0.3))
	if math.Abs(got["a"]-1) > 1e-12 || math.Abs(got["b"]-0.7) > 1e-12 {
		t.Fatalf("a missing keyword score must count as 0: %v", got)
	}
}

func TestFuseWeightedSideAtItsFloorAddsNothing(t *testing.T) {
	got := FuseWeighted([]Hit{{"a", 0.2}, {"b", 0.3}}, []Hit{{"a", 0}, {"b", 0}}, 0.7, 0.3)
	score := fusedScores(got)
	if got[0].ID != "b" || math.Abs(score["b"]-0.7) > 1e-12 || math.Abs(score["a"]-0.7*1.2/1.3) > 1e-12 {
		t.Fatalf("no keyword match must leave the semantic order and scores: %v", got)
	}
	if got := FuseWeighted([]Hit{{"a", -1}}, nil, 0.7, 0.3); len(got) != 1 || got[0].Score != 0 {
		t.Fatalf("a cosine of −1 is the floor and scores 0: %v", got)
	}
}

func TestClassifier(t *testing.T) {
	for q, want := range map[string]Intent{
		"what calls Login":              IntentStructural,
		"Who imports internal/bus":      IntentStructural,
		"dependencies of scene":         IntentStructural,
		"the retry loop in file bus.go": IntentStructural,
		"how does the indexer ack":      IntentSemantic,
		"Explain the budget tracker":    IntentSemantic,
		"code similar to backoff":       IntentSemantic,
		"auth flow":                     IntentHybrid,
		"explain what calls Login":      IntentStructural,
	} {
		if got := DefaultClassifier.Classify(q); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
}

func BenchmarkFuseRRF1000(b *testing.B) {
	a, c := make([]Hit, 1000), make([]Hit, 1000)
	for i := range a {
		a[i] = Hit{ID: fmt.Sprintf("doc%d", i)}
		c[i] = Hit{ID: fmt.Sprintf("doc%d", (i*7919)%1500)}
	}
	b.ResetTimer()
	for b.Loop() {
		FuseRRF(RRFK, a, c)
	}
}
