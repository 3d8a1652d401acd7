package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/taskload"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// TasksOptions configure RunTasks. Engine is required.
type TasksOptions struct {
	// Engine is the cue-engine binary: each daemon is `init` and `up`
	// child processes, as the user runs them, and the clients are in the
	// bench's process, as each agent's `cue mcp` is in its own.
	Engine string
	// Clients are the load levels (default 1, 8 and 64), each run for
	// Duration (default 30 s) on fresh daemons.
	Clients  []int
	Duration time.Duration
	// Edges are the edges per level (default 1 and 2); the clients'
	// calls are spread over them. The first is a daemon; a second one
	// joins its NATS server: another daemon under the same workspace
	// name (SecondEdge "daemon", the default: each developer's `cue up`
	// on a team's NATS server, each writing the cards back into its own
	// checkout), or an mcp-edge process (SecondEdge "mcp-edge": a team's
	// edges behind one ingest and indexer), MCPEdge its binary.
	Edges      []int
	SecondEdge string
	MCPEdge    string
	// Dir holds the workspaces; a new temporary directory when empty.
	// Keep leaves them in place.
	Dir  string
	Keep bool
	// LogLevel is the daemons' (default warn); their logs are
	// Dir/<level>/up-<n>.log.
	LogLevel string
	Progress *Progress
}

func (o *TasksOptions) setDefaults() error {
	if o.Engine == "" {
		return fmt.Errorf("bench: no cue-engine binary to run the daemons")
	}
	if len(o.Clients) == 0 {
		o.Clients = []int{1, 8, 64}
	}
	if len(o.Edges) == 0 {
		o.Edges = []int{1, 2}
	}
	for _, c := range o.Clients {
		if c < 1 {
			return fmt.Errorf("bench: --clients %d: give at least 1", c)
		}
	}
	for _, e := range o.Edges {
		if e < 1 || e > 2 {
			return fmt.Errorf("bench: --edges %d: give 1 or 2", e)
		}
	}
	switch o.SecondEdge {
	case "":
		o.SecondEdge = SecondEdgeDaemon
	case SecondEdgeDaemon:
	case SecondEdgeMCPEdge:
		if _, err := os.Stat(o.MCPEdge); err != nil {
			return fmt.Errorf("bench: --second-edge mcp-edge runs %s: %w (make build puts it beside cue-engine in bin/)", o.MCPEdge, err)
		}
	default:
		return fmt.Errorf("bench: --second-edge %q: use daemon or mcp-edge", o.SecondEdge)
	}
	if o.Duration == 0 {
		o.Duration = 30 * time.Second
	}
	if o.Duration < time.Second {
		return fmt.Errorf("bench: --duration %v: give at least 1s", o.Duration)
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	return nil
}

// The processes a second edge can be (TasksOptions.SecondEdge).
const (
	SecondEdgeDaemon  = "daemon"
	SecondEdgeMCPEdge = "mcp-edge"
)

// TasksReport is `cue bench --tasks`.
type TasksReport struct {
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	Machine   Machine   `json:"machine"`
	// Daemon is how the daemons ran; Model their embedding model.
	Daemon string `json:"daemon"`
	Model  string `json:"model"`
	// SecondEdge is what a second edge was: daemon or mcp-edge.
	SecondEdge string `json:"second_edge"`
	// Levels are the runs, one per edges × clients.
	Levels     []taskload.Summary `json:"levels"`
	WallSecond Seconds            `json:"wall_seconds"`
}

// RunTasks runs taskload at each level of o against fresh daemons and
// reads their task log afterwards (Summary.Lost, Duplicated).
func RunTasks(ctx context.Context, o TasksOptions) (*TasksReport, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	began := time.Now()
	r := &TasksReport{
		Version: version.Version, StartedAt: began.UTC(), Model: "none",
		Machine: Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: loadAverage()},
		Daemon:  filepath.Base(o.Engine) + " up", SecondEdge: o.SecondEdge,
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "cue-bench-tasks-"); err != nil {
			return nil, err
		}
		if !o.Keep {
			defer os.RemoveAll(dir)
		}
	}
	for _, edges := range o.Edges {
		for _, clients := range o.Clients {
			level := filepath.Join(dir, fmt.Sprintf("edges-%d-clients-%d", edges, clients))
			if err := ensureEmpty(level); err != nil {
				return nil, fmt.Errorf("bench: %s is not empty: give --out a new directory", level)
			}
			s, err := runTaskLevel(ctx, &o, level, edges, clients)
			if !o.Keep {
				os.RemoveAll(level)
			}
			if err != nil {
				return nil, err
			}
			r.Levels = append(r.Levels, s)
		}
	}
	o.Progress.Finish()
	r.Machine.LoadEnd = loadAverage()
	r.WallSecond = Seconds(time.Since(began).Seconds())
	return r, nil
}

