package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

func TestLatencyJSONHasSixDecimals(t *testing.T) {
	var s stats.LatencySummary
	for _, v := range []float64{0.0000014, 2, 1.5} {
		s.Record(v)
	}
	b, err := json.Marshal(latencyOf(&s, "main", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":3,"p50_ms":1.500000,"p90_ms":2.000000,"p95_ms":2.000000,"p99_ms":2.000000,"min_ms":0.000001,"max_ms":2.000000,"corpus":"main"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestProgressOffATerminalWritesALinePerPhase(t *testing.T) {
	var w strings.Builder
	p := NewProgress(&w, false)
	p.Start("ingest", 10)
	for range 10 {
		p.Add()
	}
	p.Start("stop", 0)
	p.Finish()
	p.Finish()
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "ingest") || !strings.Contains(lines[0], "10/10") || !strings.Contains(lines[1], "stop") {
		t.Fatalf("%q", w.String())
	}
	if strings.Contains(w.String(), "\r") {
		t.Fatal("carriage return off a terminal")
	}
}

func TestProgressOnATerminalRedrawsABar(t *testing.T) {
	var w strings.Builder
	p := NewProgress(&w, true)
	p.Start("ingest", 4)
	p.Set(2)
	p.Finish()
	out := w.String()
	if !strings.HasPrefix(out, "\r") || !strings.Contains(out, "[###############...............] 2/4") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("%q", out)
	}
	var nilP *Progress
	nilP.Start("x", 1) // silent, no panic
	nilP.Add()
	nilP.Finish()
}

func TestReportTableNamesEveryFigure(t *testing.T) {
	r := &Report{Latency: map[string]*Latency{}, Ripgrep: &Ripgrep{Version: "ripgrep 13", Queries: []QueryRatio{{Query: "auth token", RgP50: 10, ReadContextP50: 1, Ratio: 10}}, MedianRatio: 10},
		Ingest: &Ingest{Files: 10, Seconds: 1, FilesPerSec: 10}, Skipped: []Skip{{Figure: "hook_round_trip", Reason: "no front"}}}
	for _, n := range LatencyOrder {
		r.Latency[n] = &Latency{Count: 30, P50: 1, Corpus: "main"}
	}
	var w strings.Builder
	if err := r.WriteTable(&w); err != nil {
		t.Fatal(err)
	}
	for _, want := range append(LatencyOrder, `"auth token"`, "median ratio 10.0", "skipped hook_round_trip: no front", "10 files searchable") {
		if !strings.Contains(w.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, w.String())
		}
	}
}
