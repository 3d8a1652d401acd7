package edge

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/graph"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// SourceMCP marks task events made through the MCP task tools; the indexer
// writes "file" for events derived from card files.
const SourceMCP = "mcp"

type taskHandler func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

func (e *Edge) taskTool(tool string) taskHandler {
	switch tool {
	case tools.ListTasks:
		return e.listTasks
	case tools.CreateTask:
		return e.createTask
	case tools.UpdateTask:
		return e.updateTask
	case tools.GetTaskDependencies:
		return e.getTaskDependencies
	case tools.ValidateTaskGraph:
		return e.validateTaskGraph
	case tools.GetTask:
		return e.getTask
	}
	return nil
}

// repo resolves a call's repo among those the caller's identity may read:
// the one named, else the edge's default, else the first repo with tasks
// in name order. With none of those the call is invalid. A repo the
// identity may not read is refused with the same words whether or not it
// exists, so a token learns nothing about other repos.
func (e *Edge) repo(ctx context.Context, tool, named string) (string, error) {
	id := access.FromContext(ctx)
	switch {
	case named != "" && !id.MayRead(named):
		e.refused(id, tool, "repo not readable by this client", "repo", named)
		return "", tools.InvalidParams(tool, fmt.Sprintf("repo %q: not a repo this client may read; name one of its repos", named))
	case named != "":
		return named, nil
	case e.defaultRepo != "" && id.MayRead(e.defaultRepo):
		return e.defaultRepo, nil
	}
	for _, r := range e.board.Repos() {
		if id.MayRead(r) {
			return r, nil
		}
	}
	return "", tools.InvalidParams(tool, "repo: no repo has tasks yet and this edge has no default; name one")
}

// boardReadyTimeout bounds the wait for a board still replaying the log,
// when the call's context has no earlier deadline.
const boardReadyTimeout = 10 * time.Second

// boardReady waits until the board has replayed the task log as it stood
// when it started, so a fresh edge does not answer from half a board.
func (e *Edge) boardReady(ctx context.Context) error {
	select {
	case <-e.board.Ready():
		return nil
	default:
	}
	t := time.NewTimer(boardReadyTimeout)
	defer t.Stop()
	select {
	case <-e.board.Ready():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		applied, end, known := e.board.Replay()
		if !known {
			return fmt.Errorf("edge: the task board is still replaying the task log: %d events applied, the log's end not yet read (JetStream has not answered for its state; the edge's log says more)", applied)
		}
		return fmt.Errorf("edge: the task board is still replaying the task log: %d of %d events applied", applied, end)
	}
}

func (e *Edge) now() time.Time { return e.clock.Now().UTC().Truncate(time.Second) }

