package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The daemons would read the developer's config and sessions under
	// $HOME; the bench turns transcript tailing off, and a home of the
	// test's own makes sure.
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// Run in-process without the front and ripgrep: every other figure is
// there, and the two missing ones are named with their reasons.
func TestRunSaysWhatItSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two daemons")
	}
	var progress strings.Builder
	dir := t.TempDir()
	rep, err := Run(context.Background(), Options{
		Files: 60, Seed: 5, Dir: dir, Samples: 30, Debounce: 20 * time.Millisecond,
		EmbedChunks: 4, ExtractBatches: 20,
		FrontMissing: "no front here", RipgrepMissing: "ripgrep not found: apt-get install ripgrep",
		Progress: NewProgress(&progress, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ripgrep != nil || rep.Latency["hook_round_trip"] != nil {
		t.Fatalf("measured what it could not: %+v %+v", rep.Ripgrep, rep.Latency["hook_round_trip"])
	}
	want := map[string]string{"ripgrep": "apt-get install ripgrep", "hook_round_trip": "no front here"}
	for _, s := range rep.Skipped {
		if strings.Contains(s.Reason, want[s.Figure]) {
			delete(want, s.Figure)
		}
	}
	if len(want) > 0 {
		t.Fatalf("skips not reported: %v in %+v", want, rep.Skipped)
	}
	for _, name := range LatencyOrder {
		if l := rep.Latency[name]; name != "hook_round_trip" && (l == nil || l.Count < 30) {
			t.Errorf("%s: %+v", name, l)
		}
	}
	if rep.Ingest == nil || rep.Extraction == nil || rep.Embedding == nil || rep.Embedded == nil {
		t.Fatalf("throughputs missing: %+v", rep)
	}
	// Without --keep the corpora are gone, and --out itself stays.
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Fatalf("left in %s: %v %v", dir, entries, err)
	}
	if !strings.Contains(progress.String(), "bench: ingest to searchable") {
		t.Errorf("progress: %s", progress.String())
	}
}
