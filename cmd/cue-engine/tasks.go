package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

const tasksUsage = `usage: cue tasks list|ready|blocked [--repo R] [--status S] [--json]
       cue tasks show ID [--repo R] [--json]
       cue tasks start ID | done ID [--reason WHY] [--repo R]
       cue tasks comment ID TEXT... [--repo R]
       cue tasks dep add|rm ID DEP [--repo R]     (ID depends on DEP)`

// cmdTasks reads and writes the task board through the workspace's
// running daemon, with the tools an agent calls: list_tasks for every
// task, the ready ones (todo, every dependency done) or the blocked ones
// (waiting on a dependency not done); get_task for one whole; update_task
// to start or finish a task (with a reason), comment on it, and add or
// remove one dependency edge (a cycle is refused with its path, exit 2).
// Writes go through the same task log as an agent's.
func cmdTasks(args []string) error {
	if len(args) == 0 {
		return errors.New(tasksUsage)
	}
	verb := args[0]
	switch verb {
	case "list", "ready", "blocked":
		return tasksList(verb, args[1:])
	case "show":
		return tasksShow(args[1:])
	case "start", "done":
		return tasksSetStatus(verb, args[1:])
	case "comment":
		return tasksComment(args[1:])
	case "dep":
		return tasksDep(args[1:])
	}
	return fmt.Errorf("cue tasks %s: unknown; %s", verb, tasksUsage)
}

// tasksCaller calls the running daemon's tools for cue tasks.
func tasksCaller(c *common) (tools.Caller, func(), error) { return daemonCaller(c, "cue tasks") }

// daemonCaller calls the running daemon's tools for command; none running
// is an error that says how to start one.
func daemonCaller(c *common, command string) (tools.Caller, func(), error) {
	ws, err := c.findWorkspace()
	if err != nil {
		return nil, nil, err
	}
	info, err := ws.ReadDaemonInfo()
	if err != nil {
		return nil, nil, fmt.Errorf("%s works through the running daemon, and none runs for %s: start it with `cue up --detach` (%w)", command, ws.Root, err)
	}
	cfg, err := ws.LoadConfig()
	if err != nil {
		return nil, nil, err
	}
	return dialDaemon(info, envOr("CUE_TOKEN", cfg.MCP.QueryToken), strings.ReplaceAll(command, " ", "-"))
}

// dialDaemon connects to the daemon info describes and returns a caller
// of its tools as `cue mcp` makes one (with token; on a laptop joined to
// a team, the team's edges first), and how to close it:
// closed, not drained, since each call has its answer before it returns
// and a drain's round trips cost more than a command's own work.
func dialDaemon(info workspace.DaemonInfo, token, name string) (tools.Caller, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: name})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the daemon (pid %d) does not answer at %s: %w; restart it with `cue down && cue up --detach`", strings.ReplaceAll(name, "-", " "), info.PID, info.NATSURL, err)
	}
	caller, err := daemon.Caller(conn.NC, info, token, nil)
	if err != nil {
		conn.NC.Close()
		return nil, nil, err
	}
	return caller, conn.NC.Close, nil
}

// callDaemonTool calls tool with args marshalled, within 30 seconds.
func callDaemonTool(caller tools.Caller, tool string, args any) (json.RawMessage, error) {
	return callDaemonToolIn(context.Background(), caller, tool, args)
}

// callDaemonToolIn is callDaemonTool in ctx (which may collect notices).
func callDaemonToolIn(ctx context.Context, caller tools.Caller, tool string, args any) (json.RawMessage, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return caller.Call(ctx, tool, raw)
}

