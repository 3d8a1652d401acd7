package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
)

// TestMetricsReportTheEdgeCache reads a document twice, changes it and
// reads it again, and finds on /metrics the L2 hit, the two misses, the
// invalidation, the bytes held and the cap.
func TestMetricsReportTheEdgeCache(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	rev := putDoc(t, conn, docRecord("app", "docs/guide.md", "# Guide\n\nHow to deploy.\n"))
	e := startEdge(t, conn, nil)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.mat.WaitRevision(wctx, rev); err != nil {
		t.Fatal(err)
	}
	edg := edge.New(e.mat, nil, edge.WithCache(tiercache.Config{MaxBytes: 1 << 20}))
	e.metrics.RegisterEdgeCache(edg)
	read := func() {
		t.Helper()
		if _, err := edg.Call(ctx, tools.ReadDoc, json.RawMessage(`{"path":"docs/guide.md"}`)); err != nil {
			t.Fatal(err)
		}
	}
	read()
	read()
	rev = putDoc(t, conn, docRecord("app", "docs/guide.md", "# Guide\n\nHow to deploy, again.\n"))
	if err := e.mat.WaitRevision(wctx, rev); err != nil {
		t.Fatal(err)
	}
	read()
	fams := scrape(t, e.url)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cue_edge_cache_hits_total", []string{"level", "L2"}, 1},
		{"cue_edge_cache_misses_total", []string{"level", "L2"}, 2},
		{"cue_edge_cache_hit_ratio", []string{"level", "L2"}, 1.0 / 3},
		{"cue_edge_cache_evictions_total", []string{"level", "L2", "reason", "invalidated"}, 1},
		{"cue_edge_cache_evictions_total", []string{"level", "L2", "reason", "cap"}, 0},
		{"cue_edge_cache_entries", []string{"level", "L2"}, 1},
		{"cue_edge_cache_hits_total", []string{"level", "L4"}, 0},
		{"cue_edge_cache_max_bytes", nil, 1 << 20},
	} {
		if got := mustValue(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if b := mustValue(t, fams, "cue_edge_cache_bytes", "level", "L2"); b < float64(tiercache.EntryOverhead) {
		t.Errorf("L2 holds %v bytes, less than one entry's overhead", b)
	}
	if p := mustValue(t, fams, "cue_edge_cache_peak_bytes"); p < mustValue(t, fams, "cue_edge_cache_bytes", "level", "L2") {
		t.Errorf("peak %v below what L2 holds", p)
	}
}
