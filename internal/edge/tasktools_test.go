package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/events"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenNow is the clock of the golden transcript: seed 002's create_task
// example time.
var goldenNow = time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC)

// startBoard runs a Board on conn until the test ends.
func startBoard(t testing.TB, conn *bus.Conn) *tasks.Board {
	t.Helper()
	b := tasks.NewBoard(conn.JS, nil)
	b.SetDurable(conn.Durable) // as the daemon's: writes answered once durable
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return b
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// seedBoardTasks are seed 002's example tasks, as the indexer would have
// read them from card files.
func seedBoardTasks() []events.Task {
	card := func(id, title, status, prio, assignee, created, updated string, tags []string, deps ...string) events.Task {
		return events.Task{ID: id, Title: title, Status: status, Priority: prio, Assignee: assignee, Tags: tags,
			DependsOn: deps, Created: day(created), Updated: day(updated), Path: tools.CardPath(id)}
	}
	return []events.Task{
		card("abc123", "Setup auth framework", "done", "medium", "", "2025-12-01T09:00:00Z", "2025-12-10T09:00:00Z", []string{"auth"}),
		card("def456", "Create user database", "active", "high", "dba", "2025-12-05T09:00:00Z", "2026-01-02T08:00:00Z", []string{"db"}),
		card("xyz789", "Implement login API", "todo", "high", "@developer", "2025-12-28T09:00:00Z", "2025-12-28T09:00:00Z", []string{"auth", "backend"}, "abc123", "def456"),
		card("ghi012", "Add login UI", "todo", "medium", "", "2025-12-30T09:00:00Z", "2025-12-30T09:00:00Z", []string{"frontend"}, "xyz789"),
		card("2a9f1x", "Implement Login", "todo", "low", "user", "2025-12-31T10:30:00Z", "2025-12-31T10:30:00Z", nil),
	}
}

func appendFileTask(t testing.TB, b *tasks.Board, repo string, tk events.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.Append(ctx, events.TaskEvent{Repo: repo, Op: events.TaskCreated, Task: tk, Actor: "indexer", Source: "file"}, nil); err != nil {
		t.Fatal(err)
	}
}

type goldenStep struct {
	Name      string          `json:"name"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	FileEvent *events.Task    `json:"file_event,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     *tools.Error    `json:"error,omitempty"`
}

// TestTaskToolsGolden runs testdata/task_tools.json (seed 002's example
// requests, and the errors around them) against an edge and compares each
// answer with testdata/task_tools.golden.json; -update rewrites it.
func TestTaskToolsGolden(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	for _, tk := range seedBoardTasks() {
		appendFileTask(t, b, "app", tk)
	}
	appendFileTask(t, b, "web", events.Task{ID: "web001", Title: "Landing page", Status: "todo", Priority: "low", Created: goldenNow, Updated: goldenNow, Path: tools.CardPath("web001")})
	e := New(nil, nil, WithBoard(b), WithActor("golden"), WithDefaultRepo("app"), WithClock(clock.NewDeterministic(goldenNow)))

	raw, err := os.ReadFile(filepath.Join("testdata", "task_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []goldenStep
	if err := json.Unmarshal(raw, &steps); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range steps {
		s := &steps[i]
		if s.FileEvent != nil {
			ev := events.TaskEvent{Repo: "app", Op: events.TaskUpdated, Task: *s.FileEvent, Actor: "indexer", Source: "file"}
			if _, err := b.Append(ctx, ev, nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		out, err := e.Call(ctx, s.Tool, s.Args)
		var te *tools.Error
		switch {
		case errors.As(err, &te):
			s.Error = te
		case err != nil:
			t.Fatalf("%s: %v", s.Name, err)
		default:
			s.Response = out
		}
	}
	golden := filepath.Join("testdata", "task_tools.golden.json")
	want, same := compareGolden(t, golden, steps)
	if !same {
		var ws []goldenStep
		_ = json.Unmarshal(want, &ws)
		for i := range steps {
			g, _ := json.Marshal(steps[i])
			var w []byte
			if i < len(ws) {
				w, _ = json.Marshal(ws[i])
			}
			if !bytes.Equal(g, w) {
				t.Errorf("step %d %q:\n got %s\nwant %s", i, steps[i].Name, g, w)
			}
		}
		t.Fatalf("answers differ from %s (run with -update if the change is intended)", golden)
	}
}

// TestTaskToolsTwoEdgeRace gives two edges, each with its own Board on one
// NATS server, concurrent calls that together would form a cycle: exactly
// one succeeds and the other gets CircularDependency (1002).
func TestTaskToolsTwoEdgeRace(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b1, b2 := startBoard(t, conn), startBoard(t, conn)
	e1 := New(nil, nil, WithBoard(b1), WithActor("edge-1"))
	e2 := New(nil, nil, WithBoard(b2), WithActor("edge-2"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	call := func(e *Edge, tool, args string) (map[string]any, error) {
		out, err := e.Call(ctx, tool, json.RawMessage(args))
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(out, &m)
	}
	const iterations = 50
	for i := range iterations {
		repo := fmt.Sprintf("race%d", i)
		a, err := call(e1, tools.CreateTask, `{"repo":"`+repo+`","title":"a"}`)
		if err != nil {
			t.Fatal(err)
		}
		bt, err := call(e1, tools.CreateTask, `{"repo":"`+repo+`","title":"b"}`)
		if err != nil {
			t.Fatal(err)
		}
		idA, idB := a["id"].(string), bt["id"].(string)
		// Odd iterations race a create (c depends on b, and b on c cannot
		// exist before c does) against updates; even ones race two updates.
		var calls [2]func() error
		if i%2 == 0 {
			calls[0] = func() error {
				_, err := call(e1, tools.UpdateTask, `{"repo":"`+repo+`","id":"`+idA+`","updates":{"depends_on":["`+idB+`"]}}`)
				return err
			}
			calls[1] = func() error {
				_, err := call(e2, tools.UpdateTask, `{"repo":"`+repo+`","id":"`+idB+`","updates":{"depends_on":["`+idA+`"]}}`)
				return err
			}
		} else {
			// a → b already; race b → a (edge 2) against a → b kept plus
			// a status change (edge 1): the status change never conflicts,
			// so both succeed unless the cycle check fires.
			if _, err := call(e1, tools.UpdateTask, `{"repo":"`+repo+`","id":"`+idA+`","updates":{"depends_on":["`+idB+`"]}}`); err != nil {
				t.Fatal(err)
			}
			calls[0] = func() error {
				_, err := call(e1, tools.UpdateTask, `{"repo":"`+repo+`","id":"`+idA+`","updates":{"status":"active"}}`)
				return err
			}
			calls[1] = func() error {
				_, err := call(e2, tools.UpdateTask, `{"repo":"`+repo+`","id":"`+idB+`","updates":{"depends_on":["`+idA+`"]}}`)
				return err
			}
		}
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		for j := range calls {
			wg.Go(func() { errs[j] = calls[j]() })
		}
		wg.Wait()
		ok, cycles := 0, 0
		for _, err := range errs {
			var te *tools.Error
			switch {
			case err == nil:
				ok++
			case errors.As(err, &te) && te.Code == tools.CodeCycle:
				cycles++
			default:
				t.Fatalf("iteration %d: %v", i, err)
			}
		}
		if i%2 == 0 && (ok != 1 || cycles != 1) {
			t.Fatalf("iteration %d: %d succeeded, %d cycles: %v", i, ok, cycles, errs)
		}
		if i%2 == 1 && (ok != 1 || cycles != 1 || errs[0] != nil) {
			t.Fatalf("iteration %d: want the status update to win and the cycle refused: %v", i, errs)
		}
		// Both boards converge on an acyclic graph with no lost update.
		for _, e := range []*Edge{e1, e2} {
			if err := e.board.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			v, err := call(e, tools.ValidateTaskGraph, `{"repo":"`+repo+`"}`)
			if err != nil || v["valid"] != true {
				t.Fatalf("iteration %d: graph %v, %v", i, v, err)
			}
			if i%2 == 1 {
				if tk, _ := e.board.Task(repo, idA); tk.Status != "active" || len(tk.DependsOn) != 1 {
					t.Fatalf("iteration %d: update lost: %+v", i, tk)
				}
			}
		}
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		filter string
		at     time.Time
		want   bool
	}{
		{"2026-01-10", time.Date(2026, 1, 10, 23, 59, 0, 0, time.UTC), true},
		{"2026-01-10", time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC), false},
		{">2026-01-10", time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC), true},
		{">2026-01-10", time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC), false},
		{">=2026-01-10", time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), true},
		{"<2026-01-10", time.Date(2026, 1, 9, 23, 0, 0, 0, time.UTC), true},
		{"<=2026-01-10", time.Date(2026, 1, 10, 23, 0, 0, 0, time.UTC), true},
		{">2w", now.Add(-15 * 24 * time.Hour), true},
		{">2w", now.Add(-13 * 24 * time.Hour), false},
		{"<3d", now.Add(-2 * 24 * time.Hour), true},
		{"3d", now.Add(-4 * 24 * time.Hour), false},
		{"<=12h", now.Add(-12 * time.Hour), true},
		{">1m", now.Add(-31 * 24 * time.Hour), true},
		{">=1y", now.Add(-365 * 24 * time.Hour), true},
	}
	for _, c := range cases {
		f, err := parseWhen(c.filter, now)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got := f(c.at); got != c.want {
			t.Errorf("%s at %s = %v, want %v", c.filter, c.at, got, c.want)
		}
	}
	for _, bad := range []string{"x", ">", "2w2", "3q", "-1d"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestAppendSummaryMatchesMarshal(t *testing.T) {
	for _, tk := range []events.Task{
		{ID: "abc123", Title: "plain", Status: "todo", Priority: "low"},
		{ID: "abc123", Title: `quote " back \ tab 	 <b>&`, Status: "todo", Priority: "low", Assignee: "@dév"},
		{ID: "abc123", Title: "ünïcødé → \u2028 \x01", Status: "done", Priority: "high", Assignee: "x"},
	} {
		want, _ := json.Marshal(tools.TaskSummary{ID: tk.ID, Title: tk.Title, Status: tk.Status, Priority: tk.Priority, Assignee: nullable(tk.Assignee)})
		if got := appendSummary(nil, &tk); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// TestTaskToolsNoLostUpdate: two edges update different fields of one task
// at once; both changes survive, because each update is applied to the
// state it is appended to.
func TestTaskToolsNoLostUpdate(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b1, b2 := startBoard(t, conn), startBoard(t, conn)
	e1 := New(nil, nil, WithBoard(b1), WithDefaultRepo("app"))
	e2 := New(nil, nil, WithBoard(b2), WithDefaultRepo("app"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 20 {
		out, err := e1.Call(ctx, tools.CreateTask, json.RawMessage(fmt.Sprintf(`{"title":"task %d"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		var c tools.CreateTaskResult
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			_, errs[0] = e1.Call(ctx, tools.UpdateTask, json.RawMessage(`{"id":"`+c.ID+`","updates":{"status":"active"}}`))
		})
		wg.Go(func() {
			_, errs[1] = e2.Call(ctx, tools.UpdateTask, json.RawMessage(`{"id":"`+c.ID+`","updates":{"assignee":"ada","priority":"critical"}}`))
		})
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for _, b := range []*tasks.Board{b1, b2} {
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if tk, _ := b.Task("app", c.ID); tk.Status != "active" || tk.Assignee != "ada" || tk.Priority != "critical" {
				t.Fatalf("iteration %d: an update was lost: %+v", i, tk)
			}
		}
	}
}

// list_tasks' ready keeps todo tasks whose dependencies are all done;
// blocked keeps open tasks waiting on one that is not (or is no task).
func TestListTasksReadyAndBlocked(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	for _, tk := range seedBoardTasks() {
		appendFileTask(t, b, "app", tk)
	}
	e := New(nil, nil, WithBoard(b), WithDefaultRepo("app"), WithClock(clock.NewDeterministic(goldenNow)))
	ids := func(args string) []string {
		t.Helper()
		out, err := e.Call(context.Background(), tools.ListTasks, json.RawMessage(args))
		if err != nil {
			t.Fatalf("list_tasks %s: %v", args, err)
		}
		var got []tools.TaskSummary
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		return ids
	}
	check := func(args string, want ...string) {
		t.Helper()
		if got := ids(args); !slices.Equal(got, want) {
			t.Errorf("list_tasks %s: %v, want %v", args, got, want)
		}
	}
	// abc123 done; def456 active; xyz789 todo on abc123 and def456;
	// ghi012 todo on xyz789; 2a9f1x todo on nothing.
	check(`{"ready":true}`, "2a9f1x")
	check(`{"blocked":true}`, "xyz789", "ghi012")
	check(`{"blocked":true,"priority":"high"}`, "xyz789")

	def := seedBoardTasks()[1]
	def.Status = "done"
	ctx := context.Background()
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskUpdated, Task: def, Source: "file"}, nil); err != nil {
		t.Fatal(err)
	}
	orphan := events.Task{ID: "orph01", Title: "Waits on a task that is gone", Status: "active", Priority: "low", DependsOn: []string{"gone01"},
		Created: goldenNow, Updated: goldenNow, Path: tools.CardPath("orph01")}
	appendFileTask(t, b, "app", orphan)
	check(`{"ready":true}`, "xyz789", "2a9f1x")
	check(`{"blocked":true}`, "ghi012", "orph01")

	_, err := e.Call(ctx, tools.ListTasks, json.RawMessage(`{"ready":true,"blocked":true}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("ready and blocked together: %v, want -32602", err)
	}
}

// update_task's depends_on_add and depends_on_remove change single edges
// of the list the task holds at the append: two edges added at once by
// two edges (processes) both stay; an edge closing a cycle is refused with
// its path; an old edge to a task since gone does not block adding
// another; depends_on and the single-edge fields together are -32602.
func TestUpdateTaskSingleDependencyEdges(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b1, b2 := startBoard(t, conn), startBoard(t, conn)
	e1 := New(nil, nil, WithBoard(b1), WithDefaultRepo("app"))
	e2 := New(nil, nil, WithBoard(b2), WithDefaultRepo("app"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := func(title string) string {
		t.Helper()
		out, err := e1.Call(ctx, tools.CreateTask, json.RawMessage(`{"title":"`+title+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var c tools.CreateTaskResult
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	top, x, y, z := create("top"), create("x"), create("y"), create("z")
	deps := func() []string {
		t.Helper()
		if err := b1.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		tk, _ := b1.Task("app", top)
		return tk.DependsOn
	}
	update := func(e *Edge, id, updates string) error {
		_, err := e.Call(ctx, tools.UpdateTask, json.RawMessage(`{"id":"`+id+`","updates":`+updates+`}`))
		return err
	}

	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = update(e1, top, `{"depends_on_add":["`+x+`"]}`) })
	wg.Go(func() { errs[1] = update(e2, top, `{"depends_on_add":["`+y+`"]}`) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := deps(); len(got) != 2 || !slices.Contains(got, x) || !slices.Contains(got, y) {
		t.Fatalf("after two concurrent adds: depends_on %v, want %s and %s", got, x, y)
	}

	if err := update(e1, top, `{"depends_on_remove":["`+x+`"],"depends_on_add":["`+z+`","`+y+`"]}`); err != nil {
		t.Fatal(err)
	}
	if got := deps(); !slices.Equal(got, []string{y, z}) {
		t.Fatalf("after removing %s and adding %s: %v, want [%s %s]", x, z, got, y, z)
	}

	// z → top would close top → z → top.
	err := update(e2, z, `{"depends_on_add":["`+top+`"]}`)
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeCycle {
		t.Fatalf("closing a cycle: %v, want CircularDependency", err)
	}
	if data, _ := json.Marshal(te.Data); !bytes.Contains(data, []byte(top)) || !bytes.Contains(data, []byte(z)) {
		t.Errorf("the refusal does not name the cycle's path: %v", te.Data)
	}
	if err := update(e1, top, `{"depends_on_add":["nosuch"]}`); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("adding an edge to no task: %v, want TaskNotFound", err)
	}

	orphan := events.Task{ID: "orph01", Title: "Waits on a task that is gone", Status: "todo", Priority: "low", DependsOn: []string{"gone01"},
		Created: goldenNow, Updated: goldenNow, Path: tools.CardPath("orph01")}
	appendFileTask(t, b1, "app", orphan)
	if err := update(e1, "orph01", `{"depends_on_add":["`+x+`"]}`); err != nil {
		t.Fatalf("adding an edge beside one to a task since gone: %v", err)
	}

	err = update(e1, top, `{"depends_on":["`+x+`"],"depends_on_add":["`+y+`"]}`)
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("depends_on with depends_on_add: %v, want -32602", err)
	}
}

// list_tasks answers pages of limit (default 50) in creation order; a
// page with more after it tells the next cursor in a notice, cached pages
// too; following the cursors lists every task once; compact answers one
// row string a task; a cursor list_tasks did not give is -32602.
func TestListTasksPages(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	const total = 120
	var want []string
	for i := range total {
		tk := events.Task{ID: fmt.Sprintf("p%05d", i), Title: fmt.Sprintf("task %d", i), Status: "todo", Priority: "low",
			Created: goldenNow.Add(time.Duration(i/3) * time.Minute), Updated: goldenNow, Path: tools.CardPath(fmt.Sprintf("p%05d", i))}
		if i == 7 {
			tk.Assignee = "ada"
		}
		appendFileTask(t, b, "app", tk)
		want = append(want, tk.ID)
	}
	e := New(nil, nil, WithBoard(b), WithDefaultRepo("app"), WithClock(clock.NewDeterministic(goldenNow)))
	page := func(args string) (rows json.RawMessage, cursor string) {
		t.Helper()
		ctx, notices := tools.WithNotices(context.Background())
		out, err := e.Call(ctx, tools.ListTasks, json.RawMessage(args))
		if err != nil {
			t.Fatalf("list_tasks %s: %v", args, err)
		}
		for _, n := range notices.Texts() {
			if c, ok := strings.CutPrefix(n, tools.NextCursorNotice); ok {
				cursor, _, _ = strings.Cut(c, " ")
			}
		}
		return out, cursor
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		args := `{}`
		if cursor != "" {
			args = `{"cursor":"` + cursor + `"}`
		}
		out, next := page(args)
		var rows []tools.TaskSummary
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) > tools.DefaultTaskPage {
			t.Fatalf("a page of %d tasks, over the default %d", len(rows), tools.DefaultTaskPage)
		}
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if pages == 0 {
			// The same first page again, from the answer cache, still
			// tells its cursor.
			if _, again := page(args); again != next {
				t.Errorf("the cached first page's cursor %q, want %q", again, next)
			}
		}
		if next == "" {
			break
		}
		if pages > total {
			t.Fatal("the cursors never end")
		}
		cursor = next
	}
	if !slices.Equal(got, want) {
		t.Errorf("following the cursors listed %d tasks, want the %d in creation order once each", len(got), total)
	}

	if _, next := page(`{"limit":1000}`); next != "" {
		t.Errorf("a page holding every task tells cursor %q", next)
	}
	out, _ := page(`{"limit":8,"compact":true}`)
	var rows []string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("compact answer: %v: %s", err, out)
	}
	if len(rows) != 8 || rows[0] != "p00000 todo low - task 0" || rows[7] != "p00007 todo low ada task 7" {
		t.Errorf("compact rows: %q", rows)
	}

	_, err := e.Call(context.Background(), tools.ListTasks, json.RawMessage(`{"cursor":"not-a-cursor!"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("a made-up cursor: %v, want -32602", err)
	}
}

// A close reason goes with done or archived and leaves on reopening;
// comments from two edges at once are both kept, in log order, with the
// caller's token as author; get_task on either edge answers the task
// whole; the comment limit is -32602 naming it.
func TestCloseReasonAndComments(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b1, b2 := startBoard(t, conn), startBoard(t, conn)
	e1 := New(nil, nil, WithBoard(b1), WithDefaultRepo("app"))
	e2 := New(nil, nil, WithBoard(b2), WithDefaultRepo("app"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e1.Call(ctx, tools.CreateTask, json.RawMessage(`{"title":"Fix login timeout"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created tools.CreateTaskResult
	if err := json.Unmarshal(out, &created); err != nil {
		t.Fatal(err)
	}
	id := created.ID
	update := func(ctx context.Context, e *Edge, updates string) (tools.UpdateTaskResult, error) {
		var r tools.UpdateTaskResult
		out, err := e.Call(ctx, tools.UpdateTask, json.RawMessage(`{"id":"`+id+`","updates":`+updates+`}`))
		if err == nil {
			err = json.Unmarshal(out, &r)
		}
		return r, err
	}
	get := func(e *Edge) tools.TaskDetail {
		t.Helper()
		if err := e.board.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		out, err := e.Call(ctx, tools.GetTask, json.RawMessage(`{"id":"`+id+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var d tools.TaskDetail
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var te *tools.Error
	if _, err := update(ctx, e1, `{"close_reason":"not needed"}`); !errors.As(err, &te) || te.Code != tools.CodeInvalidParams || !strings.Contains(err.Error(), "done or archived") {
		t.Fatalf("close_reason on a todo task: %v, want -32602 naming the statuses", err)
	}
	if _, err := update(ctx, e1, `{"comment":"   "}`); !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Fatalf("a blank comment: %v, want -32602", err)
	}

	ann := access.WithIdentity(ctx, access.Identity{Client: "token:ann", Token: "ann"})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { _, errs[0] = update(ann, e1, `{"comment":"Reproduced with a 31 s upstream"}`) })
	wg.Go(func() { _, errs[1] = update(ctx, e2, `{"comment":"The proxy timeout is 30 s"}`) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	r, err := update(ctx, e2, `{"status":"done","close_reason":"fixed: timeout raised to 60 s"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.UpdatedFields, []string{"status", "close_reason"}) {
		t.Errorf("updated_fields %v", r.UpdatedFields)
	}
	for _, e := range []*Edge{e1, e2} {
		d := get(e)
		if d.Status != "done" || d.CloseReason != "fixed: timeout raised to 60 s" || len(d.Comments) != 2 {
			t.Fatalf("get_task: %+v", d)
		}
		texts := map[string]string{}
		for _, c := range d.Comments {
			texts[c.Text] = c.By
			if _, err := time.Parse(time.RFC3339, c.At); err != nil {
				t.Errorf("comment time %q: %v", c.At, err)
			}
		}
		if by, ok := texts["Reproduced with a 31 s upstream"]; !ok || by != "ann" {
			t.Errorf("ann's comment: %+v", d.Comments)
		}
		if by, ok := texts["The proxy timeout is 30 s"]; !ok || by != "" {
			t.Errorf("the tokenless comment: %+v", d.Comments)
		}
	}

	if _, err := update(ctx, e1, `{"status":"active"}`); err != nil {
		t.Fatal(err)
	}
	if d := get(e1); d.CloseReason != "" || d.Status != "active" || len(d.Comments) != 2 {
		t.Errorf("reopened: %+v, want no close reason and the comments kept", d)
	}

	for i := len(get(e1).Comments); i < tools.MaxTaskComments; i++ {
		if _, err := update(ctx, e1, fmt.Sprintf(`{"comment":"note %d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := update(ctx, e1, `{"comment":"one more"}`); !errors.As(err, &te) || te.Code != tools.CodeInvalidParams || !strings.Contains(err.Error(), "the most a card keeps") {
		t.Errorf("comment past the limit: %v", err)
	}
	if _, err := e1.Call(ctx, tools.GetTask, json.RawMessage(`{"id":"nosuch"}`)); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("get_task of no task: %v, want TaskNotFound", err)
	}
}
