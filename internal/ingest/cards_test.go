package ingest_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const cardPath = ".cuedeck/cards/abc123.md"

const handCard = `---
id: abc123
title: Implement login
status: todo
priority: high
tags: [auth]
estimate: 3d # a key CueDeck does not know
created: 2026-01-02T10:43:00Z
updated: 2026-01-02T10:43:00Z
---
# Login

Follow @docs/api.md#Login.
`

// runBG runs fn until the test ends and checks it returned cleanly.
func runBG(t *testing.T, name string, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(within):
			t.Errorf("%s did not stop within %s", name, within)
		}
	})
}

func taskLog(t *testing.T, conn *bus.Conn) uint64 {
	t.Helper()
	st, err := conn.JS.Stream(context.Background(), events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// cardsPipeline runs ingest and the indexer on a repo holding handCard, and
// returns a board that follows the task log.
func cardsPipeline(t *testing.T) (conn *bus.Conn, dir string, board *tasks.Board, cfg ingest.Config, ing running) {
	conn, _ = bustest.Start(t, bus.Settings{})
	dir = t.TempDir()
	writeTree(t, dir, map[string]string{cardPath: handCard, "docs/api.md": "# Login\n"})
	board = tasks.NewBoard(conn.JS, nil)
	runBG(t, "board", board.Run)
	runBG(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	cfg = config(t, ingest.RepoConfig{Name: "r", Root: dir})
	ing = start(t, conn, cfg)
	bustest.Eventually(t, within, "the card on the board", func() bool {
		_, ok := board.Task("r", "abc123")
		return ok
	})
	return conn, dir, board, cfg, ing
}

func TestHandEditedCardReachesTheBoard(t *testing.T) {
	_, dir, board, _, _ := cardsPipeline(t)
	got, _ := board.Task("r", "abc123")
	if got.Title != "Implement login" || got.Priority != "high" || got.Path != cardPath {
		t.Fatalf("task: %+v", got)
	}
	writeTree(t, dir, map[string]string{cardPath: strings.Replace(handCard, "status: todo", "status: active", 1)})
	bustest.Eventually(t, 2*time.Second, "the edit on the board", func() bool {
		got, _ := board.Task("r", "abc123")
		return got.Status == "active"
	})
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(cardPath))); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within, "the deletion on the board", func() bool {
		_, ok := board.Task("r", "abc123")
		return !ok
	})
}

func TestMCPTaskEventIsWrittenBackOnce(t *testing.T) {
	conn, dir, board, cfg, ing := cardsPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()

	task, _ := board.Task("r", "abc123")
	task.Status, task.Assignee = "done", "@dev"
	task.Updated = time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp", Actor: "agent"}, nil); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"status: todo", "status: done",
		"priority: high\n", "priority: high\nassignee: '@dev'\n",
		"updated: 2026-01-02T10:43:00Z", "updated: 2026-01-03T09:00:00Z",
	).Replace(handCard)
	full := filepath.Join(dir, filepath.FromSlash(cardPath))
	var got string
	bustest.Eventually(t, within, "the card rewritten", func() bool {
		b, _ := os.ReadFile(full)
		got = string(b)
		return strings.Contains(got, "status: done")
	})
	if got != want {
		t.Fatalf("card rewritten as\n%s\nwant\n%s", got, want)
	}
	events1 := taskLog(t, conn)
	// The rewrite comes back through ingest and the indexer as the same
	// state, and publishes nothing.
	bustest.Eventually(t, within, "the rewritten card indexed", func() bool {
		return docState(conn, "r", cardPath) == events.SHA256Hex([]byte(want))
	})
	if err := board.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := taskLog(t, conn); n != events1 || n != 2 {
		t.Fatalf("task log has %d events (%d when the card was written), want 2", n, events1)
	}

	// A restart resumes after what was written: a later hand edit is not
	// undone by replaying the MCP event.
	ing.stop()
	edited := strings.Replace(want, "status: done", "status: archived", 1)
	writeTree(t, dir, map[string]string{cardPath: edited})
	ing = start(t, conn, cfg)
	bustest.Eventually(t, within, "the hand edit on the board", func() bool {
		got, _ := board.Task("r", "abc123")
		return got.Status == "archived"
	})
	if b, _ := os.ReadFile(full); string(b) != edited {
		t.Fatalf("hand edit overwritten:\n%s", b)
	}

	// An MCP change made while ingest is down is written when it is back.
	ing.stop()
	task, _ = board.Task("r", "abc123")
	task.Priority = "critical"
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	start(t, conn, cfg)
	bustest.Eventually(t, within, "the change made while ingest was down", func() bool {
		b, _ := os.ReadFile(full)
		return string(b) == strings.Replace(edited, "priority: high", "priority: critical", 1)
	})
}