func tasksList(verb string, args []string) error {
	var a tools.ListTasksArgs
	a.Ready, a.Blocked = verb == "ready", verb == "blocked"
	fs, c := newFlags("tasks " + verb)
	fs.StringVar(&a.Repo, "repo", "", "repo of the tasks (default: the daemon's default repo)")
	fs.StringVar(&a.Status, "status", "", "only tasks of this status: todo, active, done, archived")
	asJSON := fs.Bool("json", false, "print the tasks as list_tasks' rows in JSON (every page)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	caller, done, err := tasksCaller(c)
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := tools.ListAllTasks(ctx, caller, a)
	if err != nil {
		return fmt.Errorf("cue tasks %s: %w", verb, err)
	}
	if *asJSON {
		if rows == nil {
			rows = []tools.TaskSummary{}
		}
		b, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", b)
		return err
	}
	return printTasks(os.Stdout, rows)
}

// taskArgs parses args as positional ids (want of them, or at least
// -want when want is negative) around flags, with --repo.
func taskArgs(name string, args []string, want int, extra func(*flag.FlagSet)) (ids []string, repo string, c *common, err error) {
	fs, c := newFlags("tasks " + name)
	fs.StringVar(&repo, "repo", "", "repo of the task (default: the daemon's default repo)")
	if extra != nil {
		extra(fs)
	}
	// Ids may come before or after the flags.
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, "", nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			ids = append(ids, args[0])
			args = args[1:]
		}
	}
	switch {
	case want < 0 && len(ids) < -want:
		return nil, "", nil, fmt.Errorf("cue tasks %s: give a task id and the text; %s", name, tasksUsage)
	case want >= 0 && len(ids) != want:
		return nil, "", nil, fmt.Errorf("cue tasks %s: give %d task id(s), got %d; %s", name, want, len(ids), tasksUsage)
	}
	return ids, repo, c, nil
}

// tasksShow prints one task whole: its fields, notes, close reason,
// what it depends on, what depends on it and its comments.
func tasksShow(args []string) error {
	var asJSON bool
	ids, repo, c, err := taskArgs("show", args, 1, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print the task, its dependencies and dependents as JSON")
	})
	if err != nil {
		return err
	}
	caller, done, err := tasksCaller(c)
	if err != nil {
		return err
	}
	defer done()
	id := ids[0]
	out, err := callDaemonTool(caller, tools.GetTask, tools.GetTaskArgs{ID: id, Repo: repo})
	var te *tools.Error
	if errors.As(err, &te) && te.Code == tools.CodeFileNotFound {
		return fmt.Errorf("cue tasks show %s: no such task on the board; `cue tasks list` shows them", id)
	}
	if err != nil {
		return fmt.Errorf("cue tasks show %s: %w", id, err)
	}
	var task tools.TaskDetail
	if err := json.Unmarshal(out, &task); err != nil {
		return fmt.Errorf("cue tasks show %s: the daemon's answer: %w", id, err)
	}
	links := func(reverse bool) ([]tools.TaskLink, error) {
		out, err := callDaemonTool(caller, tools.GetTaskDependencies, tools.GetTaskDependenciesArgs{ID: id, Reverse: reverse, Repo: repo})
		if err != nil {
			return nil, err
		}
		var d tools.TaskDependencies
		if err := json.Unmarshal(out, &d); err != nil {
			return nil, err
		}
		return d.Tasks, nil
	}
	deps, err := links(false)
	if err != nil {
		return fmt.Errorf("cue tasks show %s: %w", id, err)
	}
	dependents, err := links(true)
	if err != nil {
		return fmt.Errorf("cue tasks show %s: %w", id, err)
	}
	if asJSON {
		b, err := json.MarshalIndent(struct {
			Task         tools.TaskDetail `json:"task"`
			Dependencies []tools.TaskLink `json:"dependencies"`
			Dependents   []tools.TaskLink `json:"dependents"`
		}{task, deps, dependents}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", b)
		return err
	}
	return printTask(os.Stdout, task, deps, dependents)
}

