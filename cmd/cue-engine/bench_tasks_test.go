package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bench"
)

// TestBenchTasksReportsEveryLevel runs `cue bench --tasks` through the
// front, six clients on one edge and on two (the second a daemon, then an
// mcp-edge, on the first one's NATS server), and checks that every level
// wrote, failed nothing and lost or duplicated nothing in the task log.
// No speed is asserted.
func TestBenchTasksReportsEveryLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five edges")
	}
	rep, stderr := runBenchTasks(t, "--clients", "6", "--edges", "1,2")
	for _, want := range []string{"bench: start 2 edge(s) for 6 clients", "bench: read the task log", "create99", "writes/s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if rep.Model != "none" || !strings.HasSuffix(rep.Daemon, " up") || rep.SecondEdge != bench.SecondEdgeDaemon || len(rep.Levels) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	checkLevels(t, rep, [][2]int{{1, 6}, {2, 6}})

	// The second edge an mcp-edge, as a team runs them.
	rep, _ = runBenchTasks(t, "--clients", "6", "--edges", "2", "--second-edge", "mcp-edge")
	if rep.SecondEdge != bench.SecondEdgeMCPEdge || len(rep.Levels) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	checkLevels(t, rep, [][2]int{{2, 6}})
}

// runBenchTasks runs `cue bench --tasks` with args for 2 s a level.
func runBenchTasks(t *testing.T, args ...string) (bench.TasksReport, string) {
	t.Helper()
	cmd := exec.Command(bin("cue"), append([]string{"bench", "--tasks", "--duration", "2s", "--json", "-", "--out", t.TempDir()}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue bench --tasks %v: %v\n%s", args, err, stderr.String())
	}
	var rep bench.TasksReport
	if err := json.Unmarshal(stdout, &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	return rep, stderr.String()
}

// checkLevels requires the levels want (edges, clients), each of which
// wrote, failed nothing, and lost or duplicated nothing.
func checkLevels(t *testing.T, rep bench.TasksReport, want [][2]int) {
	t.Helper()
	for i, l := range rep.Levels {
		if l.Edges != want[i][0] || l.Clients != want[i][1] {
			t.Errorf("level %d: %d edges, %d clients, want %v", i, l.Edges, l.Clients, want[i])
		}
		if l.Creates == 0 || l.Updates == 0 || l.WritesPerSecond <= 0 || l.CreateP50Ms <= 0 || l.CreateP99Ms < l.CreateP50Ms || l.UpdateP99Ms < l.UpdateP50Ms {
			t.Errorf("level %d: %+v", i, l)
		}
		if l.Failures != 0 || l.Lost != 0 || l.Duplicated != 0 {
			t.Errorf("level %d: %d failures (%v), %d acknowledged writes lost, %d duplicated", i, l.Failures, l.FailureKinds, l.Lost, l.Duplicated)
		}
	}
}

func TestBenchTasksBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tasks", "--size", "1k"}, "--size is for another bench"},
		{[]string{"--tasks", "--repo", "goroot"}, "--repo is for another bench"},
		{[]string{"--tasks", "--clients", "0"}, `--clients "0"`},
		{[]string{"--tasks", "--clients", "1,x"}, `--clients "1,x"`},
		{[]string{"--tasks", "--edges", "3"}, "--edges 3: give 1 or 2"},
		{[]string{"--tasks", "--duration", "10ms"}, "--duration 10ms"},
		{[]string{"--tasks", "--second-edge", "pod"}, `--second-edge "pod": use daemon or mcp-edge`},
		{[]string{"--size", "1k", "--clients", "8"}, "--clients goes with --tasks"},
		{[]string{"--tasks", "--json", "/nonexistent-dir/report.json"}, "--json"},
	} {
		err := cmdBench(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cue bench %v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
