package daemon

import (
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

func reportLatency(b *testing.B, lat []time.Duration) {
	var s stats.LatencySummary
	for _, d := range lat {
		s.RecordDuration(d)
	}
	sum := s.Summary()
	b.ReportMetric(sum.P50, "p50-ms")
	b.ReportMetric(sum.P99, "p99-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("latency (ms): %s", sum)
}
