package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// `cue tasks` lists the board through the running daemon: every task, the
// ready ones and the blocked ones; without a daemon it says how to start
// one.
func TestTasksCommand(t *testing.T) {
	root := t.TempDir()
	cue(t, "init", "--workspace", root)
	newCard := func(args ...string) string {
		t.Helper()
		p := strings.TrimSpace(cue(t, append([]string{"card", "new", "--workspace", root}, args...)...))
		return strings.TrimSuffix(filepath.Base(p), ".md")
	}
	first := newCard("Schema migration")
	second := newCard("Backfill the new column", "--depends-on", first)
	third := newCard("Drop the old column", "--depends-on", second)
	// The first is done: its card file says so.
	p := filepath.Join(root, ".cuedeck", "cards", first+".md")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "status: todo", "status: done", 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	d := startUp(t, root)
	defer d.kill()
	bustest.Eventually(t, 60*time.Second, "the three tasks on the board, the first done", func() bool {
		out, err := exec.Command(bin("cue"), "tasks", "list", "--json", "--workspace", root).Output()
		var rows []tools.TaskSummary
		if err != nil || json.Unmarshal(out, &rows) != nil || len(rows) != 3 {
			return false
		}
		for _, r := range rows {
			if r.ID == first {
				return r.Status == "done"
			}
		}
		return false
	})
	ready := cue(t, "tasks", "ready", "--workspace", root)
	if !strings.Contains(ready, second) || strings.Contains(ready, first) || strings.Contains(ready, third) {
		t.Errorf("cue tasks ready:\n%s\nwant only %s", ready, second)
	}
	if !strings.Contains(ready, "Backfill the new column") || !strings.Contains(ready, "todo") {
		t.Errorf("cue tasks ready does not show the task's status and title:\n%s", ready)
	}
	blocked := cue(t, "tasks", "blocked", "--workspace", root)
	if !strings.Contains(blocked, third) || strings.Contains(blocked, second) {
		t.Errorf("cue tasks blocked:\n%s\nwant only %s", blocked, third)
	}

	idle := t.TempDir()
	cue(t, "init", "--workspace", idle)
	msg, err := exec.Command(bin("cue"), "tasks", "ready", "--workspace", idle).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "cue up --detach") {
		t.Errorf("cue tasks without a daemon: %v\n%s", err, msg)
	}
}