func decodeArgs[T any](tool string, args json.RawMessage) (T, error) {
	var a T
	if err := json.Unmarshal(args, &a); err != nil {
		return a, tools.InvalidParams(tool, err.Error())
	}
	return a, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// listTasks is seed 002 §3. Tasks come in order of creation, then id, as
// tools.TaskSummary values.
func (e *Edge) listTasks(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.ListTasksArgs](tools.ListTasks, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.ListTasks, a.Repo)
	if err != nil {
		return nil, err
	}
	now := e.clock.Now()
	created, err := parseWhen(a.Created, now)
	if err != nil {
		return nil, tools.InvalidParams(tools.ListTasks, "created: "+err.Error())
	}
	updated, err := parseWhen(a.Updated, now)
	if err != nil {
		return nil, tools.InvalidParams(tools.ListTasks, "updated: "+err.Error())
	}
	if a.Ready && a.Blocked {
		return nil, tools.InvalidParams(tools.ListTasks, "ready and blocked: a task cannot be both; ask for one")
	}
	// closed holds the ids of done and archived tasks: what a dependency
	// must be for its dependent to be ready.
	var closed map[string]bool
	if a.Ready || a.Blocked {
		closed = map[string]bool{}
		e.board.View(repo, func(tasks map[string]events.Task) {
			for id, t := range tasks {
				if t.Status == "done" || t.Status == "archived" {
					closed[id] = true
				}
			}
		})
	}
	waiting := func(t *events.Task) bool {
		for _, d := range t.DependsOn {
			if !closed[d] {
				return true
			}
		}
		return false
	}
	match := func(t *events.Task) bool {
		switch {
		case a.Ready && (t.Status != "todo" || waiting(t)),
			a.Blocked && ((t.Status != "todo" && t.Status != "active") || !waiting(t)):
			return false
		case a.Status != "" && t.Status != a.Status,
			a.Priority != "" && t.Priority != a.Priority,
			a.Assignee != "" && !strings.EqualFold(strings.TrimPrefix(t.Assignee, "@"), strings.TrimPrefix(a.Assignee, "@")),
			len(a.Tags) > 0 && !anyTag(t.Tags, a.Tags),
			created != nil && !created(t.Created),
			updated != nil && !updated(t.Updated):
			return false
		}
		return true
	}
	// Encoded as it goes, in creation order: over 10k tasks, collecting,
	// sorting and reflecting on every one would dominate the call. A
	// counting pass sizes the buffer, which costs less than growing it.
	limit := a.Limit
	if limit == 0 {
		limit = tools.DefaultTaskPage
	}
	after, err := parseTaskCursor(a.Cursor)
	if err != nil {
		return nil, tools.InvalidParams(tools.ListTasks, "cursor: "+err.Error())
	}
	inPage := func(t *events.Task) bool {
		return match(t) && (after == nil || t.Created.After(after.created) || t.Created.Equal(after.created) && t.ID > after.id)
	}
	n := 0
	e.board.Ordered(repo, func(t *events.Task) bool {
		if inPage(t) {
			n++
		}
		return true
	})
	buf := make([]byte, 0, 2+min(n, limit)*summaryBytes)
	buf = append(buf, '[')
	shown := 0
	var last events.Task
	e.board.Ordered(repo, func(t *events.Task) bool {
		if !inPage(t) {
			return true
		}
		if shown == limit {
			return false
		}
		if shown > 0 {
			buf = append(buf, ',')
		}
		shown++
		if a.Compact {
			buf = appendJSONString(buf, compactRow(t))
		} else {
			buf = appendSummary(buf, t)
		}
		last = *t
		return true
	})
	if n > shown {
		tools.Notify(ctx, fmt.Sprintf("%s%s (these are %d of the %d tasks that match from here: pass it as cursor for the next page)",
			tools.NextCursorNotice, taskCursor(last), shown, n))
	}
	return append(buf, ']'), nil
}

// taskPosition is where a page ends in list_tasks' order: creation time,
// then id.
type taskPosition struct {
	created time.Time
	id      string
}

// taskCursor is the opaque cursor of the position just after t.
func taskCursor(t events.Task) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.Created.UnixNano(), 36) + "." + t.ID))
}

// parseTaskCursor reads taskCursor's cursor; "" is the start.
func parseTaskCursor(c string) (*taskPosition, error) {
	if c == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, errors.New("not a cursor list_tasks gave: pass the one from its notice as it is")
	}
	at, id, ok := strings.Cut(string(raw), ".")
	ns, perr := strconv.ParseInt(at, 36, 64)
	if !ok || perr != nil || id == "" {
		return nil, errors.New("not a cursor list_tasks gave: pass the one from its notice as it is")
	}
	return &taskPosition{created: time.Unix(0, ns).UTC(), id: id}, nil
}

// compactRow is a task as list_tasks' compact form writes it: id, status,
// priority, assignee (- for none) and title, by single spaces.
func compactRow(t *events.Task) string {
	assignee := t.Assignee
	if assignee == "" {
		assignee = "-"
	}
	return t.ID + " " + t.Status + " " + t.Priority + " " + assignee + " " + strings.ReplaceAll(t.Title, "\n", " ")
}

// summaryBytes is about what one encoded TaskSummary takes.
const summaryBytes = 112

