package prune

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// newPruner builds a Pruner that counts an output's tokens as its length,
// so tests need not load the tokenizer.
func newPruner(t *testing.T, cfg Config) *Pruner {
	t.Helper()
	if cfg.CountTokens == nil {
		cfg.CountTokens = func(s string) int { return len(s) }
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func call(id, tool string, turn int, params map[string]any) ToolCall {
	return ToolCall{ID: id, Tool: tool, Turn: turn, Params: params, Status: StatusCompleted, OutputTokens: 100}
}

func file(path string) map[string]any { return map[string]any{"filePath": path} }

// state is each call's fate: "kept", or "<reason> by <id>".
func state(calls []ToolCall) map[string]string {
	m := map[string]string{}
	for _, c := range calls {
		if c.Superseded {
			m[c.ID] = string(c.Reason) + " by " + c.SupersededBy
		} else {
			m[c.ID] = "kept"
		}
	}
	return m
}

func wantState(t *testing.T, calls []ToolCall, want map[string]string) {
	t.Helper()
	if got := state(calls); !reflect.DeepEqual(got, want) {
		t.Errorf("state:\n got %v\nwant %v", got, want)
	}
}

func wantLog(t *testing.T, res Result, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(res.Log, want) {
		t.Errorf("log:\n got %q\nwant %q", res.Log, want)
	}
}

func short(tool string, params map[string]any) string {
	h, err := CallHash(tool, params)
	if err != nil {
		panic(err)
	}
	return h[:6]
}

// Seed: read(/src/app.ts) at turn 1 is superseded by the same read at turn
// 5, which keeps its hash.
func TestHashExample(t *testing.T) {
	p := newPruner(t, Config{})
	calls := []ToolCall{call("call_001", "read", 1, file("/src/app.ts"))}
	if res := p.Supersede(calls, 1); len(res.Superseded) != 0 {
		t.Fatalf("turn 1: %v", res.Superseded)
	}
	calls = append(calls, call("call_002", "read", 5, file("/src/app.ts")))
	res := p.Supersede(calls, 5)
	wantState(t, calls, map[string]string{"call_001": "hash by call_002", "call_002": "kept"})
	h := short("read", file("/src/app.ts"))
	wantLog(t, res, "[auto-supersede] 🔄 hash "+h+": call_001 → call_002")
	if calls[1].Hash == "" || calls[1].Hash != calls[0].Hash {
		t.Errorf("the new call keeps the shared hash: %q, %q", calls[0].Hash, calls[1].Hash)
	}
	if res.Stats != (Stats{Hash: Tally{1, 100}}) {
		t.Errorf("stats %+v", res.Stats)
	}
}

func TestCallHashIsCanonical(t *testing.T) {
	sum := sha256.Sum256([]byte("grep\x00" + `{"include":"*.go","path":"/src","pattern":"TODO"}`))
	want := hex.EncodeToString(sum[:])
	a, _ := CallHash("grep", map[string]any{"pattern": "TODO", "path": "/src", "include": "*.go"})
	b, _ := CallHash("grep", map[string]any{"include": "*.go", "path": "/src", "pattern": "TODO"})
	if a != want || b != want {
		t.Errorf("CallHash = %s, %s; want %s", a, b, want)
	}
	if x, _ := CallHash("glob", map[string]any{"pattern": "TODO", "path": "/src", "include": "*.go"}); x == a {
		t.Error("the tool name is part of the hash")
	}
	n, _ := CallHash("todoread", nil)
	e, _ := CallHash("todoread", map[string]any{})
	if n != e {
		t.Error("nil params hash as {}")
	}
	if _, err := CallHash("read", map[string]any{"x": func() {}}); err == nil {
		t.Error("unencodable params: want an error")
	}
}

// Seed: reads at turns 1 and 3, edit at turn 5; the edit is kept and both
// reads go. Choice: the two reads have identical params, and hash runs
// before file, so turn 1 falls to the hash rule (superseded by turn 3) and
// turn 3 to the file rule.
func TestFileExample(t *testing.T) {
	p := newPruner(t, Config{})
	edit := map[string]any{"filePath": "/src/app.ts", "oldString": "a", "newString": "b"}
	turns := []ToolCall{
		call("call_001", "read", 1, file("/src/app.ts")),
		call("call_002", "read", 3, file("/src/app.ts")),
		call("call_003", "edit", 5, edit),
	}
	var calls []ToolCall
	var res Result
	for _, c := range turns {
		calls = append(calls, c)
		res = p.Supersede(calls, c.Turn)
		if c.Turn == 3 {
			wantState(t, calls, map[string]string{"call_001": "hash by call_002", "call_002": "kept"})
		}
	}
	wantState(t, calls, map[string]string{
		"call_001": "hash by call_002", "call_002": "file by call_003", "call_003": "kept",
	})
	wantLog(t, res, "[auto-supersede] 📝 file /src/app.ts: read call_002 superseded by edit")
}

// The seed's file log line, byte for byte.
func TestFileLogLine(t *testing.T) {
	p := newPruner(t, Config{})
	calls := []ToolCall{
		call("call_001", "read", 1, file("/src/app.ts")),
		call("call_002", "write", 2, map[string]any{"filePath": "/src/app.ts", "content": "x"}),
	}
	res := p.Supersede(calls, 3)
	wantLog(t, res, "[auto-supersede] 📝 file /src/app.ts: read call_001 superseded by write")
}

// A write supersedes earlier writes and edits of the file too, but not
// those of other files, nor glob or grep results.
func TestFileRuleScope(t *testing.T) {
	p := newPruner(t, Config{})
	calls := []ToolCall{
		call("w1", "write", 1, map[string]any{"filePath": "/a", "content": "1"}),
		call("e1", "edit", 2, map[string]any{"filePath": "/a", "oldString": "1", "newString": "2"}),
		call("rb", "read", 2, file("/b")),
		call("g", "glob", 2, map[string]any{"pattern": "*", "path": "/"}),
		call("s", "grep", 2, map[string]any{"pattern": "2", "path": "/"}),
		call("nopath", "read", 2, map[string]any{}),
		call("w2", "write", 3, map[string]any{"filePath": "/a", "content": "3"}),
		call("nopath2", "edit", 3, map[string]any{}),
		call("rc", "read", 1, file("/c")),
		{ID: "failed", Tool: "edit", Turn: 2, Params: file("/c"), Status: StatusError},
		{ID: "running", Tool: "write", Turn: 3, Params: file("/c"), Status: StatusInProgress},
	}
	p.Supersede(calls, 4)
	wantState(t, calls, map[string]string{
		"w1": "file by e1", "e1": "file by w2", "rb": "kept", "g": "kept", "s": "kept",
		"nopath": "kept", "w2": "kept", "nopath2": "kept",
		"rc": "kept", "failed": "kept", "running": "kept", // only a completed write or edit supersedes
	})
}

func TestFileKey(t *testing.T) {
	p := newPruner(t, Config{})
	for _, tc := range []struct {
		c    ToolCall
		want string
	}{
		{call("", "read", 1, file("/src/app.ts")), "/src/app.ts"},
		{call("", "edit", 1, file("/src/app.ts")), "/src/app.ts"},
		{call("", "glob", 1, map[string]any{"path": "/src", "pattern": "**/*.ts"}), "glob:/src:**/*.ts"},
		{call("", "glob", 1, map[string]any{"pattern": "*.go"}), "glob::*.go"},
		{call("", "grep", 1, map[string]any{"path": "/src", "pattern": "TODO", "include": "*.ts"}), "grep:/src:TODO:*.ts"},
		{call("", "grep", 1, map[string]any{"pattern": "TODO"}), "grep::TODO:"},
		{call("", "read", 1, nil), ""},
		{call("", "bash", 1, map[string]any{"filePath": "/x"}), ""},
	} {
		if got := p.FileKey(tc.c); got != tc.want {
			t.Errorf("FileKey(%s %v) = %q, want %q", tc.c.Tool, tc.c.Params, got, tc.want)
		}
	}
}

// Glob and grep take part in the hash rule.
func TestGlobAndGrepBySameHash(t *testing.T) {
	p := newPruner(t, Config{})
	g := map[string]any{"path": "/src", "pattern": "*.ts"}
	s := map[string]any{"path": "/src", "pattern": "TODO", "include": "*.ts"}
	calls := []ToolCall{
		call("g1", "glob", 1, g), call("s1", "grep", 1, s),
		call("g2", "glob", 2, g), call("s2", "grep", 2, map[string]any{"path": "/src", "pattern": "TODO"}),
	}
	p.Supersede(calls, 3)
	wantState(t, calls, map[string]string{"g1": "hash by g2", "s1": "kept", "g2": "kept", "s2": "kept"})
}

// Seed: todowrite 1, todoread 2, todowrite 5, todowrite 8 (kept), todoread 9
// (kept), turn by turn. Choice: the two todoread() calls have identical
// (empty) params, and hash runs first, so turn 2 is a hash supersession.
func TestTodoExample(t *testing.T) {
	p := newPruner(t, Config{})
	todos := func(s string) map[string]any {
		return map[string]any{"todos": []any{map[string]any{"id": "1", "content": "ship", "status": s}}}
	}
	steps := []struct {
		c    ToolCall
		want map[string]string
		log  []string
	}{
		{call("call_001", "todowrite", 1, todos("pending")), map[string]string{"call_001": "kept"}, nil},
		{call("call_002", "todoread", 2, nil), map[string]string{"call_001": "kept", "call_002": "kept"}, nil},
		{call("call_003", "todowrite", 5, todos("in_progress")), map[string]string{
			"call_001": "todo by call_003", "call_002": "kept", "call_003": "kept",
		}, []string{"[auto-supersede] ✅ todo: pruned old todowrite call_001"}},
		{call("call_004", "todowrite", 8, todos("completed")), map[string]string{
			"call_001": "todo by call_003", "call_002": "kept", "call_003": "todo by call_004", "call_004": "kept",
		}, []string{"[auto-supersede] ✅ todo: pruned old todowrite call_003"}},
		{call("call_005", "todoread", 9, nil), map[string]string{
			"call_001": "todo by call_003", "call_002": "hash by call_005", "call_003": "todo by call_004",
			"call_004": "kept", "call_005": "kept",
		}, []string{"[auto-supersede] 🔄 hash " + short("todoread", nil) + ": call_002 → call_005"}},
	}
	var calls []ToolCall
	total := Stats{}
	for _, s := range steps {
		calls = append(calls, s.c)
		res := p.Supersede(calls, s.c.Turn)
		wantState(t, calls, s.want)
		wantLog(t, res, s.log...)
		total.Add(res.Stats)
	}
	if want := (Stats{Hash: Tally{1, 100}, Todo: Tally{2, 200}}); total != want {
		t.Errorf("stats %+v, want %+v", total, want)
	}
}

// The todo rule supersedes todoreads that differ in params, and keeps the
// latest todoread even when todowrites follow it (each kind keeps its own
// latest).
func TestTodoReadRule(t *testing.T) {
	p := newPruner(t, Config{})
	calls := []ToolCall{
		call("r1", "todoread", 1, map[string]any{"verbose": true}),
		call("r2", "todoread", 2, nil),
		call("w1", "todowrite", 3, map[string]any{"todos": []any{}}),
	}
	p.Supersede(calls, 4)
	wantState(t, calls, map[string]string{"r1": "todo by r2", "r2": "kept", "w1": "kept"})
}

// Seed: pending at 1, in_progress at 3, still in_progress at 5 (the
// turn is preserved: 3); at turn 15 the reminder carries the guidance for
// 15 − 3 = 12 turns.
func TestStuckFlow(t *testing.T) {
	p := newPruner(t, Config{})
	write := func(id string, turn int, status string) ToolCall {
		return call(id, "todowrite", turn, map[string]any{"todos": []any{
			map[string]any{"id": "1", "content": "refactor the parser", "status": status},
		}})
	}
	var calls []ToolCall
	for _, s := range []struct {
		c     ToolCall
		since int
	}{
		{write("w1", 1, "pending"), 0},
		{write("w3", 3, "in_progress"), 3},
		{write("w5", 5, "in_progress"), 3},
	} {
		calls = append(calls, s.c)
		res := p.Supersede(calls, s.c.Turn)
		if got := res.Todos.Tasks[0].InProgressSince; got != s.since {
			t.Errorf("turn %d: inProgressSince = %d, want %d", s.c.Turn, got, s.since)
		}
		if res.Todos.LastWriteTurn != s.c.Turn {
			t.Errorf("turn %d: LastWriteTurn = %d", s.c.Turn, res.Todos.LastWriteTurn)
		}
	}
	st := p.Supersede(calls, 15).Todos

	if n, stuck := StuckTurns(st.Tasks, 14, 12); stuck || n != 11 {
		t.Errorf("turn 14: StuckTurns = %d, %v; want 11, false", n, stuck)
	}
	if r := p.TodoReminder(st, 14); strings.Contains(r.Text, "Task Breakdown") {
		t.Errorf("turn 14: guidance too early:\n%s", r.Text)
	}
	r := p.TodoReminder(st, 15)
	guidance := "⚠️ **Task Breakdown Suggestion**\n" +
		"A task has been in progress for 12 turns. If you're finding it difficult to complete, consider:\n" +
		"- Breaking it into smaller, more specific subtasks\n" +
		"- Identifying blockers or dependencies that need resolution first\n" +
		"- Marking it as blocked and moving to another task\n" +
		"\n" +
		"Use `todowrite` to split the task or update its status."
	if !strings.HasSuffix(r.Text, "\n\n"+guidance) || r.Kind != KindTodoReminder || r.Turn != 15 {
		t.Errorf("turn 15 reminder:\n%s\nwant it to end with:\n%s", r.Text, guidance)
	}
}

// Choice: the seed's flow writes at 1, 3 and 5 and shows a reminder at 15,
// but "after 8 turns without todowrite, then every 4" puts the reminders
// after a turn-5 write at 13 and 17. A write at turn 7 (elided by the
// seed's "...") puts one at 15, with the turn still preserved as 3.
func TestStuckFlowReminderSchedule(t *testing.T) {
	p := newPruner(t, Config{})
	var due []int
	for turn := 5; turn <= 21; turn++ {
		if p.ReminderDue(5, turn) {
			due = append(due, turn)
		}
	}
	if want := []int{13, 17, 21}; !reflect.DeepEqual(due, want) {
		t.Errorf("due after a write at 5: %v, want %v", due, want)
	}
	inProgress := map[string]any{"todos": []any{map[string]any{"id": "1", "status": "in_progress"}}}
	calls := []ToolCall{
		call("w1", "todowrite", 1, map[string]any{"todos": []any{map[string]any{"id": "1", "status": "pending"}}}),
		call("w3", "todowrite", 3, inProgress),
		call("w5", "todowrite", 5, map[string]any{"todos": []any{map[string]any{"id": "1", "status": "in_progress", "content": "x"}}}),
		call("w7", "todowrite", 7, map[string]any{"todos": []any{map[string]any{"id": "1", "status": "in_progress", "content": "y"}}}),
	}
	st := p.Supersede(calls, 15).Todos
	if !p.ReminderDue(st.LastWriteTurn, 15) {
		t.Fatal("reminder not due at 15 after a write at 7")
	}
	if r := p.TodoReminder(st, 15); !strings.Contains(r.Text, "in progress for 12 turns") {
		t.Errorf("reminder at 15:\n%s", r.Text)
	}
}

func TestReminderWithoutTodoList(t *testing.T) {
	p := newPruner(t, Config{})
	st := p.Supersede([]ToolCall{call("r", "read", 1, file("/x"))}, 8).Todos
	if !p.ReminderDue(st.LastWriteTurn, 8) {
		t.Error("reminder not due at 8 in a conversation without todos")
	}
	want := "🔖 **Todo Reminder**\nYou have no todo list yet. Use `todowrite` to plan the work and track it."
	if got := p.TodoReminder(st, 8).Text; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReminderSchedule(t *testing.T) {
	p := newPruner(t, Config{})
	var due []int
	for turn := 0; turn <= 20; turn++ {
		if p.ReminderDue(0, turn) {
			due = append(due, turn)
		}
	}
	if want := []int{8, 12, 16, 20}; !reflect.DeepEqual(due, want) {
		t.Errorf("due %v, want %v", due, want)
	}
	off := newPruner(t, Config{TodoReminder: TodoReminderConfig{Disabled: true}})
	if off.ReminderDue(0, 8) {
		t.Error("disabled reminder is due")
	}
	custom := newPruner(t, Config{TodoReminder: TodoReminderConfig{InitialTurns: 3, RepeatTurns: 2}})
	if !custom.ReminderDue(10, 13) || custom.ReminderDue(10, 14) || !custom.ReminderDue(10, 15) {
		t.Error("InitialTurns 3, RepeatTurns 2 after a write at 10: want due at 13 and 15, not 14")
	}
}

// A task that leaves in_progress loses its turn; going back in_progress
// starts a new run. Several stuck tasks give the longest run.
func TestInProgressTracking(t *testing.T) {
	p := newPruner(t, Config{})
	todos := func(a, b string) map[string]any {
		return map[string]any{"todos": []any{
			map[string]any{"id": "a", "status": a}, map[string]any{"id": "b", "status": b},
		}}
	}
	calls := []ToolCall{
		call("w1", "todowrite", 1, todos("in_progress", "in_progress")),
		call("w2", "todowrite", 2, todos("pending", "in_progress")),
		call("w4", "todowrite", 4, todos("in_progress", "in_progress")),
	}
	st := p.Supersede(calls, 5).Todos
	if st.Tasks[0].InProgressSince != 4 || st.Tasks[1].InProgressSince != 1 {
		t.Errorf("tasks %+v; want a since 4, b since 1", st.Tasks)
	}
	if n, stuck := StuckTurns(st.Tasks, 13, 12); !stuck || n != 12 {
		t.Errorf("StuckTurns = %d, %v; want the longest run, 12", n, stuck)
	}
	if _, stuck := StuckTurns(nil, 100, 12); stuck {
		t.Error("no tasks, stuck")
	}
}

func TestGuidanceText(t *testing.T) {
	want := "⚠️ **Task Breakdown Suggestion**\n" +
		"A task has been in progress for 14 turns. If you're finding it difficult to complete, consider:\n" +
		"- Breaking it into smaller, more specific subtasks\n" +
		"- Identifying blockers or dependencies that need resolution first\n" +
		"- Marking it as blocked and moving to another task\n" +
		"\n" +
		"Use `TodoWrite` to split the task or update its status."
	if got := StuckGuidance(14, "TodoWrite"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestInjectKeepsOneReminderOfEachKind(t *testing.T) {
	kind := func(r Reminder) ReminderKind { return r.Kind }
	ctx := []Reminder{{Text: "user"}, {Kind: KindTodoReminder, Turn: 8, Text: "todo 8"}, {Text: "assistant"}}
	ctx = Inject(ctx, kind, Reminder{Kind: KindAutomataReflection, Turn: 8, Text: "reflect 8"})
	ctx = Inject(ctx, kind, Reminder{Kind: KindTodoReminder, Turn: 12, Text: "todo 12"})
	ctx = Inject(ctx, kind, Reminder{Kind: KindAutomataReflection, Turn: 16, Text: "reflect 16"})
	ctx = Inject(ctx, kind, Reminder{Text: "plain"})
	var texts []string
	for _, r := range ctx {
		texts = append(texts, r.Text)
	}
	if want := []string{"user", "assistant", "todo 12", "reflect 16", "plain"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("context %q, want %q", texts, want)
	}
}

// Each protection rule, with a control showing the call would otherwise be
// superseded.
func TestProtection(t *testing.T) {
	twoReads := func(firstTurn, secondTurn int, firstStatus, secondStatus Status) []ToolCall {
		a := call("old", "read", firstTurn, file("/x"))
		a.Status = firstStatus
		b := call("new", "read", secondTurn, file("/x"))
		b.Status = secondStatus
		return []ToolCall{a, b}
	}
	done := StatusCompleted
	for _, tc := range []struct {
		name    string
		cfg     Config
		calls   []ToolCall
		current int
		want    bool // old superseded
	}{
		{"control", Config{}, twoReads(1, 5, done, done), 5, true},
		{"protected turn", Config{ProtectedTurns: []int{1}}, twoReads(1, 5, done, done), 5, false},
		{"other protected turn", Config{ProtectedTurns: []int{2}}, twoReads(1, 5, done, done), 5, true},
		{"recent turns", Config{ProtectRecentTurns: 4}, twoReads(3, 5, done, done), 6, false},
		{"just outside recent turns", Config{ProtectRecentTurns: 3}, twoReads(3, 5, done, done), 6, true},
		{"protected tool", Config{ProtectedTools: []string{"read"}}, twoReads(1, 5, done, done), 5, false},
		{"old pending", Config{}, twoReads(1, 5, StatusPending, done), 5, false},
		{"old in progress", Config{}, twoReads(1, 5, StatusInProgress, done), 5, false},
		{"old errored", Config{}, twoReads(1, 5, StatusError, done), 5, false},
		{"new in progress", Config{}, twoReads(1, 5, done, StatusInProgress), 5, false},
		{"new errored", Config{}, twoReads(1, 5, done, StatusError), 5, false},
		{"same turn", Config{}, twoReads(5, 5, done, done), 5, false},
		{"same turn, next turn", Config{}, twoReads(5, 5, done, done), 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPruner(t, tc.cfg)
			p.Supersede(tc.calls, tc.current)
			if got := tc.calls[0].Superseded; got != tc.want {
				t.Errorf("old superseded = %v, want %v", got, tc.want)
			}
		})
	}
}

// Protection holds for the file and todo rules too, and a protected tool
// still supersedes others.
func TestProtectionAcrossRules(t *testing.T) {
	p := newPruner(t, Config{ProtectedTools: []string{"edit", "todowrite"}})
	calls := []ToolCall{
		call("r", "read", 1, file("/x")),
		call("e1", "edit", 2, map[string]any{"filePath": "/x", "newString": "1"}),
		call("e2", "edit", 3, map[string]any{"filePath": "/x", "newString": "2"}),
		call("t1", "todowrite", 1, map[string]any{"todos": []any{}}),
		call("t2", "todowrite", 2, map[string]any{"todos": []any{map[string]any{"id": "1"}}}),
	}
	p.Supersede(calls, 4)
	wantState(t, calls, map[string]string{"r": "file by e1", "e1": "kept", "e2": "kept", "t1": "kept", "t2": "kept"})

	p = newPruner(t, Config{ProtectedTurns: []int{1}})
	calls = []ToolCall{
		call("t1", "todowrite", 1, map[string]any{"todos": []any{}}),
		call("t2", "todowrite", 2, map[string]any{"todos": []any{map[string]any{"id": "1"}}}),
		call("t3", "todowrite", 3, map[string]any{"todos": []any{map[string]any{"id": "2"}}}),
	}
	p.Supersede(calls, 3)
	wantState(t, calls, map[string]string{"t1": "kept", "t2": "todo by t3", "t3": "kept"})

	// A todowrite still running supersedes nothing yet.
	p = newPruner(t, Config{})
	calls = []ToolCall{
		call("t1", "todowrite", 1, map[string]any{"todos": []any{}}),
		{ID: "t2", Tool: "todowrite", Turn: 2, Status: StatusInProgress, Params: map[string]any{"todos": "[]"}},
	}
	p.Supersede(calls, 3)
	wantState(t, calls, map[string]string{"t1": "kept", "t2": "kept"})
}

func TestSupersedeIsIdempotent(t *testing.T) {
	p := newPruner(t, Config{})
	calls := []ToolCall{
		call("a", "read", 1, file("/x")), call("b", "read", 2, file("/x")),
		call("c", "edit", 3, file("/x")), call("d", "todowrite", 1, nil), call("e", "todowrite", 2, map[string]any{"todos": "[]"}),
	}
	first := p.Supersede(calls, 4)
	if first.Stats.Total().Count != 3 {
		t.Fatalf("first run: %+v", first.Stats)
	}
	before := state(calls)
	second := p.Supersede(calls, 4)
	if len(second.Superseded) != 0 || len(second.Log) != 0 || second.Stats != (Stats{}) {
		t.Errorf("second run reported %+v", second)
	}
	wantState(t, calls, before)
}

func TestTokensSaved(t *testing.T) {
	var counted []string
	p := newPruner(t, Config{CountTokens: func(s string) int { counted = append(counted, s); return 7 }})
	a := call("a", "read", 1, file("/x"))
	a.OutputTokens, a.Output = 0, "hello"
	b := call("b", "read", 2, file("/x"))
	b.OutputTokens, b.Output = 0, "never counted: not superseded"
	c := call("c", "glob", 1, map[string]any{"pattern": "*"})
	c.OutputTokens = 40
	d := call("d", "glob", 2, map[string]any{"pattern": "*"})
	calls := []ToolCall{a, b, c, d}
	res := p.Supersede(calls, 3)
	if want := (Stats{Hash: Tally{2, 47}}); res.Stats != want {
		t.Errorf("stats %+v, want %+v", res.Stats, want)
	}
	if !reflect.DeepEqual(counted, []string{"hello"}) {
		t.Errorf("counted %q; only superseded outputs without a count are counted", counted)
	}
}

func TestDefaultTokenCounter(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	a := call("a", "read", 1, file("/x"))
	a.OutputTokens, a.Output = 0, "hello world"
	calls := []ToolCall{a, call("b", "read", 2, file("/x"))}
	if got := p.Supersede(calls, 3).Stats.Hash.Tokens; got != 2 {
		t.Errorf("tokens.Count(%q) via the default counter = %d, want 2", a.Output, got)
	}
}

func TestStatsRender(t *testing.T) {
	s := Stats{Hash: Tally{5, 4200}, File: Tally{4, 3100}, Todo: Tally{3, 1200}}
	want := "Strategy Effectiveness:\n" +
		"────────────────────────────────────────────────────────────\n" +
		"  Auto-Supersede        12 prunes, ~8.5k saved\n" +
		"    🔄 hash              5 prunes, ~4.2k\n" +
		"    📝 file              4 prunes, ~3.1k\n" +
		"    ✅ todo              3 prunes, ~1.2k\n"
	if got := s.Render(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if s.Total() != (Tally{12, 8500}) {
		t.Errorf("Total %+v", s.Total())
	}
	var sum Stats
	sum.Add(s)
	sum.Add(Stats{File: Tally{1, 1}})
	if sum.File != (Tally{5, 3101}) || sum.Hash != s.Hash {
		t.Errorf("Add: %+v", sum)
	}
}

func TestFormatTokens(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 850: "850", 999: "999", 1000: "1.0k", 1049: "1.0k", 1050: "1.1k",
		8450: "8.5k", 8549: "8.5k", 12345: "12.3k", 1234567: "1234.6k",
	} {
		if got := FormatTokens(n); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{ProtectRecentTurns: -1},
		{TodoReminder: TodoReminderConfig{RepeatTurns: -4}},
		{Tools: Tools{Read: []string{"x"}, Write: []string{"x"}}},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) error %v, want ErrInvalidConfig", cfg, err)
		}
	}
}
