package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/taskload"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// runTaskLoad runs taskload with clients clients for d against the
// query services at prefixes on urls, and requires that every
// acknowledged write is in the task log exactly once.
func runTaskLoad(t testing.TB, js jetstream.JetStream, urls, prefixes []string, clients int, d time.Duration) *taskload.Result {
	t.Helper()
	ctx := context.Background()
	r, err := taskload.Run(ctx, taskload.Options{URLs: urls, Prefixes: prefixes, Clients: clients, Duration: d})
	if err != nil {
		t.Fatal(err)
	}
	lost, dup, err := r.Check(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if lost+dup > 0 {
		t.Errorf("of %d acknowledged creates and %d updates, %d are not in the task log and %d are there more than once", len(r.Created), len(r.Updates), lost, dup)
	}
	return r
}

func report(b *testing.B, r *taskload.Result) {
	s := r.Summary()
	b.ReportMetric(s.CreateP50Ms, "create-p50-ms")
	b.ReportMetric(s.CreateP99Ms, "create-p99-ms")
	b.ReportMetric(s.UpdateP50Ms, "update-p50-ms")
	b.ReportMetric(s.UpdateP99Ms, "update-p99-ms")
	b.ReportMetric(s.WritesPerSecond, "writes/s")
	b.ReportMetric(float64(s.Failures), "failures")
	b.ReportMetric(0, "ns/op")
	for what, n := range s.FailureKinds {
		b.Logf("%d× %s", n, what)
	}
}

// loadDuration is how long each load level runs: 30 s, or
// CUE_TASK_LOAD_SECONDS.
func loadDuration() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("CUE_TASK_LOAD_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 30 * time.Second
}

// BenchmarkTaskWrites has 1, 8 and 64 MCP clients create and update tasks
// in one repository through one daemon, then through two edges (two
// daemons of one workspace name on one NATS server), and checks that every
// acknowledged write is in the task log exactly once. Run it with
// -benchtime 1x: each level runs for CUE_TASK_LOAD_SECONDS (30 s).
func BenchmarkTaskWrites(b *testing.B) {
	d := loadDuration()
	noModel := func(cfg *workspace.Config) { cfg.Embed.Model = "none" }
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("edges=1/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				root := b.TempDir()
				write(b, root, "a.md", "# A\n")
				n := startNode(b, root, noModel)
				report(b, runTaskLoad(b, n.conn.JS, []string{n.info.NATSURL}, []string{n.info.QueryPrefix}, clients, d))
			}
		})
	}
	for _, clients := range []int{8, 64} {
		b.Run(fmt.Sprintf("edges=2/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				conn, srv := bustest.Start(b, bus.Settings{})
				var prefix string
				for range 2 {
					root := b.TempDir()
					write(b, root, "a.md", "# A\n")
					// The edges serve one query group: NATS spreads the
					// calls between them.
					n := startNode(b, root, func(cfg *workspace.Config) {
						noModel(cfg)
						cfg.NATS.URL = srv.ClientURL()
						cfg.Workspace.Name = "shared"
					})
					prefix = n.info.QueryPrefix
				}
				report(b, runTaskLoad(b, conn.JS, []string{srv.ClientURL()}, []string{prefix}, clients, d))
			}
		})
	}
}

// A short load through one daemon: no failures, every acknowledged write
// once (the benchmark above measures; this keeps the property in
// `make test`).
func TestConcurrentTaskWritesNeverFail(t *testing.T) {
	if testing.Short() {
		t.Skip("a load run")
	}
	root := t.TempDir()
	write(t, root, "a.md", "# A\n")
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	l := runTaskLoad(t, n.conn.JS, []string{n.info.NATSURL}, []string{n.info.QueryPrefix}, 32, 3*time.Second)
	for what, k := range l.Failures {
		t.Errorf("%d× %s", k, what)
	}
	if len(l.Created) == 0 {
		t.Fatal("no task created")
	}
}

