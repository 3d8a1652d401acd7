// Package stats summarises latency samples the way seed 003 §11 specifies:
// nearest-rank percentiles (index ceil(p/100·n)−1 of the sorted samples),
// with p50, p90, p95 and p99. Benchmarks and `cue bench` report with it.
package stats

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// LatencySummary collects samples. It is not safe for concurrent use.
type LatencySummary struct {
	values []float64
	sorted bool
}

// Record adds one sample.
func (s *LatencySummary) Record(v float64) {
	s.values = append(s.values, v)
	s.sorted = false
}

// RecordDuration adds a duration in milliseconds.
func (s *LatencySummary) RecordDuration(d time.Duration) {
	s.Record(float64(d) / float64(time.Millisecond))
}

// Len is the number of samples.
func (s *LatencySummary) Len() int { return len(s.values) }

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100); 0 with no
// samples.
func (s *LatencySummary) Percentile(p float64) float64 {
	if len(s.values) == 0 {
		return 0
	}
	if !s.sorted {
		slices.Sort(s.values)
		s.sorted = true
	}
	i := int(math.Ceil(p/100*float64(len(s.values)))) - 1
	return s.values[max(0, min(i, len(s.values)-1))]
}

// Summary is the usual percentiles.
type Summary struct {
	P50, P90, P95, P99, Min, Max float64
	Count                        int
}

// Summary computes the summary.
func (s *LatencySummary) Summary() Summary {
	if len(s.values) == 0 {
		return Summary{}
	}
	return Summary{
		P50: s.Percentile(50), P90: s.Percentile(90), P95: s.Percentile(95), P99: s.Percentile(99),
		Min: s.Percentile(0), Max: s.Percentile(100), Count: len(s.values),
	}
}

func (m Summary) String() string {
	return fmt.Sprintf("n=%d p50=%.3f p90=%.3f p95=%.3f p99=%.3f min=%.3f max=%.3f", m.Count, m.P50, m.P90, m.P95, m.P99, m.Min, m.Max)
}
