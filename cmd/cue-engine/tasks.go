package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
)

const tasksUsage = "usage: cue tasks list|ready|blocked [--repo R] [--status S] [--json]"

// cmdTasks lists the task board through the workspace's running daemon,
// as list_tasks answers an agent: every task, the ready ones (todo, every
// dependency done) or the blocked ones (waiting on a dependency not done).
func cmdTasks(args []string) error {
	if len(args) == 0 {
		return errors.New(tasksUsage)
	}
	verb := args[0]
	var a tools.ListTasksArgs
	switch verb {
	case "list":
	case "ready":
		a.Ready = true
	case "blocked":
		a.Blocked = true
	default:
		return fmt.Errorf("cue tasks %s: unknown; %s", verb, tasksUsage)
	}
	fs, c := newFlags("tasks " + verb)
	fs.StringVar(&a.Repo, "repo", "", "repo of the tasks (default: the daemon's default repo)")
	fs.StringVar(&a.Status, "status", "", "only tasks of this status: todo, active, done, archived")
	asJSON := fs.Bool("json", false, "print list_tasks' answer as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	info, err := ws.ReadDaemonInfo()
	if err != nil {
		return fmt.Errorf("cue tasks reads the task board of the running daemon, and none runs for %s: start it with `cue up --detach` (%w)", ws.Root, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-tasks"})
	if err != nil {
		return fmt.Errorf("cue tasks: the daemon (pid %d) does not answer at %s: %w; restart it with `cue down && cue up --detach`", info.PID, info.NATSURL, err)
	}
	defer conn.Close()
	caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: info.QueryPrefix, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	out, err := caller.Call(ctx, tools.ListTasks, raw)
	if err != nil {
		return fmt.Errorf("cue tasks %s: %w", verb, err)
	}
	if *asJSON {
		_, err := fmt.Fprintf(os.Stdout, "%s\n", out)
		return err
	}
	var rows []tools.TaskSummary
	if err := json.Unmarshal(out, &rows); err != nil {
		return fmt.Errorf("cue tasks %s: the daemon's answer: %w", verb, err)
	}
	return printTasks(os.Stdout, rows)
}

// printTasks writes one task a line: id, status, priority, assignee (- for
// none) and title, in columns.
func printTasks(w io.Writer, rows []tools.TaskSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		assignee := "-"
		if r.Assignee != nil && *r.Assignee != "" {
			assignee = *r.Assignee
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Priority, assignee, strings.ReplaceAll(r.Title, "\n", " "))
	}
	return tw.Flush()
}