// appendSummary appends t as a tools.TaskSummary, byte for byte what
// json.Marshal writes.
func appendSummary(buf []byte, t *events.Task) []byte {
	buf = append(buf, `{"id":`...)
	buf = appendJSONString(buf, t.ID)
	buf = append(buf, `,"title":`...)
	buf = appendJSONString(buf, t.Title)
	buf = append(buf, `,"status":`...)
	buf = appendJSONString(buf, t.Status)
	buf = append(buf, `,"priority":`...)
	buf = appendJSONString(buf, t.Priority)
	buf = append(buf, `,"assignee":`...)
	if t.Assignee == "" {
		buf = append(buf, "null"...)
	} else {
		buf = appendJSONString(buf, t.Assignee)
	}
	return append(buf, '}')
}

// appendJSONString appends s as json.Marshal would: plain ASCII directly,
// anything needing an escape through encoding/json.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

func anyTag(have, want []string) bool {
	for _, w := range want {
		for _, h := range have {
			if strings.EqualFold(h, w) {
				return true
			}
		}
	}
	return false
}

// parseWhen turns a date filter into a predicate, nil for no filter. A
// date compares calendar days in UTC: "2024-01-01" that day, ">" after it,
// ">=" from it, "<" before it, "<=" up to its end. A relative form is an
// age, a number and a unit (h hours, d days, w weeks, m 30 days, y 365
// days): ">2w" older than two weeks, ">=" at least that old, "<2w" or "2w"
// within the last two weeks, "<=" at most that old.
func parseWhen(s string, now time.Time) (func(time.Time) bool, error) {
	if s == "" {
		return nil, nil
	}
	op := ""
	for _, p := range []string{">=", "<=", ">", "<"} {
		if strings.HasPrefix(s, p) {
			op, s = p, s[len(p):]
			break
		}
	}
	if day, err := time.Parse(time.DateOnly, s); err == nil {
		end := day.Add(24 * time.Hour)
		switch op {
		case ">":
			return func(t time.Time) bool { return !t.Before(end) }, nil
		case ">=":
			return func(t time.Time) bool { return !t.Before(day) }, nil
		case "<":
			return func(t time.Time) bool { return t.Before(day) }, nil
		case "<=":
			return func(t time.Time) bool { return t.Before(end) }, nil
		}
		return func(t time.Time) bool { return !t.Before(day) && t.Before(end) }, nil
	}
	if len(s) < 2 {
		return nil, fmt.Errorf("%q is neither a date (2024-01-01) nor an age (2w)", s)
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q is neither a date (2024-01-01) nor an age (2w)", s)
	}
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour, 'm': 30 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return nil, fmt.Errorf("unit of %q: want h, d, w, m or y", s)
	}
	cutoff := now.Add(-time.Duration(n) * unit)
	switch op {
	case ">":
		return func(t time.Time) bool { return t.Before(cutoff) }, nil
	case ">=":
		return func(t time.Time) bool { return !t.After(cutoff) }, nil
	case "<=":
		return func(t time.Time) bool { return !t.Before(cutoff) }, nil
	}
	return func(t time.Time) bool { return t.After(cutoff) }, nil
}

