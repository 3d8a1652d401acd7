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

// `cue tasks` works on the board through the running daemon: lists every
// task, the ready ones and the blocked ones; shows one with its links;
// starts and finishes tasks (with a reason), comments on them and adds
// and removes dependency edges through the task log (the card file
// follows; a cycle exits 2 naming its path);
// without a daemon it says how to start one.
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

	show := cue(t, "tasks", "show", second, "--workspace", root)
	for _, want := range []string{"Backfill the new column", "depends on", first, "needed by", third} {
		if !strings.Contains(show, want) {
			t.Errorf("cue tasks show %s lacks %q:\n%s", second, want, show)
		}
	}
	if out := cue(t, "tasks", "start", second, "--workspace", root); !strings.Contains(out, "active") {
		t.Errorf("cue tasks start: %s", out)
	}
	// The write went through the task log: the card file follows.
	card := filepath.Join(root, ".cuedeck", "cards", second+".md")
	bustest.Eventually(t, 30*time.Second, "the started task's card written back as active", func() bool {
		data, err := os.ReadFile(card)
		return err == nil && strings.Contains(string(data), "status: active")
	})
	// first → third would close first → third → second → first.
	cmd := exec.Command(bin("cue"), "tasks", "dep", "add", first, third, "--workspace", root)
	msg, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(msg), third) {
		t.Errorf("cue tasks dep add closing a cycle: %v (want exit 2 naming the path)\n%s", err, msg)
	}
	cue(t, "tasks", "dep", "rm", third, second, "--workspace", root)
	cue(t, "tasks", "dep", "add", third, first, "--workspace", root)
	cue(t, "tasks", "comment", second, "Backfilled", "the first 10k rows;", "--workspace", root, "the rest tonight")
	cue(t, "tasks", "done", second, "--reason", "backfilled every row", "--workspace", root)
	show = cue(t, "tasks", "show", second, "--workspace", root)
	for _, want := range []string{"done: backfilled every row", "comments (1)", "    Backfilled the first 10k rows; the rest tonight\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("cue tasks show %s after a comment and done --reason lacks %q:\n%s", second, want, show)
		}
	}
	// The card file follows: ingest writes the close reason and the
	// comment back, and the indexer reads them from it as they were.
	secondCard := filepath.Join(root, ".cuedeck", "cards", second+".md")
	bustest.Eventually(t, 30*time.Second, "the close reason and the comment in the card file", func() bool {
		data, err := os.ReadFile(secondCard)
		return err == nil && strings.Contains(string(data), "close_reason: backfilled every row\n") &&
			strings.Contains(string(data), "text: Backfilled the first 10k rows; the rest tonight\n")
	})
	if msg, err := exec.Command(bin("cue"), "tasks", "done", third, "--reason", "", "--workspace", root, "extra").CombinedOutput(); err == nil {
		t.Errorf("cue tasks done with two ids: no error\n%s", msg)
	}
	var shown struct {
		Task         tools.TaskDetail `json:"task"`
		Dependencies []tools.TaskLink `json:"dependencies"`
	}
	if err := json.Unmarshal([]byte(cue(t, "tasks", "show", third, "--json", "--workspace", root)), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.Dependencies) != 1 || shown.Dependencies[0].ID != first {
		t.Errorf("after dep rm %s %s and dep add %s %s: %s depends on %+v, want only %s", third, second, third, first, third, shown.Dependencies, first)
	}
	if ready := cue(t, "tasks", "ready", "--workspace", root); !strings.Contains(ready, third) {
		t.Errorf("with its one dependency done, %s is not ready:\n%s", third, ready)
	}

	idle := t.TempDir()
	cue(t, "init", "--workspace", idle)
	msg, err = exec.Command(bin("cue"), "tasks", "ready", "--workspace", idle).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "cue up --detach") {
		t.Errorf("cue tasks without a daemon: %v\n%s", err, msg)
	}
}
