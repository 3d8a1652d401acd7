package stats

import "testing"

func TestNearestRank(t *testing.T) {
	var s LatencySummary
	for _, v := range []float64{15, 20, 35, 40, 50} {
		s.Record(v)
	}
	// ceil(0.5*5)-1 = 2 → 35; ceil(0.9*5)-1 = 4 → 50; ceil(0.3*5)-1 = 1 → 20.
	for p, want := range map[float64]float64{50: 35, 90: 50, 30: 20, 100: 50, 0: 15} {
		if got := s.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	s.Record(1)
	if got := s.Summary(); got.Min != 1 || got.Count != 6 || got.P50 != 20 {
		t.Errorf("after a new sample the summary must re-sort: %+v", got)
	}
	var empty LatencySummary
	if empty.Percentile(50) != 0 || empty.Summary().Count != 0 {
		t.Error("empty summary")
	}
}