// dedupe drops repeated ids, keeping the first of each.
func dedupe(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// taskError maps the Board's and the dependency check's errors to the
// seed's: DependencyNotFound (1001), CircularDependency (1002); and a
// write that lost every race to Busy (1008).
func taskError(repo string, err error) error {
	var missing *tasks.MissingDependencyError
	var cycle *graph.CycleError
	switch {
	case errors.As(err, &missing):
		return tools.DependencyNotFound(missing.TaskID, missing.Missing)
	case errors.As(err, &cycle):
		return tools.CircularDependency(cycle.Path)
	case errors.Is(err, tasks.ErrConflict):
		return tools.Busy(repo, 100*time.Millisecond)
	}
	return err
}

// requestReused refuses a request id already used for another call.
func requestReused(id string, prior *events.TaskEvent) *tools.Error {
	return &tools.Error{Code: tools.CodeInvalidParams, Message: "Invalid params: request_id was used for another call",
		Data: map[string]any{"request_id": id, "used_for": string(prior.Op), "task_id": prior.Task.ID,
			"suggestion": "Use a new request_id (e.g. a UUID) for each call; reuse one only to retry the same call"}}
}

// createTask is seed 002 §4. It fails with DependencyNotFound (1001) when
// a depends_on id is not a task of the repo and CircularDependency (1002)
// when a dependency would close a cycle; the check runs against the state
// the event is appended to (see tasks.Board.Mutate).
func (e *Edge) createTask(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.CreateTaskArgs](tools.CreateTask, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.CreateTask, a.Repo)
	if err != nil {
		return nil, err
	}
	if out, forwarded, err := e.forwardTaskWrite(ctx, tools.CreateTask, repo, args); forwarded {
		return out, err
	}
	now := e.now()
	deps := dedupe(a.DependsOn)
	tags := dedupe(a.Tags)
	var created events.Task
	seq, prior, err := e.board.MutateRequest(ctx, repo, a.RequestID, func(cur map[string]events.Task) (events.TaskEvent, error) {
		id := tasks.NewID(now, a.Title, func(id string) bool { _, ok := cur[id]; return ok })
		if err := tasks.CheckDependencies(cur, id, deps); err != nil {
			return events.TaskEvent{}, err
		}
		created = events.Task{
			ID: id, Title: a.Title, Status: "todo", Priority: cmp.Or(a.Priority, "medium"),
			Assignee: a.Assignee, Tags: tags, DependsOn: deps,
			Created: now, Updated: now, Path: tools.CardPath(id),
		}
		return events.TaskEvent{Op: events.TaskCreated, Task: created, Actor: e.actorOf(ctx), Source: SourceMCP}, nil
	})
	var missing *tasks.MissingDependencyError
	if errors.As(err, &missing) {
		// The id was only proposed; naming it would mislead.
		return nil, tools.DependencyNotFound("", missing.Missing)
	}
	if err != nil {
		return nil, taskError(repo, err)
	}
	noteWriteSeq(ctx, seq)
	if prior != nil {
		if prior.Op != events.TaskCreated {
			return nil, requestReused(a.RequestID, prior)
		}
		created = prior.Task
	}
	return json.Marshal(tools.CreateTaskResult{
		ID:   created.ID,
		Path: created.Path,
		Metadata: tools.TaskMetadata{
			Title: created.Title, Status: created.Status, Priority: created.Priority,
			Assignee: nullable(created.Assignee), Tags: created.Tags, DependsOn: created.DependsOn,
			Created: created.Created.Format(time.RFC3339),
		},
	})
}

