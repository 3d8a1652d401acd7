package tasks_test

import (
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The task log is created again under a running board (a team's cluster
// stream deleted and restored, or recreated): the board drops what it
// held and follows the new log from its start, rather than waiting for
// the new log to pass the old one's sequence.
func TestBoardFollowsARecreatedLog(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	b.LogCheck = 20 * time.Millisecond
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	for _, tk := range []events.Task{task("aaaaaa"), task("bbbbbb"), task("cccccc")} {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: tk, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.JS.DeleteStream(ctx, events.TasksStream); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	ev := events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("dddddd"), Source: "mcp"}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.TaskSubject("app"), "dddddd", ev); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 20*time.Second, "the board holding the new log's one task", func() bool {
		got := b.Tasks("app")
		_, ok := got["dddddd"]
		return ok && len(got) == 1
	})
}
