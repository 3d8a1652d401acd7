package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// taskLoad is what the clients of one load run saw.
type taskLoad struct {
	mu             sync.Mutex
	create, update []time.Duration
	failures       map[string]int
	// created are the acknowledged tasks; updates the request ids of the
	// acknowledged updates.
	created, updates []string
}

func (l *taskLoad) failed(tool string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	code := "other"
	var te *tools.Error
	if errors.As(err, &te) {
		code = strconv.Itoa(te.Code)
	}
	l.failures[tool+" "+code+": "+shortErr(err)]++
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// runTaskLoad has clients concurrent MCP clients (each its own NATS
// connection, as each agent's `cue mcp` is) create a task and update it
// again and again for d, through the edges' query services round robin.
func runTaskLoad(t testing.TB, urls []string, prefixes []string, clients int, d time.Duration) *taskLoad {
	l := &taskLoad{failures: map[string]int{}}
	ctx := context.Background()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := range clients {
		conn, err := bus.Connect(ctx, urls[c%len(urls)], bus.ConnectOptions{Name: fmt.Sprintf("load-%d", c)})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: prefixes[c%len(prefixes)]})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				req := fmt.Sprintf("c%d-%d", c, i)
				args, _ := json.Marshal(map[string]any{"title": "Load task " + req, "request_id": req + "-create"})
				start := time.Now()
				out, err := caller.Call(ctx, tools.CreateTask, args)
				took := time.Since(start)
				if err != nil {
					l.failed(tools.CreateTask, err)
					continue
				}
				var res tools.CreateTaskResult
				if err := json.Unmarshal(out, &res); err != nil {
					t.Error(err)
					return
				}
				l.mu.Lock()
				l.create = append(l.create, took)
				l.created = append(l.created, res.ID)
				l.mu.Unlock()
				for j, status := range []string{"active", "done"} {
					up := fmt.Sprintf("%s-update%d", req, j)
					args, _ := json.Marshal(map[string]any{"id": res.ID, "updates": map[string]any{"status": status}, "request_id": up})
					start := time.Now()
					_, err := caller.Call(ctx, tools.UpdateTask, args)
					took := time.Since(start)
					if err != nil {
						l.failed(tools.UpdateTask, err)
						continue
					}
					l.mu.Lock()
					l.update = append(l.update, took)
					l.updates = append(l.updates, up)
					l.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return l
}

// checkExactlyOnce reads the whole task log and requires every
// acknowledged create and update in it exactly once.
func checkExactlyOnce(t testing.TB, js jetstream.JetStream, l *taskLoad) {
	t.Helper()
	creates, requests := map[string]int{}, map[string]int{}
	for _, ev := range bustest.Events(t, js, events.TasksStream) {
		if te, ok := ev.(events.TaskEvent); ok {
			if te.Op == events.TaskCreated {
				creates[te.Task.ID]++
			}
			if te.RequestID != "" {
				requests[te.RequestID]++
			}
		}
	}
	lost, dup := 0, 0
	for _, id := range l.created {
		switch creates[id] {
		case 0:
			lost++
		case 1:
		default:
			dup++
		}
	}
	for _, req := range l.updates {
		switch requests[req] {
		case 0:
			lost++
		case 1:
		default:
			dup++
		}
	}
	for req, k := range requests {
		if k > 1 && !slices.Contains(l.updates, req) {
			dup += k - 1
		}
	}
	if lost+dup > 0 {
		t.Errorf("of %d acknowledged creates and %d updates, %d are not in the task log and %d are there more than once", len(l.created), len(l.updates), lost, dup)
	}
}

func (l *taskLoad) report(b *testing.B, d time.Duration) {
	cs, us := l.create, l.update
	p := func(lat []time.Duration, q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		s := slices.Clone(lat)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	failures := 0
	for _, n := range l.failures {
		failures += n
	}
	b.ReportMetric(p(cs, 0.5), "create-p50-ms")
	b.ReportMetric(p(cs, 0.99), "create-p99-ms")
	b.ReportMetric(p(us, 0.5), "update-p50-ms")
	b.ReportMetric(p(us, 0.99), "update-p99-ms")
	b.ReportMetric(float64(len(cs)+len(us))/d.Seconds(), "writes/s")
	b.ReportMetric(float64(failures), "failures")
	b.ReportMetric(0, "ns/op")
	for what, n := range l.failures {
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
				l := runTaskLoad(b, []string{n.info.NATSURL}, []string{n.info.QueryPrefix}, clients, d)
				checkExactlyOnce(b, n.conn.JS, l)
				l.report(b, d)
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
				l := runTaskLoad(b, []string{srv.ClientURL()}, []string{prefix}, clients, d)
				checkExactlyOnce(b, conn.JS, l)
				l.report(b, d)
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
	l := runTaskLoad(t, []string{n.info.NATSURL}, []string{n.info.QueryPrefix}, 32, 3*time.Second)
	for what, k := range l.failures {
		t.Errorf("%d× %s", k, what)
	}
	if len(l.created) == 0 {
		t.Fatal("no task created")
	}
	checkExactlyOnce(t, n.conn.JS, l)
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
	l := runTaskLoad(t, []string{srv.ClientURL()}, []string{prefix}, 32, 3*time.Second)
	for what, k := range l.failures {
		t.Errorf("%d× %s", k, what)
	}
	if len(l.created) == 0 {
		t.Fatal("no task created")
	}
	checkExactlyOnce(t, conn.JS, l)
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
	l := &taskLoad{created: []string{first}, updates: []string{"8f0c7c1e-update"}}
	checkExactlyOnce(t, n.conn.JS, l)
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