// The task log is created again (its store lost, or restored onto a new
// cluster) while ingest is down: ingest's position in the old log means
// nothing in the new one, so it writes back from the new log's start
// rather than waiting for the sequence to pass where the old one stopped.
func TestCardWriteBackFollowsARecreatedTaskLog(t *testing.T) {
	conn, dir, _, cfg, ing := cardsPipeline(t)
	ing.stop()
	recreateLogWithNewTask(t, conn)
	restarted := start(t, conn, cfg)
	if rec, _ := restarted.svc.StartReconcile(); !rec.TaskLogReplaced || rec.Stale != 1 {
		t.Fatalf("reconcile: %+v; want the task log found replaced and the one card published again", rec)
	}
	waitLogAndCardsAgree(t, conn, dir)
}

// A stop in the middle of a card write leaves its staging file behind;
// the next start removes it.
func TestStartRemovesInterruptedCardWrites(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"README.md": "# r\n", ".cuedeck/.cache/tmp/abc123.md.0123456789abcdef": "half a card"})
	start(t, conn, config(t, ingest.RepoConfig{Name: "r", Root: dir}))
	if entries, err := os.ReadDir(filepath.Join(dir, ".cuedeck", ".cache", "tmp")); err != nil || len(entries) != 0 {
		t.Fatalf("staging left: %v, %v", entries, err)
	}
}

// A task cannot be written back through .cuedeck/cards symlinked out of
// the repository: nothing is written outside it, and the warning says
// what to do.
func TestCardWriteBackThroughASymlinkOutNamesTheRemedy(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	dir, outside := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"docs/api.md": "# Login\n"})
	if err := os.MkdirAll(filepath.Join(dir, ".cuedeck"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".cuedeck", "cards")); err != nil {
		t.Fatal(err)
	}
	board := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board", board.Run)
	var logs logtest.Buffer
	startLogged(t, conn, config(t, ingest.RepoConfig{Name: "r", Root: dir}), slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	now := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	task := events.Task{ID: "abc123", Title: "Implement login", Status: "todo", Created: now, Updated: now}
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	remedy := "make " + filepath.Join(dir, ".cuedeck", "cards") + " a directory"
	bustest.Eventually(t, within, "the write-back refused", func() bool {
		return strings.Contains(logs.String(), remedy)
	})
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("write-back wrote outside the repository: %v", entries)
	}
}

// The task log is restored from a backup taken before an MCP change that
// was since written back into its card, while ingest runs. The card is
// the task's truth once written: replaying the older log from its start
// must not write its older state over the card, and the log must learn
// the card's state again.
func TestRestoredTaskLogDoesNotUndoAWrittenBackCard(t *testing.T) {
	conn, dir, board, _, _ := cardsPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*within)
	defer cancel()
	full := filepath.Join(dir, filepath.FromSlash(cardPath))

	task, _ := board.Task("r", "abc123")
	task.Status = "active"
	task.Updated = time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within, "the first change written back", func() bool {
		b, _ := os.ReadFile(full)
		return strings.Contains(string(b), "status: active")
	})
	backup := bustest.Backup(t, conn.JS, events.TasksStream)

	task.Status = "done"
	task.Updated = time.Date(2026, 1, 4, 9, 0, 0, 0, time.UTC)
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within, "the later change written back", func() bool {
		b, _ := os.ReadFile(full)
		return strings.Contains(string(b), "status: done")
	})

	bustest.Restore(t, conn, events.TasksStream, backup)
	// A board that reads the restored log from its start: it must come to
	// the card's state, and stay there.
	restored := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board of the restored log", restored.Run)
	bustest.Eventually(t, 2*within, "the card's state in the restored log", func() bool {
		got, _ := restored.Task("r", "abc123")
		return got.Status == "done"
	})
	if b, _ := os.ReadFile(full); !strings.Contains(string(b), "status: done") {
		t.Fatalf("the card was set back by the restored log:\n%s", b)
	}
}

