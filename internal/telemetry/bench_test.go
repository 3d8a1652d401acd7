package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// BenchmarkInstrumentOverhead is what the middleware adds to every tool
// call: a no-op tool timed in batches of 100 calls, reported per call.
func BenchmarkInstrumentOverhead(b *testing.B) {
	m := telemetry.NewMetrics()
	out := json.RawMessage(`{}`)
	caller := m.Instrument(tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return out, nil
	}))
	ctx, args := context.Background(), json.RawMessage(`{"path":"a.md"}`)
	const batch = 100
	var lat stats.LatencySummary
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for range batch {
			caller.Call(ctx, tools.ReadDoc, args)
		}
		lat.Record(float64(time.Since(start).Nanoseconds()) / batch / 1000)
	}
	s := lat.Summary()
	b.ReportMetric(s.P50, "p50-µs/call")
	b.ReportMetric(s.P99, "p99-µs/call")
}