// The same through two daemons on one NATS server, whose edges share the
// calls: one edge writes the repo's tasks, and every acknowledged write,
// forwarded or not, is in the log once.
func TestConcurrentTaskWritesOfTwoEdgesNeverFail(t *testing.T) {
	if testing.Short() {
		t.Skip("a load run")
	}
	conn, srv := bustest.Start(t, bus.Settings{})
	var prefix string
	for range 2 {
		root := t.TempDir()
		write(t, root, "a.md", "# A\n")
		n := startNode(t, root, func(cfg *workspace.Config) {
			cfg.Embed.Model = "none"
			cfg.NATS.URL = srv.ClientURL()
			cfg.Workspace.Name = "shared"
		})
		prefix = n.info.QueryPrefix
	}
	l := runTaskLoad(t, conn.JS, []string{srv.ClientURL()}, []string{prefix}, 32, 3*time.Second)
	for what, k := range l.Failures {
		t.Errorf("%d× %s", k, what)
	}
	if len(l.Created) == 0 {
		t.Fatal("no task created")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := conn.JS.KeyValue(ctx, events.TaskWritersBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, events.TaskWriterKey("shared")); err != nil {
		t.Fatalf("no edge holds the repo's task-writer lease: %v", err)
	}
}

// A create_task retried with its request_id, after the client gave up
// waiting and while other retries race it, yields one task, and every
// retry answers with it; an update retried the same way is written once.
func TestRetriedTaskWritesWithARequestIDWriteOnce(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.md", "# A\n")
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	ctx := context.Background()
	args := []byte(`{"title":"Written once","request_id":"8f0c7c1e-create"}`)

	// The client gives up at once: the call may still be made.
	short, cancel := context.WithTimeout(ctx, time.Microsecond)
	_, err := n.caller.Call(short, tools.CreateTask, args)
	cancel()
	if err == nil {
		t.Log("the call beat a 1 µs timeout")
	}
	ids := make(chan string, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			out, err := n.caller.Call(ctx, tools.CreateTask, args)
			if err != nil {
				t.Errorf("retry: %v", err)
				return
			}
			var res tools.CreateTaskResult
			json.Unmarshal(out, &res)
			ids <- res.ID
		})
	}
	wg.Wait()
	close(ids)
	var first string
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first || id == "" {
			t.Errorf("retries answered different tasks: %q and %q", first, id)
		}
	}
	update := []byte(fmt.Sprintf(`{"id":%q,"updates":{"status":"active"},"request_id":"8f0c7c1e-update"}`, first))
	for range 3 {
		if _, err := n.caller.Call(ctx, tools.UpdateTask, update); err != nil {
			t.Fatal(err)
		}
	}
	l := &taskload.Result{Created: []string{first}, Updates: []string{"8f0c7c1e-update"}}
	if lost, dup, err := l.Check(ctx, n.conn.JS); err != nil || lost+dup > 0 {
		t.Fatalf("the task log lacks %d of the writes and holds %d twice (%v)", lost, dup, err)
	}
	titles := listedTitles(t, n)
	if !titles["Written once"] || len(titles) != 1 {
		t.Fatalf("list_tasks: %v", titles)
	}
	// The same id for another call is refused, not answered with the
	// first call's result.
	_, err = n.caller.Call(ctx, tools.CreateTask, []byte(`{"title":"Other","request_id":"8f0c7c1e-update"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Fatalf("a request id reused for another call: %v", err)
	}
}

// The hook context's active task is the board's: a card made active by
// hand, and then a task an agent starts, once each has reached the board.
func TestHookContextNamesTheBoardsActiveTask(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.md", "# A\n")
	write(t, root, ".cuedeck/cards/k3m9qa.md", "---\nid: k3m9qa\ntitle: Fix login\nstatus: active\n---\nBody\n")
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	activeIs := func(line string) func() bool {
		return func() bool {
			c, err := hook.ReadCache(root)
			return err == nil && strings.Contains(c.Context, "## Active Task\n"+line)
		}
	}
	bustest.Eventually(t, 30*time.Second, "the hand-made active card in the hook context", activeIs("- k3m9qa: Fix login (.cuedeck/cards/k3m9qa.md)"))

	ctx := context.Background()
	out, err := n.caller.Call(ctx, tools.CreateTask, []byte(`{"title":"Ship the board"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created tools.CreateTaskResult
	if err := json.Unmarshal(out, &created); err != nil {
		t.Fatal(err)
	}
	for _, up := range []string{`{"id":"k3m9qa","updates":{"status":"done"}}`, fmt.Sprintf(`{"id":%q,"updates":{"status":"active"}}`, created.ID)} {
		if _, err := n.caller.Call(ctx, tools.UpdateTask, []byte(up)); err != nil {
			t.Fatal(err)
		}
	}
	bustest.Eventually(t, 30*time.Second, "the task the agent started in the hook context", activeIs(fmt.Sprintf("- %s: Ship the board (.cuedeck/cards/%s.md)", created.ID, created.ID)))
}