// TestChangeToARestoredTaskLogIsWrittenBack: the task log is restored from
// a backup that ends well before where write-back had come, just after an
// MCP change to each of two tasks. A change made in the restored log lands
// at a sequence write-back had passed in the old one; it must reach its
// card all the same, and the restored log's older changes must set no card
// back.
func TestChangeToARestoredTaskLogIsWrittenBack(t *testing.T) {
	t.Cleanup(ingest.CheckTaskLogEvery(100 * time.Millisecond))
	conn, dir, board, _, _ := cardsPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*within)
	defer cancel()
	first, _ := board.Task("r", "abc123")
	second := first
	second.ID, second.Title, second.Path = "def456", "Implement logout", ""
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: second, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	tasksNow := map[string]*events.Task{first.ID: &first, second.ID: &second}
	change := func(b *tasks.Board, id, notes string, day int) {
		t.Helper()
		task := tasksNow[id]
		task.Notes, task.Updated = notes, time.Date(2026, 1, day, 9, 0, 0, 0, time.UTC)
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: *task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	holds := func(id, notes string) bool {
		b, _ := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", id+".md"))
		return strings.Contains(string(b), "notes: "+notes+"\n")
	}
	bothHold := func(what, notes string) {
		t.Helper()
		bustest.Eventually(t, within, what, func() bool { return holds(first.ID, notes) && holds(second.ID, notes) })
	}

	change(board, first.ID, "before the backup", 3)
	change(board, second.ID, "before the backup", 3)
	bothHold("the changes before the backup written back", "before the backup")
	// The backup is taken just after the MCP changes were stored, before
	// the cards' own events came back: the restored log's last word on
	// each task is a change the cards have moved past.
	backup := bustest.Backup(t, conn.JS, events.TasksStream)
	for len(backup) > 0 && !strings.Contains(string(backup[len(backup)-1].Data), `"source":"mcp"`) {
		backup = backup[:len(backup)-1]
	}
	for k := range 6 {
		change(board, first.ID, fmt.Sprintf("after the backup %d", k), 4+k)
		change(board, second.ID, fmt.Sprintf("after the backup %d", k), 4+k)
	}
	bothHold("the changes after the backup written back", "after the backup 5")
	// The cards written back come round through the indexer, which finds
	// the log holds them already: let that settle, so that only a
	// publish of the cards after the restore can bring them to the
	// restored log.
	bustest.Eventually(t, within, "the written-back cards indexed", func() bool {
		docs, err := conn.KV(ctx, events.DocsBucket)
		if err != nil {
			return false
		}
		for id := range tasksNow {
			e, err := docs.Get(ctx, events.DocKey("r", ".cuedeck/cards/"+id+".md"))
			if err != nil {
				return false
			}
			rec, err := events.DecodeDocRecord(e.Value())
			if err != nil || !strings.Contains(rec.Content, "notes: after the backup 5\n") {
				return false
			}
		}
		cons, err := conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
		if err != nil {
			return false
		}
		info, err := cons.Info(ctx)
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})

	bustest.Restore(t, conn, events.TasksStream, backup)
	restored := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board of the restored log", restored.Run)
	bustest.Eventually(t, within, "the restored log on a board", func() bool {
		got, _ := restored.Task("r", second.ID)
		return got.Notes == "before the backup"
	})
	change(restored, first.ID, "after the restore", 20)
	setBack := func() {
		for id := range tasksNow {
			if holds(id, "before the backup") {
				t.Fatalf("card %s was set back to the restored log's older change", id)
			}
		}
	}
	bustest.Eventually(t, within, "the change to the restored log written back", func() bool {
		setBack()
		return holds(first.ID, "after the restore")
	})
	// Write-back took the restored log's older changes before the later
	// one: had it written them, the card would say so now.
	setBack()
	if !holds(second.ID, "after the backup 5") {
		b, _ := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", second.ID+".md"))
		t.Fatalf("card %s lost its last change:\n%s", second.ID, b)
	}
	// And the restored log learns what the cards hold, with no periodic
	// comparison to publish them (write-back found the log replaced).
	bustest.Eventually(t, within, "the restored log holding the cards' changes", func() bool {
		got, _ := restored.Task("r", second.ID)
		return got.Notes == "after the backup 5"
	})
}