// updateTask is seed 002 §7, plus depends_on: the full new list, checked
// like create_task's. An unknown id is TaskNotFound (1001). The update is
// applied to the task's state at the moment of the append, so concurrent
// updates of different fields both survive.
func (e *Edge) updateTask(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.UpdateTaskArgs](tools.UpdateTask, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.UpdateTask, a.Repo)
	if err != nil {
		return nil, err
	}
	if out, forwarded, err := e.forwardTaskWrite(ctx, tools.UpdateTask, repo, args); forwarded {
		return out, err
	}
	u := a.Updates
	var fields []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"status", u.Status != nil}, {"assignee", u.Assignee != nil}, {"priority", u.Priority != nil}, {"notes", u.Notes != nil}, {"depends_on", u.DependsOn != nil || len(u.DependsOnAdd)+len(u.DependsOnRemove) > 0}, {"close_reason", u.CloseReason != nil}, {"comments", u.Comment != nil}} {
		if f.set {
			fields = append(fields, f.name)
		}
	}
	if u.DependsOn != nil && len(u.DependsOnAdd)+len(u.DependsOnRemove) > 0 {
		return nil, tools.InvalidParams(tools.UpdateTask, "updates: give depends_on (the full new list) or depends_on_add / depends_on_remove (single edges), not both")
	}
	if u.Comment != nil && strings.TrimSpace(*u.Comment) == "" {
		return nil, tools.InvalidParams(tools.UpdateTask, "updates: comment: write some text, not only spaces")
	}
	now := e.now()
	author := access.FromContext(ctx).Token
	var updated events.Task
	seq, prior, err := e.board.MutateRequest(ctx, repo, a.RequestID, func(cur map[string]events.Task) (events.TaskEvent, error) {
		t, ok := cur[a.ID]
		if !ok {
			return events.TaskEvent{}, tools.TaskNotFound(repo, a.ID)
		}
		if u.Status != nil {
			t.Status = *u.Status
		}
		closed := t.Status == "done" || t.Status == "archived"
		switch {
		case u.CloseReason != nil && !closed:
			return events.TaskEvent{}, tools.InvalidParams(tools.UpdateTask, fmt.Sprintf("updates: close_reason: task %s would be %s; a reason goes with status done or archived, in the same update or after it", a.ID, t.Status))
		case u.CloseReason != nil:
			t.CloseReason = *u.CloseReason
		case !closed:
			t.CloseReason = "" // reopened: the old reason no longer holds
		}
		if u.Comment != nil {
			if len(t.Comments) >= tools.MaxTaskComments {
				return events.TaskEvent{}, tools.InvalidParams(tools.UpdateTask, fmt.Sprintf("updates: comment: task %s has %d comments, the most a card keeps; sum them up in notes or go on in a new task", a.ID, len(t.Comments)))
			}
			t.Comments = append(slices.Clip(t.Comments), events.TaskComment{At: now, By: author, Text: *u.Comment})
		}
		if u.Assignee != nil {
			t.Assignee = *u.Assignee
		}
		if u.Priority != nil {
			t.Priority = *u.Priority
		}
		if u.Notes != nil {
			t.Notes = *u.Notes
		}
		if deps, added, ok := newDependencies(t.DependsOn, u); ok {
			if err := tasks.CheckDependencies(cur, a.ID, added); err != nil {
				return events.TaskEvent{}, err
			}
			t.DependsOn = deps
		}
		t.Updated = now
		updated = t
		return events.TaskEvent{Op: events.TaskUpdated, Task: t, Actor: e.actorOf(ctx), Source: SourceMCP}, nil
	})
	if err != nil {
		return nil, taskError(repo, err)
	}
	noteWriteSeq(ctx, seq)
	if prior != nil {
		if prior.Op != events.TaskUpdated || prior.Task.ID != a.ID {
			return nil, requestReused(a.RequestID, prior)
		}
		updated = prior.Task
	}
	return json.Marshal(tools.UpdateTaskResult{
		ID: updated.ID, Title: updated.Title, Status: updated.Status, Assignee: nullable(updated.Assignee),
		Priority: updated.Priority, UpdatedAt: updated.Updated.Format(time.RFC3339), UpdatedFields: fields,
	})
}

// newDependencies is the dependency list u leaves a task that depends on
// cur, the edges of it to check (missing tasks, cycles), and whether u
// changes the list: the full new list, all checked; or cur with
// u.DependsOnRemove taken out and u.DependsOnAdd appended (an edge the
// task has already stays where it is), only the new edges checked, so
// an old edge to a task since deleted does not block adding another.
// Built on the task's state at the append, so concurrent single-edge
// changes all survive.
func newDependencies(cur []string, u tools.TaskUpdates) (deps, check []string, changed bool) {
	if u.DependsOn != nil {
		deps = dedupe(*u.DependsOn)
		return deps, deps, true
	}
	if len(u.DependsOnAdd)+len(u.DependsOnRemove) == 0 {
		return nil, nil, false
	}
	deps = slices.DeleteFunc(slices.Clone(cur), func(id string) bool { return slices.Contains(u.DependsOnRemove, id) })
	for _, id := range dedupe(u.DependsOnAdd) {
		if !slices.Contains(deps, id) {
			deps = append(deps, id)
			if !slices.Contains(cur, id) {
				check = append(check, id)
			}
		}
	}
	return deps, check, true
}

