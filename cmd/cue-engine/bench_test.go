package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bench"
	"github.com/cuedeck/cuedeck/internal/hook"
)

// TestBenchCommandReportsEveryFigure runs `cue bench` end to end through
// the front on a tiny corpus and checks that the JSON report holds every
// figure with sane values. Nothing here asserts a speed.
func TestBenchCommandReportsEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two daemons")
	}
	cmd := exec.Command(bin("cue"), "bench", "--files", "60", "--seed", "3", "--debounce", "50ms", "--json", "-", "--out", t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue bench: %v\n%s", err, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	// Off a terminal, a line per phase, and the table on stderr since
	// stdout has the JSON.
	wants := []string{"bench: ingest to searchable", "bench: freshness", "read_context_semantic"}
	if _, err := exec.LookPath("rg"); err == nil {
		wants = append(wants, "ratio")
	} else {
		wants = append(wants, "skipped ripgrep: ripgrep not found")
	}
	for _, want := range wants {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	if rep.Corpus.Files != 60 || rep.Settings.Files != 60 || rep.Settings.Transport != "nats-query" || rep.Corpus.Cards < 1 {
		t.Errorf("corpus/settings: %+v %+v", rep.Corpus, rep.Settings)
	}
	for _, name := range bench.LatencyOrder {
		l := rep.Latency[name]
		if l == nil {
			t.Errorf("no %s figure", name)
			continue
		}
		if l.Count < 30 || l.Min <= 0 || l.Min > l.P50 || l.P50 > l.P90 || l.P90 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s: %+v", name, *l)
		}
	}
	if in := rep.Ingest; in == nil || in.Files != 60 || in.FilesPerSec <= 0 || in.Seconds <= 0 || in.StoredSeconds > in.Seconds {
		t.Errorf("ingest: %+v", rep.Ingest)
	}
	if e := rep.Embedding; e == nil || e.Chunks == 0 || e.VectorsPer <= 0 {
		t.Errorf("embedding: %+v", rep.Embedding)
	}
	if e := rep.Embedded; e == nil || e.Files < 50 || e.FilesPerSec <= 0 || e.Model != "builtin:use-lite" {
		t.Errorf("embedded corpus: %+v", rep.Embedded)
	}
	if x := rep.Extraction; x == nil || x.Batches == 0 || x.BatchesPer <= 0 || x.Path != "rules" {
		t.Errorf("extraction: %+v", rep.Extraction)
	}
	if _, err := exec.LookPath("rg"); err != nil {
		if rep.Ripgrep != nil || !skipped(rep, "ripgrep", "apt-get install ripgrep") {
			t.Errorf("without rg on PATH: ripgrep %+v, skipped %+v", rep.Ripgrep, rep.Skipped)
		}
	} else {
		rg := rep.Ripgrep
		if rg == nil || len(rg.Queries) != len(rep.Corpus.Queries) || rg.MedianRatio <= 0 {
			t.Fatalf("ripgrep: %+v", rg)
		}
		for _, q := range rg.Queries {
			if q.Samples < 30 || q.RgP50 <= 0 || q.ReadContextP50 <= 0 || q.Ratio <= 0 {
				t.Errorf("ripgrep query %+v", q)
			}
		}
	}
	if len(rep.Skipped) > 0 && rep.Ripgrep != nil {
		t.Errorf("figures skipped with rg and the front at hand: %+v", rep.Skipped)
	}
	// 6 decimals of milliseconds in the JSON, as seed 003 §11 asks.
	if !strings.Contains(string(out), `"p50_ms": `) || strings.Contains(string(out), "e-0") {
		t.Errorf("milliseconds not written as fixed decimals:\n%s", out)
	}
}

func skipped(rep bench.Report, figure, reason string) bool {
	for _, s := range rep.Skipped {
		if s.Figure == figure && strings.Contains(s.Reason, reason) {
			return true
		}
	}
	return false
}

func TestBenchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "choose a corpus size with --size (1k, 10k, 50k)"},
		{[]string{"--size", "5k"}, `--size "5k": use one of 1k, 10k, 50k`},
		{[]string{"--size", "1k", "--files", "100"}, "give --size or --files, not both"},
		{[]string{"--files", "10"}, "at least 50 files"},
		{[]string{"--size", "1k", "--seed", "-4"}, `--seed "-4": give a non-negative integer`},
		{[]string{"--size", "1k", "--seed", "x"}, `--seed "x"`},
		{[]string{"--size", "1k", "--debounce", "-1s"}, "--debounce -1s"},
		{[]string{"--size", "1k", "--log-level", "loud"}, "use debug, info, warn or error"},
		{[]string{"--size", "1k", "--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"--size", "1k", "extra"}, `unexpected argument "extra"`},
		{[]string{"--size", "1k", "--json", "/nonexistent-dir/report.json"}, "--json"},
	} {
		err := cmdBench(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cue bench %v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// Run where no `cue` front sits beside the binary (the test binary's
// directory), the hook figure's skip names what is missing.
func TestFindFrontSaysWhenMissing(t *testing.T) {
	t.Setenv(hook.FrontEnv, "")
	p, why := findFront()
	if p != "" || !strings.Contains(why, "not found next to cue-engine") || !strings.Contains(why, "make build") {
		t.Fatalf("findFront: %q, %q", p, why)
	}
	t.Setenv(hook.FrontEnv, bin("cue"))
	if p, why := findFront(); p != bin("cue") || why != "" {
		t.Fatalf("findFront with %s set: %q, %q", hook.FrontEnv, p, why)
	}
}
