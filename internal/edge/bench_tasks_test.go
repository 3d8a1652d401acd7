package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const benchTasks = 10_000

// seedTaskLog publishes n tasks to repo's task log without waiting for
// each ack (setup, not what is measured): a DAG where each task depends on
// up to two earlier ones, statuses, priorities, assignees and tags spread
// evenly, creation dates over a year.
func seedTaskLog(b *testing.B, js jetstream.JetStream, repo string, n int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	statuses := []string{"todo", "active", "done", "archived"}
	prios := []string{"low", "medium", "high", "critical"}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("t%05d", i)
		var deps []string
		for range rng.IntN(3) {
			if i > 0 {
				deps = append(deps, fmt.Sprintf("t%05d", rng.IntN(i)))
			}
		}
		at := start.Add(time.Duration(i) * 52 * time.Minute)
		tk := events.Task{
			ID: id, Title: fmt.Sprintf("Task number %d", i), Status: statuses[rng.IntN(4)], Priority: prios[rng.IntN(4)],
			Assignee: fmt.Sprintf("dev%d", rng.IntN(20)), Tags: []string{fmt.Sprintf("area%d", rng.IntN(30))},
			DependsOn: dedupe(deps), Created: at, Updated: at, Path: tools.CardPath(id),
		}
		data, err := events.Encode(events.TaskEvent{Repo: repo, Op: events.TaskCreated, Task: tk, Source: "file"})
		if err != nil {
			b.Fatal(err)
		}
		msg := nats.NewMsg(events.TaskSubject(repo))
		msg.Data = data
		if _, err := js.PublishMsgAsync(msg); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			// Fsynced writes ack slower than they are sent: keep the
			// outstanding window under the client's stall limit.
			<-js.PublishAsyncComplete()
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("seeding the task log timed out")
	}
}

// BenchmarkTaskTools measures list_tasks over 10k tasks (target p99 < 5 ms)
// and update_task including the durable write to JetStream and its
// application to the edge's board (target p99 < 20 ms). Each reports
// p50 and p99 in milliseconds.
func BenchmarkTaskTools(b *testing.B) {
	conn, _ := bustest.StartDurable(b, bus.Settings{})
	seedTaskLog(b, conn.JS, "bench", benchTasks)
	board := startBoard(b, conn)
	ctx := context.Background()
	if err := board.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	if got := len(board.Tasks("bench")); got != benchTasks {
		b.Fatalf("board holds %d tasks, want %d", got, benchTasks)
	}
	e := New(nil, nil, WithBoard(board), WithDefaultRepo("bench"), WithoutCache()) // measures the computation, not the answer cache

	run := func(name string, args func(i int) string) {
		b.Run(name, func(b *testing.B) {
			var lat stats.LatencySummary
			i := 0
			before := board.Applied()
			runtime.GC() // the seeding's garbage is not the call's to collect
			for b.Loop() {
				a := json.RawMessage(args(i))
				i++
				t0 := time.Now()
				if _, err := e.Call(ctx, toolOf(name), a); err != nil {
					b.Fatal(err)
				}
				lat.RecordDuration(time.Since(t0))
			}
			if toolOf(name) == tools.UpdateTask {
				// An update answers once its own board applied it; the
				// follower delivers the event after: count the log's
				// events once it has.
				if err := board.Sync(ctx); err != nil {
					b.Fatal(err)
				}
				if board.Applied()-before != uint64(i) {
					b.Fatalf("%d updates wrote %d events", i, board.Applied()-before)
				}
			}
			b.ReportMetric(lat.Percentile(50), "p50-ms")
			b.ReportMetric(lat.Percentile(99), "p99-ms")
		})
	}
	run("list_tasks/status", func(int) string { return `{"status":"active"}` })
	run("list_tasks/assignee+tags", func(int) string { return `{"assignee":"DEV3","tags":["area1","area2"]}` })
	run("list_tasks/created", func(int) string { return `{"created":">2025-06-01","priority":"high"}` })
	run("list_tasks/all", func(int) string { return `{}` })
	statuses := []string{"todo", "active", "done"}
	run("update_task/status", func(i int) string {
		return fmt.Sprintf(`{"id":"t%05d","updates":{"status":%q}}`, 5000+i%1000, statuses[i%3])
	})
	run("update_task/depends_on", func(i int) string {
		// A later task gains an earlier dependency: checked for cycles
		// over the whole 10k-task graph, never one.
		n := 6000 + i%1000
		return fmt.Sprintf(`{"id":"t%05d","updates":{"depends_on":["t%05d","t%05d"]}}`, n, n-1, i%5000)
	})
}

func toolOf(bench string) string {
	for i := range bench {
		if bench[i] == '/' {
			return bench[:i]
		}
	}
	return bench
}
