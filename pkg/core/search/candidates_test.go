package search

import (
	"math"
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

// The semantic side's weight follows its agreement with the keyword side:
// the seed's 70 % when their tops are the same documents, none when they
// share none, the square root between; 1 when no query term matches, so
// the semantic side still ranks; the share counts only as deep as the
// shorter side.
func TestSemanticWeightFollowsAgreement(t *testing.T) {
	hits := func(ids ...string) []Hit {
		out := make([]Hit, len(ids))
		for i, id := range ids {
			out[i] = Hit{ID: id, Score: float64(len(ids) - i)}
		}
		return out
	}
	ten := func(prefix string) []Hit {
		var ids []string
		for i := range AgreementDepth {
			ids = append(ids, prefix+string(rune('a'+i)))
		}
		return hits(ids...)
	}
	cases := []struct {
		name          string
		semTop, kwTop []Hit
		want          float64
	}{
		{"same top", ten("d"), ten("d"), HybridSemanticWeight},
		{"disjoint tops", ten("s"), ten("k"), 0},
		{"a quarter shared", hits("a", "x", "y", "z"), hits("a", "b", "c", "d"), HybridSemanticWeight * 0.5},
		{"no keyword match", ten("s"), []Hit{{"k", KeywordFloor}}, 1},
		{"nothing either side", nil, nil, 1},
		{"no semantic hits", nil, ten("k"), HybridSemanticWeight},
	}
	for _, c := range cases {
		if got := SemanticWeight(c.semTop, c.kwTop); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: SemanticWeight = %v, want %v", c.name, got, c.want)
		}
	}
	// Disjoint tops: hybrid is keyword's order, whatever the cosines.
	sem, kw := hits("s1", "s2", "k2"), hits("k1", "k2", "k3")
	cos := map[string]float64{"s1": 0.9, "s2": 0.8, "k2": 0.7, "k1": 0.1, "k3": 0.1}
	bm := map[string]float64{"k1": 3, "k2": 2, "k3": 1}
	got := FuseHybrid(sem[:2], kw, lookup(cos), lookup(bm))
	if len(got) < 3 || got[0].ID != "k1" || got[1].ID != "k2" || got[2].ID != "k3" {
		t.Errorf("hybrid with disjoint tops: %v, want keyword's order", got)
	}
}
