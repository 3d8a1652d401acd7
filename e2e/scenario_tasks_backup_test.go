package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterTaskLogRestoredFromBackup: the team restores CUE_TASKS from
// a backup taken before some tasks were created and others changed over
// MCP. Ingest had written every change back into its card, and the cards
// are the tasks' truth once written: the restore must set no card back,
// the cards' tasks and states must reach the restored log again, and both
// edges must list every task as its card holds it.
func TestClusterTaskLogRestoredFromBackup(t *testing.T) {
	files := Corpus(13, "tb", scenarioRepos, 40)
	root := t.TempDir()
	dirs := writeRepos(t, root, files)
	repo := files[0].Repo
	// The ingest container writes cards as uid 65534.
	if err := filepath.WalkDir(dirs[repo], func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chmod(p, 0o777)
	}); err != nil {
		t.Fatal(err)
	}
	s := StartScenario(t, 6*time.Minute, ClusterOptions{Indexers: 1, Edges: 2, Repos: dirs, ReposWritable: true, EdgeRestart: true,
		IngestArgs: []string{"--reconcile-every", "5s"}})
	ctx, c, nc, js := s.Ctx, s.C, s.NC, s.JS

	status := map[string]string{} // task id → the status its card must hold
	create := func(title string) {
		t.Helper()
		r, err := c.EdgeCall(ctx, nc, 0, tools.CreateTask, tools.CreateTaskArgs{Title: title, Repo: repo, RequestID: "e2e-" + title})
		if err != nil || r.Error != nil {
			t.Fatalf("create_task %q: %v %+v", title, err, r.Error)
		}
		var made tools.CreateTaskResult
		if err := json.Unmarshal(r.Result, &made); err != nil {
			t.Fatal(err)
		}
		status[made.ID] = "todo"
	}
	update := func(id, to string) {
		t.Helper()
		r, err := c.EdgeCall(ctx, nc, 1, tools.UpdateTask, tools.UpdateTaskArgs{ID: id, Repo: repo, Updates: tools.TaskUpdates{Status: &to}})
		if err != nil || r.Error != nil {
			t.Fatalf("update_task %s: %v %+v", id, err, r.Error)
		}
		status[id] = to
	}
	cardsHold := func(what string) {
		t.Helper()
		eventually(ctx, t, 2*time.Minute, what, func() error {
			for id, want := range status {
				b, err := os.ReadFile(filepath.Join(dirs[repo], ".cuedeck", "cards", id+".md"))
				if err != nil {
					return err
				}
				if !strings.Contains(string(b), "\nstatus: "+want+"\n") {
					return fmt.Errorf("card %s does not hold status %s:\n%s", id, want, b)
				}
			}
			return nil
		})
	}
	edgesList := func(what string) {
		t.Helper()
		for i := range c.Edges {
			eventually(ctx, t, 3*time.Minute, fmt.Sprintf("edge%d lists %s", i+1, what), func() error {
				r, err := c.EdgeCall(ctx, nc, i, tools.ListTasks, tools.ListTasksArgs{Repo: repo, Limit: 1000})
				if err != nil {
					return err
				}
				if r.Error != nil {
					return fmt.Errorf("list_tasks: %s", r.Error.Message)
				}
				var got []tools.TaskSummary
				if err := json.Unmarshal(r.Result, &got); err != nil {
					return err
				}
				seen := map[string]string{}
				for _, tk := range got {
					seen[tk.ID] = tk.Status
				}
				for id, want := range status {
					if seen[id] != want {
						return fmt.Errorf("task %s listed as %q, its card holds %q (%d listed)", id, seen[id], want, len(got))
					}
				}
				if len(got) != len(status) {
					return fmt.Errorf("%d tasks listed, %d made", len(got), len(status))
				}
				return nil
			})
		}
	}

	for k := range 12 {
		create(fmt.Sprintf("before the backup %02d", k))
	}
	cardsHold("the first tasks written back")
	edgesList("the first tasks")
	name := events.TasksStream
	backup, cfg := backupStream(ctx, t, js, name)
	t.Logf("backup of %s: %d events, %d tasks", name, len(backup), len(status))

	var ids []string
	for id := range status {
		ids = append(ids, id)
	}
	for _, id := range ids[:4] {
		update(id, "done")
	}
	for k := range 6 {
		create(fmt.Sprintf("after the backup %02d", k))
	}
	cardsHold("the changes after the backup written back")
	edgesList("every task")

	// Refilled by hand, a quarter second between messages: the writers
	// run on, and ingest must not compare the cards with the log half
	// refilled, or their states would land before the rest of the
	// backup's older ones (it did until ingest waited for the log to
	// settle: this test failed on its first run with that gap).
	restoreStreamSpaced(ctx, t, js, cfg, backup, 250*time.Millisecond)
	restored := time.Now()
	t.Logf("%s deleted and restored from the backup", name)
	// The restored log itself must come to the cards: a board that reads
	// it from its start, as a new edge would, lists every task as its
	// card holds it.
	fresh := tasks.NewBoard(js, nil)
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- fresh.Run(bctx) }()
	t.Cleanup(func() { cancel(); <-done })
	// A failure shows what the restored log holds, event by event.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		msgs, _ := backupStream(context.Background(), t, js, name)
		for i, m := range msgs {
			ev, _ := events.Decode(m.Data)
			te, _ := ev.(events.TaskEvent)
			t.Logf("log %d %s %s %s %s %s id=%s", i+1, m.Subject, te.Op, te.Task.ID, te.Task.Status, te.Source, m.Header.Get("Nats-Msg-Id"))
		}
	})
	eventually(ctx, t, 3*time.Minute, "the restored log holds every task as its card does", func() error {
		if err := fresh.Sync(ctx); err != nil {
			return err
		}
		got := fresh.Tasks(repo)
		for id, want := range status {
			if tk, ok := got[id]; !ok || tk.Status != want {
				return fmt.Errorf("task %s in the log as %q, its card holds %q (%d in the log)", id, tk.Status, want, len(got))
			}
		}
		if len(got) != len(status) {
			return fmt.Errorf("%d tasks in the log, %d made", len(got), len(status))
		}
		return nil
	})
	logCaught := time.Since(restored)
	edgesList("every task as its card holds it, after the restore")
	cardsHold("no card set back by the restore")
	converged := time.Since(restored)

	// A change made now lands in the restored log, written back once.
	update(ids[5], "active")
	create("after the restore")
	cardsHold("the changes after the restore written back")
	edgesList("the changes after the restore")
	t.Logf("after the restore: the restored log held all %d tasks as their cards do %s after it, both edges listed them so %s after it; later changes listed and written back",
		len(status), logCaught.Round(time.Millisecond), converged.Round(time.Millisecond))
	s.Done()
}
