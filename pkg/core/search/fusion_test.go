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

func TestFuseWeightedNormalisesPerQuery(t *testing.T) {
	semantic := []Hit{{"a", 0.91}, {"b", 0.90}, {"c", 0.10}}
	keyword := []Hit{{"c", 42}, {"b", 21}, {"a", 0}}
	got := FuseWeighted(semantic, keyword, HybridSemanticWeight, HybridKeywordWeight)
	score := map[string]float64{}
	for _, h := range got {
		score[h.ID] = h.Score
	}
	// a: 0.7·1 + 0.3·0; b: 0.7·(0.80/0.81) + 0.3·0.5; c: 0.7·0 + 0.3·1.
	wantB := 0.7*(0.80/0.81) + 0.3*0.5
	if math.Abs(score["a"]-0.7) > 1e-12 || math.Abs(score["b"]-wantB) > 1e-12 || math.Abs(score["c"]-0.3) > 1e-12 {
		t.Fatalf("scores %v", score)
	}
	if got[0].ID != "b" || got[1].ID != "a" {
		t.Fatalf("order %v", got)
	}
	// Without normalisation BM25's 42 would swamp every cosine; the keyword
	// weight must cap keyword-only hits at 0.3.
	if score["c"] > HybridKeywordWeight+1e-12 {
		t.Fatal("keyword-only hit exceeded its weight")
	}
}

func TestFuseWeightedSingleScoreList(t *testing.T) {
	got := FuseWeighted([]Hit{{"a", 0.5}}, nil, 0.7, 0.3)
	if len(got) != 1 || got[0].Score != 0.7 {
		t.Fatalf("one hit normalises to 1: %v", got)
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