// getTask answers one task whole, as its card holds it. An unknown id is
// TaskNotFound (1001).
func (e *Edge) getTask(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.GetTaskArgs](tools.GetTask, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.GetTask, a.Repo)
	if err != nil {
		return nil, err
	}
	t, ok := e.board.Task(repo, a.ID)
	if !ok {
		return nil, tools.TaskNotFound(repo, a.ID)
	}
	d := tools.TaskDetail{
		ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority, Assignee: nullable(t.Assignee),
		Tags: orEmpty(t.Tags), DependsOn: orEmpty(t.DependsOn), Notes: t.Notes, CloseReason: t.CloseReason,
		Comments: make([]tools.TaskComment, 0, len(t.Comments)),
		Created:  rfc3339(t.Created), Updated: rfc3339(t.Updated), Path: t.Path,
	}
	for _, c := range t.Comments {
		d.Comments = append(d.Comments, tools.TaskComment{At: rfc3339(c.At), By: c.By, Text: c.Text})
	}
	return json.Marshal(d)
}

// rfc3339 writes a card time in UTC, "" for none.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// getTaskDependencies is seed 002 §5: the task's dependencies in the order
// its card lists them, or with reverse its dependents by id. An unknown id
// is TaskNotFound (1001).
func (e *Edge) getTaskDependencies(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.GetTaskDependenciesArgs](tools.GetTaskDependencies, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.GetTaskDependencies, a.Repo)
	if err != nil {
		return nil, err
	}
	out := tools.TaskDependencies{TaskID: a.ID, Type: "dependencies", Tasks: []tools.TaskLink{}}
	var found bool
	e.board.View(repo, func(all map[string]events.Task) {
		var t events.Task
		if t, found = all[a.ID]; !found {
			return
		}
		if !a.Reverse {
			for _, d := range t.DependsOn {
				if dt, ok := all[d]; ok {
					out.Tasks = append(out.Tasks, tools.TaskLink{ID: d, Title: dt.Title, Status: dt.Status})
				} else {
					out.Tasks = append(out.Tasks, tools.TaskLink{ID: d, Status: "missing"})
				}
			}
			return
		}
		out.Type = "dependents"
		for id, dt := range all {
			if slices.Contains(dt.DependsOn, a.ID) {
				out.Tasks = append(out.Tasks, tools.TaskLink{ID: id, Title: dt.Title, Status: dt.Status})
			}
		}
		slices.SortFunc(out.Tasks, func(x, y tools.TaskLink) int { return strings.Compare(x.ID, y.ID) })
	})
	if !found {
		return nil, tools.TaskNotFound(repo, a.ID)
	}
	out.Count = len(out.Tasks)
	return json.Marshal(out)
}

// validateTaskGraph is seed 002 §6: the whole graph, or the part reachable
// from one task. A cycle is a result (valid false), not an error; an
// unknown id is TaskNotFound (1001).
func (e *Edge) validateTaskGraph(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a, err := decodeArgs[tools.ValidateTaskGraphArgs](tools.ValidateTaskGraph, args)
	if err != nil {
		return nil, err
	}
	repo, err := e.repo(ctx, tools.ValidateTaskGraph, a.Repo)
	if err != nil {
		return nil, err
	}
	var (
		cycle []string
		found = true
	)
	e.board.View(repo, func(all map[string]events.Task) {
		if a.ID != "" {
			if _, found = all[a.ID]; !found {
				return
			}
		}
		g := tasks.Graph(all, "")
		if a.ID != "" {
			cycle = g.CycleFrom(a.ID)
		} else {
			cycle = g.Cycle()
		}
	})
	if !found {
		return nil, tools.TaskNotFound(repo, a.ID)
	}
	out := tools.GraphValidation{Valid: cycle == nil, TaskID: a.ID}
	switch {
	case cycle != nil:
		out.Error = "Circular dependency detected: " + tools.FormatCycle(cycle)
	case a.ID != "":
		out.Message = "Task dependencies are valid"
	default:
		out.Message = "All task dependencies are valid (no circular dependencies)"
	}
	return json.Marshal(out)
}
