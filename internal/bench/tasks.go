package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/taskload"
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
	// Edges are the daemons per level (default 1 and 2): a second one
	// joins the first one's NATS server under the same workspace name,
	// and the clients' calls are spread over both edges.
	Edges []int
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

// TasksReport is `cue bench --tasks`.
type TasksReport struct {
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	Machine   Machine   `json:"machine"`
	// Daemon is how the daemons ran; Model their embedding model.
	Daemon string `json:"daemon"`
	Model  string `json:"model"`
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
		Daemon:  filepath.Base(o.Engine) + " up",
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
	)
	defer func() {
		o.Progress.Start(fmt.Sprintf("stop %d daemon(s)", len(ups)), 0)
		// The last first: the first one's NATS server serves the others.
		for i := len(ups) - 1; i >= 0; i-- {
			stopDaemon(o.Engine, roots[i], ups[i])
		}
	}()
	o.Progress.Start(fmt.Sprintf("start %d daemon(s) for %d clients", edges, clients), 0)
	for i := range edges {
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
			{"workspace", "name", `"task-load"`},
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
		if err := waitReady(ctx, u.info, 2*time.Minute); err != nil {
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

// stopDaemon runs `cue down` for root, and terminates u if it still runs.
func stopDaemon(engine, root string, u *upProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := execEngine(ctx, engine, "down", "--workspace", root); err == nil && u.wait(time.Minute) == nil {
		return
	}
	u.terminate()
}

// waitReady waits until the daemon's edge answers /readyz with 200.
func waitReady(ctx context.Context, info workspace.DaemonInfo, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, ok, err := readyz(ctx, info)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the daemon (pid %d) was not ready within %v: %v", info.PID, timeout, err)
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// WriteTable prints the report.
func (r *TasksReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "cue bench --tasks: each agent creates a task and moves it to active and done, again and again; %s, model %s; %d CPUs, load %.2f → %.2f\n",
		r.Daemon, r.Model, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
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