// runTaskLevel starts edges daemons under dir, runs the load and stops
// them.
func runTaskLevel(ctx context.Context, o *TasksOptions, dir string, edges, clients int) (taskload.Summary, error) {
	var (
		ups     []*upProcess
		roots   []string
		natsURL string
		edge    *upProcess
	)
	defer func() {
		o.Progress.Start(fmt.Sprintf("stop %d edge(s)", edges), 0)
		// The last first: the first one's NATS server serves the others.
		if edge != nil {
			edge.terminate()
		}
		for i := len(ups) - 1; i >= 0; i-- {
			stopDaemon(o.Engine, roots[i], ups[i])
		}
	}()
	o.Progress.Start(fmt.Sprintf("start %d edge(s) for %d clients", edges, clients), 0)
	for i := range edges {
		if i > 0 && o.SecondEdge == SecondEdgeMCPEdge {
			var err error
			if edge, err = startMCPEdge(ctx, o.MCPEdge, natsURL, ups[0].info.QueryPrefix, taskLoadRepo, filepath.Join(dir, "edge")); err != nil {
				return taskload.Summary{}, err
			}
			continue
		}
		root := filepath.Join(dir, fmt.Sprintf("repo-%d", i))
		if err := os.MkdirAll(root, 0o755); err != nil {
			return taskload.Summary{}, err
		}
		if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# Task load\n"), 0o644); err != nil {
			return taskload.Summary{}, err
		}
		if out, err := execEngine(ctx, o.Engine, "init", "--workspace", root); err != nil {
			return taskload.Summary{}, fmt.Errorf("bench: %s init: %w: %s", o.Engine, err, out)
		}
		ws := &workspace.Workspace{Root: root}
		sets := []tomlSet{
			{"embed", "model", `"none"`},
			{"transcripts", "disabled", "true"},
			// The edges of one repository: one name on one NATS server.
			{"workspace", "name", strconv.Quote(taskLoadRepo)},
		}
		if natsURL != "" {
			sets = append(sets, tomlSet{"nats", "url", strconv.Quote(natsURL)})
		}
		if err := configureWorkspace(ws, sets); err != nil {
			return taskload.Summary{}, err
		}
		u, err := startUpProcess(ctx, o.Engine, ws, o.LogLevel, filepath.Join(dir, fmt.Sprintf("up-%d.log", i)))
		if err != nil {
			return taskload.Summary{}, err
		}
		ups, roots = append(ups, u), append(roots, root)
		if err := u.waitReady(ctx); err != nil {
			return taskload.Summary{}, err
		}
		if natsURL == "" {
			natsURL = u.info.NATSURL
		} else if u.info.QueryPrefix != ups[0].info.QueryPrefix {
			return taskload.Summary{}, fmt.Errorf("bench: the second edge serves %s, not the first one's %s: the clients would reach one edge only", u.info.QueryPrefix, ups[0].info.QueryPrefix)
		}
	}
	o.Progress.Start(fmt.Sprintf("%d clients writing tasks through %d edge(s) for %v", clients, edges, o.Duration), 0)
	res, err := taskload.Run(ctx, taskload.Options{URLs: []string{natsURL}, Prefixes: []string{ups[0].info.QueryPrefix}, Clients: clients, Duration: o.Duration})
	if err != nil {
		return taskload.Summary{}, fmt.Errorf("bench: %w", err)
	}
	s := res.Summary()
	s.Clients, s.Edges = clients, edges
	o.Progress.Start("read the task log", 0)
	conn, err := bus.Connect(ctx, natsURL, bus.ConnectOptions{Name: "cue-bench-tasks"})
	if err != nil {
		return taskload.Summary{}, fmt.Errorf("bench: %w", err)
	}
	defer conn.Close()
	if s.Lost, s.Duplicated, err = res.Check(ctx, conn.JS); err != nil {
		return taskload.Summary{}, fmt.Errorf("bench: %w", err)
	}
	return s, nil
}

