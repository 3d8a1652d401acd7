package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// BenchmarkRoundTrip measures one read_context-sized call over NATS
// request/reply between two connections: arguments of a typical query, a
// reply of five hits. The tool itself answers from memory, so the figure is
// the transport's cost. p50-ns/op is the median of the individual calls.
func BenchmarkRoundTrip(b *testing.B) {
	hits := make([]tools.ContextHit, 5)
	for i := range hits {
		hits[i] = tools.ContextHit{
			Path:    fmt.Sprintf("docs/section-%d/design-notes.md", i),
			Hash:    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			Tokens:  1200 + i,
			Anchors: []string{"Login Flow", "OAuth Configuration", "Token Refresh"},
			Score:   0.9 - float64(i)/10,
		}
	}
	result, err := json.Marshal(hits)
	if err != nil {
		b.Fatal(err)
	}
	caller := tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return result, nil
	})
	e := newEnv(b)
	e.serve(caller, query.Options{})
	c := e.client(query.ClientOptions{})
	args := json.RawMessage(`{"query":"auth flow token refresh","limit":5,"mode":"hybrid"}`)
	ctx := context.Background()

	var lat stats.LatencySummary
	b.SetBytes(int64(len(args) + len(result)))
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := c.Call(ctx, tools.ReadContext, args); err != nil {
			b.Fatal(err)
		}
		lat.RecordDuration(time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(lat.Percentile(50)*1e6, "p50-ns/op")
	b.ReportMetric(lat.Percentile(99)*1e6, "p99-ns/op")
}