// TestChangeInARestoredLogOutlivesTheCardsPublishedAgain: the task log is
// restored from a backup while ingest is down, and an agent changes a
// task in it before ingest is back. Ingest's comparison finds the log
// replaced and publishes every card again, so that the log learns what
// only the cards hold; a card so repeated is older than the agent's
// change and must not undo it: the change reaches the card instead.
func TestChangeInARestoredLogOutlivesTheCardsPublishedAgain(t *testing.T) {
	conn, dir, board, cfg, ing := cardsPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*within)
	defer cancel()
	backup := bustest.Backup(t, conn.JS, events.TasksStream)
	// A task the backup lacks: only its card can bring it back.
	made := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	second := events.Task{ID: "def456", Title: "Implement logout", Status: "todo", Priority: "medium", Created: made, Updated: made}
	if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: second, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	secondCard := filepath.Join(dir, ".cuedeck", "cards", second.ID+".md")
	bustest.Eventually(t, within, "the new task written back", func() bool {
		_, err := os.Stat(secondCard)
		return err == nil
	})
	ing.stop()

	bustest.Restore(t, conn, events.TasksStream, backup)
	restored := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board of the restored log", restored.Run)
	bustest.Eventually(t, within, "the restored log on a board", func() bool {
		_, ok := restored.Task("r", "abc123")
		return ok
	})
	task, _ := restored.Task("r", "abc123")
	task.Status, task.Updated = "active", time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if _, err := restored.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}

	back := start(t, conn, cfg)
	if rec, _ := back.svc.StartReconcile(); !rec.TaskLogReplaced {
		t.Fatalf("reconcile: %+v; want the task log found replaced", rec)
	}
	full := filepath.Join(dir, filepath.FromSlash(cardPath))
	bustest.Eventually(t, within, "the agent's change written back and the missing task in the log", func() bool {
		b, _ := os.ReadFile(full)
		_, learnt := restored.Task("r", second.ID)
		return strings.Contains(string(b), "status: active") && learnt
	})
	// Everything published again has been indexed: a card that undid
	// the change would have done so by now.
	bustest.Eventually(t, within, "the cards indexed", func() bool {
		cons, err := conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
		if err != nil {
			return false
		}
		info, err := cons.Info(ctx)
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})
	if err := restored.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := restored.Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("task abc123 is %q in the log after the cards were published again, want the agent's %q", got.Status, "active")
	}
	if b, _ := os.ReadFile(full); !strings.Contains(string(b), "status: active") {
		t.Fatalf("the card lost the agent's change:\n%s", b)
	}
}

// The task log deleted and created again under running ingest: the
// server's announcement (bus.OnStreamReplaced) has card write-back find
// it at once, not at its periodic check, and the comparison publish the
// cards into the new log.
func TestCardWriteBackFindsALogReplacedWhenTheServerSaysSo(t *testing.T) {
	defer ingest.CheckTaskLogEvery(time.Hour)()
	// The periodic comparison runs every 10 minutes (the default).
	conn, dir, _, _, ing := cardsPipeline(t)
	stop, err := bus.OnStreamReplaced(conn.NC, ing.svc.StreamReplaced, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	recreateLogWithNewTask(t, conn)
	waitLogAndCardsAgree(t, conn, dir)
}

// recreateLogWithNewTask deletes the task log, provisions it again, empty,
// and writes into it one task of repo r that no card holds, new123.
func recreateLogWithNewTask(t *testing.T, conn *bus.Conn) {
	t.Helper()
	ctx := context.Background()
	if err := conn.JS.DeleteStream(ctx, events.TasksStream); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	task := events.Task{ID: "new123", Title: "Written into the new log", Status: "todo", Priority: "medium",
		Created: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC), Updated: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)}
	ev := events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task, Source: "mcp"}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.TaskSubject("r"), "new123-created", ev); err != nil {
		t.Fatal(err)
	}
}