// taskLoadRepo is the workspace name, and so the repo, of the load's
// daemons.
const taskLoadRepo = "task-load"

// startMCPEdge runs mcp-edge on natsURL serving prefix, its store and log
// under dir, and waits until it is ready.
func startMCPEdge(ctx context.Context, bin, natsURL, prefix, repo, dir string) (*upProcess, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	e, err := startChild(exec.Command(bin, "--nats", natsURL, "--query-prefix", prefix, "--default-repo", repo, "--embed-model", "none",
		"--rate-limits", "off", "--state-dir", filepath.Join(dir, "state"), "--http", addr), filepath.Join(dir, "mcp-edge.log"))
	if err != nil {
		return nil, err
	}
	e.info = workspace.DaemonInfo{PID: e.cmd.Process.Pid, MCPURL: "http://" + addr + telemetry.PathMCP}
	if err := e.waitReady(ctx); err != nil {
		e.terminate()
		return nil, err
	}
	return e, nil
}

// freeLoopbackAddr is a loopback address nothing listens on just now.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// stopDaemon runs `cue down` for root, and terminates u if it still runs.
func stopDaemon(engine, root string, u *upProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := execEngine(ctx, engine, "down", "--workspace", root); err == nil && u.wait(time.Minute) == nil {
		return
	}
	u.terminate()
}

// waitReady waits up to two minutes for u to answer /readyz with 200,
// and gives up at once when it exits.
func (u *upProcess) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-u.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := waitReady(ctx, u.info, time.Now().Add(2*time.Minute), 50*time.Millisecond)
	select {
	case <-u.exited:
		return fmt.Errorf("bench: %s exited before it was ready (%v): %s", filepath.Base(u.cmd.Path), u.err, tail(u.logPath))
	default:
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, tail(u.logPath))
	}
	return nil
}

// WriteTable prints the report.
func (r *TasksReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "cue bench --tasks: each agent creates a task and moves it to active and done, again and again; %s, second edge: %s, model %s; %d CPUs, load %.2f → %.2f\n",
		r.Daemon, r.SecondEdge, r.Model, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
	fmt.Fprintf(w, "%5s %7s %6s %9s %9s %9s %9s %9s %8s %5s %4s\n", "edges", "clients", "s", "create50", "create99", "update50", "update99", "writes/s", "failures", "lost", "dup")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "%5d %7d %6.0f %6.1f ms %6.1f ms %6.1f ms %6.1f ms %9.0f %8d %5d %4d\n",
			l.Edges, l.Clients, l.Seconds, l.CreateP50Ms, l.CreateP99Ms, l.UpdateP50Ms, l.UpdateP99Ms, l.WritesPerSecond, l.Failures, l.Lost, l.Duplicated)
		for what, n := range l.FailureKinds {
			fmt.Fprintf(w, "      %d× %s\n", n, what)
		}
	}
	_, err := fmt.Fprintf(w, "wall %.0f s\n", float64(r.WallSecond))
	return err
}