// printTask writes a task's fields one a line, then its links, then its
// comments oldest first, each with its time and author.
func printTask(w io.Writer, t tools.TaskDetail, deps, dependents []tools.TaskLink) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	orDash := func(s string) string { return cmp.Or(s, "-") }
	assignee := ""
	if t.Assignee != nil {
		assignee = *t.Assignee
	}
	fmt.Fprintf(tw, "%s\t%s\n", t.ID, oneLine(t.Title))
	status := t.Status
	if t.CloseReason != "" {
		status += ": " + oneLine(t.CloseReason)
	}
	fmt.Fprintf(tw, "status\t%s\npriority\t%s\nassignee\t%s\n", status, t.Priority, orDash(assignee))
	fmt.Fprintf(tw, "tags\t%s\ncreated\t%s\nupdated\t%s\ncard\t%s\n", orDash(strings.Join(t.Tags, ", ")), orDash(t.Created), orDash(t.Updated), t.Path)
	if t.Notes != "" {
		fmt.Fprintf(tw, "notes\t%s\n", oneLine(t.Notes))
	}
	for _, l := range []struct {
		name  string
		links []tools.TaskLink
	}{{"depends on", deps}, {"needed by", dependents}} {
		if len(l.links) == 0 {
			fmt.Fprintf(tw, "%s\t-\n", l.name)
		}
		for k, d := range l.links {
			label := ""
			if k == 0 {
				label = l.name
			}
			fmt.Fprintf(tw, "%s\t%s  %s  %s\n", label, d.ID, d.Status, oneLine(d.Title))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(t.Comments) > 0 {
		fmt.Fprintf(w, "\ncomments (%d)\n", len(t.Comments))
	}
	for _, c := range t.Comments {
		head := cmp.Or(c.At, "(no time)")
		if c.By != "" {
			head += "  " + c.By
		}
		fmt.Fprintf(w, "  %s\n", head)
		for line := range strings.Lines(strings.TrimRight(c.Text, "\n")) {
			fmt.Fprintf(w, "    %s", strings.TrimRight(line, "\n")+"\n")
		}
	}
	return nil
}

// tasksSetStatus starts (active) or finishes (done, with a reason if
// given) a task.
func tasksSetStatus(verb string, args []string) error {
	var reason string
	ids, repo, c, err := taskArgs(verb, args, 1, func(fs *flag.FlagSet) {
		if verb == "done" {
			fs.StringVar(&reason, "reason", "", "why the task is closed (kept as its close_reason)")
		}
	})
	if err != nil {
		return err
	}
	status := map[string]string{"start": "active", "done": "done"}[verb]
	u := tools.TaskUpdates{Status: &status}
	if reason != "" {
		u.CloseReason = &reason
	}
	return tasksUpdate(c, "cue tasks "+verb+" "+ids[0], tools.UpdateTaskArgs{ID: ids[0], Repo: repo, Updates: u})
}

// tasksComment adds a comment to a task: the words after the id, joined
// by spaces, so quoting is optional.
func tasksComment(args []string) error {
	words, repo, c, err := taskArgs("comment", args, -2, nil)
	if err != nil {
		return err
	}
	text := strings.Join(words[1:], " ")
	return tasksUpdate(c, "cue tasks comment "+words[0], tools.UpdateTaskArgs{ID: words[0], Repo: repo, Updates: tools.TaskUpdates{Comment: &text}})
}

// tasksDep adds or removes the edge ID → DEP (ID depends on DEP).
func tasksDep(args []string) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "rm") {
		return fmt.Errorf("cue tasks dep: add or rm; %s", tasksUsage)
	}
	op := args[0]
	ids, repo, c, err := taskArgs("dep "+op, args[1:], 2, nil)
	if err != nil {
		return err
	}
	u := tools.TaskUpdates{DependsOnAdd: ids[1:]}
	if op == "rm" {
		u = tools.TaskUpdates{DependsOnRemove: ids[1:]}
	}
	return tasksUpdate(c, fmt.Sprintf("cue tasks dep %s %s %s", op, ids[0], ids[1]), tools.UpdateTaskArgs{ID: ids[0], Repo: repo, Updates: u, RequestID: uuid.NewString()})
}

// tasksUpdate calls update_task and prints the task as it now is. The
// request id lets the one retry a lost answer gets write once.
func tasksUpdate(c *common, what string, a tools.UpdateTaskArgs) error {
	caller, done, err := tasksCaller(c)
	if err != nil {
		return err
	}
	defer done()
	if a.RequestID == "" {
		a.RequestID = uuid.NewString()
	}
	out, err := callDaemonTool(caller, tools.UpdateTask, a)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var r tools.UpdateTaskResult
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("%s: the daemon's answer: %w", what, err)
	}
	_, err = fmt.Printf("%s  %s  %s\n", r.ID, r.Status, strings.ReplaceAll(r.Title, "\n", " "))
	return err
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