// waitLogAndCardsAgree waits until the new log's task, new123, is written
// back into its card, and the card written before the log was lost,
// abc123, is in the new log again.
func waitLogAndCardsAgree(t *testing.T, conn *bus.Conn, dir string) {
	t.Helper()
	bustest.Eventually(t, within, "the new log's task written back", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", "new123.md"))
		return err == nil && strings.Contains(string(b), "Written into the new log")
	})
	board := tasks.NewBoard(conn.JS, nil)
	runBG(t, "new board", board.Run)
	bustest.Eventually(t, within, "the card's task in the new log", func() bool {
		_, old := board.Task("r", "abc123")
		_, made := board.Task("r", "new123")
		return old && made
	})
}

// A task created over MCP in a repository without .cuedeck/cards gets its
// card, in a directory made for it, and again once the directory is
// deleted: the directory is made when the card's rename finds it missing.
func TestCardWriteBackMakesTheCardsDirectory(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"docs/api.md": "# Login\n"})
	board := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board", board.Run)
	var logs logtest.Buffer
	startLogged(t, conn, config(t, ingest.RepoConfig{Name: "r", Root: dir}), slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	create := func(id string) {
		t.Helper()
		now := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
		task := events.Task{ID: id, Title: "Task " + id, Status: "todo", Priority: "medium", Created: now, Updated: now}
		if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
		bustest.Eventually(t, within, "card "+id+" written", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", id+".md"))
			return err == nil && strings.Contains(string(b), "Task "+id)
		})
	}
	create("abc123")
	if err := os.RemoveAll(filepath.Join(dir, ".cuedeck", "cards")); err != nil {
		t.Fatal(err)
	}
	create("def456")
}

