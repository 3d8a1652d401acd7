package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestKillDuringTaskWritesLosesAndDuplicatesNothing SIGKILLs the daemon
// while 64 clients create tasks, each with a request id (writes queued
// together then go as atomic batches or chains). After a restart, every
// create answered before the kill is in the task log once, under the id
// it was answered with; every create whose answer was lost, retried with
// its request id, is written once.
func TestKillDuringTaskWritesLosesAndDuplicatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon twice under load")
	}
	root := t.TempDir()
	writeFile(t, root, "a.md", "# A\n")
	d := startUp(t, root)
	const clients = 64
	var (
		mu       sync.Mutex
		answered = map[string]string{} // request id → task id
		unknown  []string              // request ids without an answer
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for c := range clients {
		conn := connect(t, d.info.NATSURL)
		caller := queryClient(t, conn, d.info.QueryPrefix)
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				req := fmt.Sprintf("kill-%d-%d", c, i)
				args, _ := json.Marshal(map[string]any{"title": "Task " + req, "request_id": req})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				out, err := caller.Call(ctx, tools.CreateTask, args)
				cancel()
				var res tools.CreateTaskResult
				if err == nil {
					err = json.Unmarshal(out, &res)
				}
				mu.Lock()
				if err == nil {
					answered[req] = res.ID
				} else {
					unknown = append(unknown, req)
				}
				mu.Unlock()
				if err != nil {
					return // the daemon is gone
				}
			}
		})
	}
	bustest.Eventually(t, 60*time.Second, "500 tasks created", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(answered) >= 500
	})
	d.kill()
	stop.Store(true)
	wg.Wait()
	t.Logf("killed after %d answered creates, %d unanswered", len(answered), len(unknown))

	d = startUp(t, root)
	defer d.interrupt(t)
	conn := connect(t, d.info.NATSURL)
	caller := queryClient(t, conn, d.info.QueryPrefix)
	create := func(req string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"title": "Task " + req, "request_id": req})
		var res tools.CreateTaskResult
		bustest.Eventually(t, 60*time.Second, "retry of "+req, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := caller.Call(ctx, tools.CreateTask, args)
			return err == nil && json.Unmarshal(out, &res) == nil
		})
		return res.ID
	}
	for _, req := range unknown {
		answered[req] = create(req)
	}
	// An answered create, asked again, answers the same task.
	for req, id := range answered {
		if again := create(req); again != id {
			t.Fatalf("%s was answered %s, and %s when retried after the restart", req, id, again)
		}
		break
	}

	written := map[string][]string{} // request id → task ids created for it
	for _, ev := range bustest.Events(t, conn.JS, events.TasksStream) {
		if te, ok := ev.(events.TaskEvent); ok && te.Op == events.TaskCreated && te.RequestID != "" {
			written[te.RequestID] = append(written[te.RequestID], te.Task.ID)
		}
	}
	for req, id := range answered {
		if ids := written[req]; len(ids) != 1 || ids[0] != id {
			t.Errorf("%s, answered %s: the log holds creates %v", req, id, ids)
		}
	}
	if len(written) != len(answered) {
		t.Errorf("the log holds creates for %d requests, %d were made", len(written), len(answered))
	}
}
