package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bench"
)

// TestBenchSavingsCommand runs `cue bench --savings` through the front:
// the table goes to stderr when the JSON goes to stdout, and the JSON is
// the report of the fixed scenario.
func TestBenchSavingsCommand(t *testing.T) {
	cmd := exec.Command(bin("cue"), "bench", "--savings", "--json", "-")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue bench --savings: %v\n%s", err, stderr.String())
	}
	var rep bench.Savings
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	if rep.RepoFiles != bench.SavingsRepoFiles || len(rep.Files) != bench.SavingsTaskFiles || rep.Budget != bench.SavingsBudget {
		t.Errorf("report: %+v", rep)
	}
	if !(rep.Whole > rep.Outlined.Tokens && rep.Outlined.Tokens > rep.Repeat.Tokens && rep.Func.OutlineTokens < rep.Func.Tokens) {
		t.Errorf("figures out of order: whole %d, outlined %d, repeat %d, function %d/%d", rep.Whole, rep.Outlined.Tokens, rep.Repeat.Tokens, rep.Func.Tokens, rep.Func.OutlineTokens)
	}
	for _, want := range []string{"Token savings", "(a) the files whole", "(b) scene without outlines", "(c) scene with outlines", "(d) same session again", "(e) one Go function", rep.Files[0].Path} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stderr.String())
		}
	}
	if err := cmdBench([]string{"--savings", "--seed", "x"}); err == nil || !strings.Contains(err.Error(), `--seed "x"`) {
		t.Errorf("--savings --seed x: %v", err)
	}
}
