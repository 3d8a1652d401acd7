package search

import (
	"testing"
)

func lookup(m map[string]float64) ScoreOf {
	return func(id string) (float64, bool) { s, ok := m[id]; return s, ok }
}

func TestCandidatesCarryBothScores(t *testing.T) {
	semTop := []Hit{{"a", 0.9}, {"b", 0.5}}
	kwTop := []Hit{{"c", 12}, {"a", 3}}
	sem, kw := Candidates(semTop, kwTop,
		lookup(map[string]float64{"a": 0.9, "b": 0.5, "c": 0.1}),
		lookup(map[string]float64{"c": 12, "a": 3}))
	want := map[string][2]float64{"a": {0.9, 3}, "b": {0.5, 0}, "c": {0.1, 12}}
	if len(sem) != 3 || len(kw) != 3 {
		t.Fatalf("candidates %v %v", sem, kw)
	}
	for i := range sem {
		w := want[sem[i].ID]
		if kw[i].ID != sem[i].ID || sem[i].Score != w[0] || kw[i].Score != w[1] {
			t.Errorf("candidate %d: %v %v, want %v", i, sem[i], kw[i], w)
		}
	}
}

// A document without vectors takes the candidates' mean cosine, not the
// floor that would bury it under every embedded document.
func TestCandidatesImputeMissingSemanticScores(t *testing.T) {
	sem, _ := Candidates([]Hit{{"a", 0.8}, {"b", 0.4}}, []Hit{{"new", 9}},
		lookup(map[string]float64{"a": 0.8, "b": 0.4}), lookup(map[string]float64{"new": 9}))
	if sem[2].ID != "new" || sem[2].Score < 0.6-1e-9 || sem[2].Score > 0.6+1e-9 {
		t.Fatalf("imputed %v, want 0.6", sem[2])
	}
	// With strong keyword evidence it now leads; at the floor it would not.
	got := FuseHybrid([]Hit{{"a", 0.8}, {"b", 0.4}}, []Hit{{"new", 9}, {"a", 1}},
		lookup(map[string]float64{"a": 0.8, "b": 0.4}), lookup(map[string]float64{"new": 9, "a": 1}))
	if got[0].ID != "new" {
		t.Fatalf("hybrid %v: the unembedded keyword match should lead", got)
	}
}

func TestFuseCandidatesRRFRanksOnlyMatchedKeywords(t *testing.T) {
	got := FuseCandidatesRRF([]Hit{{"x", 0.9}, {"y", 0.8}}, []Hit{{"y", 5}},
		lookup(map[string]float64{"x": 0.9, "y": 0.8}), lookup(map[string]float64{"y": 5}))
	// y: 1/62 + 1/61; x: 1/61 only, since it matches no query term.
	if len(got) != 2 || got[0].ID != "y" || got[1].ID != "x" {
		t.Fatalf("rrf %v", got)
	}
}