// Ingest says which publishes of a card are the card as write-back left
// it, and from which task log (FileUpserted.WrittenBackFrom): the indexer changes no task for those
// (indexer's TestWrittenBackCardDoesNotSetItsTaskBack). A card ingest found,
// a hand edit, and an edit back to what write-back wrote go without it.
func TestCardsWrittenBackArePublishedAsSuch(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{cardPath: handCard})
	published := make(chan events.FileUpserted, 16)
	sub, err := conn.NC.Subscribe(events.FileSubject("r"), func(m *nats.Msg) {
		if ev, err := events.Decode(m.Data); err == nil {
			if up, ok := ev.(events.FileUpserted); ok && up.Path == cardPath {
				published <- up
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	board := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board", board.Run)
	runBG(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	start(t, conn, config(t, ingest.RepoConfig{Name: "r", Root: dir}))
	next := func(what string, writtenBack bool) {
		t.Helper()
		select {
		case up := <-published:
			if writtenBack {
				log, err := bus.ReadStream(context.Background(), conn.JS, events.TasksStream)
				if err != nil {
					t.Fatal(err)
				}
				if up.WrittenBackFrom != log.ID() {
					t.Fatalf("%s published as written back from %q, want the task log %q", what, up.WrittenBackFrom, log.ID())
				}
			} else if up.WrittenBackFrom != "" {
				t.Fatalf("%s published as written back from %q", what, up.WrittenBackFrom)
			}
		case <-time.After(within):
			t.Fatalf("%s not published", what)
		}
	}
	next("the card found at start", false)
	bustest.Eventually(t, within, "the card on the board", func() bool {
		_, ok := board.Task("r", "abc123")
		return ok
	})

	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	full := filepath.Join(dir, filepath.FromSlash(cardPath))
	var written string
	for _, status := range []string{"active", "done"} {
		task, _ := board.Task("r", "abc123")
		task.Status, task.Updated = status, time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
		if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
		next("the card written back with status "+status, true)
		b, err := os.ReadFile(full)
		if err != nil || !strings.Contains(string(b), "status: "+status) {
			t.Fatalf("card after the change to %s: %s (%v)", status, b, err)
		}
		written = string(b)
	}
	logged := taskLog(t, conn)
	bustest.Eventually(t, within, "the written-back card indexed", func() bool {
		return docState(conn, "r", cardPath) == events.SHA256Hex([]byte(written))
	})
	if err := board.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := board.Task("r", "abc123"); got.Status != "done" || taskLog(t, conn) != logged {
		t.Fatalf("after the written-back cards were indexed: status %q, %d events in the log (%d before); want done and no new event", got.Status, taskLog(t, conn), logged)
	}

	for _, edit := range []struct{ content, status string }{
		{strings.Replace(written, "status: done", "status: archived", 1), "archived"},
		{written, "done"},
	} {
		writeTree(t, dir, map[string]string{cardPath: edit.content})
		next("the card edited to status "+edit.status, false)
		bustest.Eventually(t, within, "the edit to "+edit.status+" on the board", func() bool {
			got, _ := board.Task("r", "abc123")
			return got.Status == edit.status
		})
	}
}

// A stop while a batch of cards is being written back stops between two
// cards, and loses none: the restart writes the rest.
func TestCardWriteBackStoppedMidBatchLosesNoCard(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"docs/api.md": "# Login\n"})
	board := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board", board.Run)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	// Written before ingest starts, the tasks come to it as one batch.
	const n = 1500
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%05d", i)
		now := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
		task := events.Task{ID: ids[i], Title: "Task " + ids[i], Status: "todo", Priority: "medium", Created: now, Updated: now}
		if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	cards := func() int {
		entries, _ := os.ReadDir(filepath.Join(dir, ".cuedeck", "cards"))
		return len(entries)
	}
	cfg := config(t, ingest.RepoConfig{Name: "r", Root: dir})
	first := start(t, conn, cfg)
	bustest.Eventually(t, within, "the first card written", func() bool { return cards() > 0 })
	first.stop() // fails the test unless Run returns cleanly
	t.Logf("%d of %d cards written before the stop", cards(), n)

	start(t, conn, cfg)
	bustest.Eventually(t, within, "every card written after the restart", func() bool { return cards() == n })
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", id+".md"))
		if err != nil || !strings.Contains(string(b), "title: Task "+id) {
			t.Fatalf("card %s: %v\n%s", id, err, b)
		}
	}
}

// TestTaskLogRefilledSlowlySetsNoCardBack: the task log is refilled from a
// backup by hand, message by message, while ingest and the indexer run.
// The cards, every task done since the backup, must not be set back, and
// the refilled log must come to hold what they hold: were they compared
// with the log half refilled, their states would land before the rest of
// the backup's older ones, which the log's order makes the later truth.
func TestTaskLogRefilledSlowlySetsNoCardBack(t *testing.T) {
	t.Cleanup(ingest.CheckTaskLogEvery(100 * time.Millisecond))
	conn, dir, board, _, ing := cardsPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*within)
	defer cancel()
	// As the daemon does: the server's announcement of the log created
	// again reaches ingest at once.
	stopAnnouncements, err := bus.OnStreamReplaced(conn.NC, ing.svc.StreamReplaced, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopAnnouncements)
	made := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		task := events.Task{ID: fmt.Sprintf("slow%02d", i), Title: fmt.Sprintf("Refill %d", i), Status: "todo", Priority: "medium", Created: made, Updated: made}
		if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	cardHolds := func(id, status string) bool {
		b, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", id+".md"))
		return err == nil && strings.Contains(string(b), "\nstatus: "+status+"\n")
	}
	bustest.Eventually(t, within, "the tasks written back", func() bool {
		for _, id := range ids {
			if !cardHolds(id, "todo") {
				return false
			}
		}
		return true
	})
	backup := bustest.Backup(t, conn.JS, events.TasksStream)
	for _, id := range ids {
		task, _ := board.Task("r", id)
		task.Status, task.Updated = "done", made.Add(time.Hour)
		if _, err := board.Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	bustest.Eventually(t, within, "the changes written back", func() bool {
		for _, id := range ids {
			if !cardHolds(id, "done") {
				return false
			}
		}
		return true
	})

	bustest.RestoreSpaced(t, conn, events.TasksStream, backup, 600*time.Millisecond)
	refilled := tasks.NewBoard(conn.JS, nil)
	runBG(t, "board of the refilled log", refilled.Run)
	bustest.Eventually(t, 2*within, "the cards' states in the refilled log", func() bool {
		for _, id := range ids {
			if got, _ := refilled.Task("r", id); got.Status != "done" {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if !cardHolds(id, "done") {
			b, _ := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", id+".md"))
			t.Errorf("card %s set back by the refill:\n%s", id, b)
		}
	}
}
