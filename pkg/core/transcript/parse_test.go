package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// readLines splits a JSONL file as the tailer does: whole lines with the
// byte offset of each.
func readLines(t testing.TB, path string) ([]json.RawMessage, []int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitLines(data)
}

func splitLines(data []byte) ([]json.RawMessage, []int64) {
	var lines []json.RawMessage
	var offsets []int64
	var off int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if line := bytes.TrimSpace(data[:i]); len(line) > 0 {
			lines = append(lines, json.RawMessage(data[:i]))
			offsets = append(offsets, off)
		}
		off += int64(i) + 1
		data = data[min(i+1, len(data)):]
	}
	return lines, offsets
}

func mustParse(t testing.TB, format string, lines []json.RawMessage, offsets []int64) Conversation {
	t.Helper()
	c, err := Parse(format, lines, offsets)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const sessionCwd = "/home/dev/src/cuedeck"

func TestParseClaudeCodeSession(t *testing.T) {
	lines, offsets := readLines(t, "testdata/coding-session.jsonl")
	c := mustParse(t, events.TranscriptClaudeCode, lines, offsets)

	if c.Session != "7f3c2a10-5b8e-4c1d-9a2f-0e6d4b8c1a21" || c.Agent != "" || c.Cwd != sessionCwd {
		t.Errorf("session %q agent %q cwd %q", c.Session, c.Agent, c.Cwd)
	}
	// queue-operation, attachment, system, last-prompt, cost-state.
	if c.Lines != len(lines) || c.Skipped != 5 {
		t.Errorf("lines %d skipped %d, want %d and 5", c.Lines, c.Skipped, len(lines))
	}
	if c.Turns != 2 {
		t.Errorf("turns %d, want 2", c.Turns)
	}
	pool, indexer := sessionCwd+"/internal/indexer/pool.go", sessionCwd+"/internal/indexer/indexer.go"
	if want := []string{pool, indexer}; !slices.Equal(c.FilesModified, want) {
		t.Errorf("files modified %q, want %q", c.FilesModified, want)
	}

	wantCalls := []struct {
		id, tool string
		turn     int
		status   prune.Status
		output   string // a substring
	}{
		{"toolu_01", "Read", 1, prune.StatusCompleted, "func (ix *Indexer) Run()"},
		{"toolu_02", "Read", 1, prune.StatusCompleted, "package indexer"},
		{"toolu_03", "Write", 1, prune.StatusCompleted, "File created"},
		{"toolu_04", "Edit", 1, prune.StatusCompleted, "has been updated"},
		{"toolu_05", "Bash", 1, prune.StatusError, "--- FAIL: TestPoolDrains"},
		{"toolu_06", "Edit", 1, prune.StatusCompleted, "has been updated"},
		{"toolu_07", "Bash", 1, prune.StatusCompleted, "ok  \t"},
		{"toolu_08", "MultiEdit", 2, prune.StatusCompleted, "Applied 2 edits"},
	}
	if len(c.Calls) != len(wantCalls) {
		t.Fatalf("%d calls, want %d", len(c.Calls), len(wantCalls))
	}
	for i, w := range wantCalls {
		got := c.Calls[i]
		if got.ID != w.id || got.Tool != w.tool || got.Turn != w.turn || got.Status != w.status || !strings.Contains(got.Output, w.output) {
			t.Errorf("call %d = {%s %s turn %d %s %.40q}, want {%s %s turn %d %s ~%q}", i, got.ID, got.Tool, got.Turn, got.Status, got.Output, w.id, w.tool, w.turn, w.status, w.output)
		}
	}
	if got := c.Calls[0].Params["file_path"]; got != indexer {
		t.Errorf("Read params %v", c.Calls[0].Params)
	}

	type msg struct {
		role      Role
		synthetic bool
		toolError bool
		text      string // a prefix
	}
	want := []msg{
		{RoleUser, false, false, "Add a worker pool"},
		{RoleAssistant, false, false, "I'll start by reading"},
		{RoleTool, false, false, "Read " + indexer + ": 1\tpackage indexer"},
		{RoleTool, false, false, "Read "},
		{RoleAssistant, false, false, "I decided to use a worker pool"},
		{RoleTool, false, false, "Write " + pool + ": File created"},
		{RoleTool, false, false, "Edit "},
		{RoleTool, false, true, "Bash go test ./internal/indexer/: error: Exit code 1\n--- FAIL"},
		{RoleAssistant, false, false, "The test fails because"},
		{RoleTool, false, false, "Edit "},
		{RoleTool, false, false, "Bash go test ./internal/indexer/: ok"},
		{RoleAssistant, false, false, "The tests pass now."},
		{RoleUser, false, false, "No, don't make the pool"},
		{RoleUser, true, false, "<system-reminder>"},
		{RoleAssistant, false, false, "Understood"},
		{RoleTool, false, false, "MultiEdit " + indexer + ": Applied 2 edits"},
	}
	if len(c.Messages) != len(want) {
		for _, m := range c.Messages {
			t.Logf("%s %q", m.Role, m.Text)
		}
		t.Fatalf("%d messages, want %d", len(c.Messages), len(want))
	}
	ids := map[string]bool{}
	for i, w := range want {
		m := c.Messages[i]
		if m.Index != i || m.Role != w.role || m.Synthetic != w.synthetic || m.ToolError != w.toolError || !strings.HasPrefix(m.Text, w.text) {
			t.Errorf("message %d = {%d %s synthetic=%v error=%v %.60q}, want {%s %v %v %q…}", i, m.Index, m.Role, m.Synthetic, m.ToolError, m.Text, w.role, w.synthetic, w.toolError, w.text)
		}
		if ids[m.ID] || m.ID == "" {
			t.Errorf("message %d id %q empty or repeated", i, m.ID)
		}
		ids[m.ID] = true
		if m.Time.IsZero() {
			t.Errorf("message %d has no time", i)
		}
		// The offset is the line's, as the tailer gave it.
		j := slices.Index(offsets, m.Offset)
		if j < 0 || !bytes.Contains(lines[j], []byte(`"uuid": "`+m.ID+`"`)) {
			t.Errorf("message %d offset %d is not the offset of line %s", i, m.Offset, m.ID)
		}
	}
	if c.Messages[13].Turn != 2 {
		t.Errorf("a meta line started turn %d", c.Messages[13].Turn)
	}
	if c.Messages[7].CallID != "toolu_05" {
		t.Errorf("tool message call id %q", c.Messages[7].CallID)
	}

	// The calls are ready for supersede: the repeated Read and the Read
	// before the edit of the same file are pruned.
	p, err := prune.New(prune.Config{Tools: prune.ClaudeCodeTools()})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Supersede(c.Calls, c.Turns)
	if !c.Calls[0].Superseded || c.Calls[0].Reason != prune.ReasonHash || !c.Calls[1].Superseded {
		t.Errorf("supersede: %v", res.Log)
	}

	if got := c.Outcome(); got != memory.OutcomeSuccess {
		t.Errorf("outcome %q, want success (the last go test passed)", got)
	}
	prose := c.AssistantProse()
	if !strings.HasPrefix(prose, "I'll start by reading") || strings.Contains(prose, "system-reminder") || strings.Contains(prose, "Exit code") {
		t.Errorf("prose: %q", prose)
	}
	exps := memory.ExtractExperiences(c.MemoryTranscript(), memory.DefaultGraftRules(), clock.NewDeterministic(time.Unix(1, 0)))
	found := false
	for _, e := range exps {
		if strings.Contains(e.Decision, "worker pool") && strings.Contains(e.Rationale, "embedding server") {
			found = true
			if e.Outcome != memory.OutcomeSuccess || !slices.Equal(e.FilesTouched, c.FilesModified) {
				t.Errorf("experience %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("no worker pool decision in %+v", exps)
	}
}

func TestSignals(t *testing.T) {
	lines, offsets := readLines(t, "testdata/coding-session.jsonl")
	c := mustParse(t, events.TranscriptClaudeCode, lines, offsets)
	sig := Signals(c)
	if len(sig) != len(c.Messages) {
		t.Fatalf("%d signals for %d messages", len(sig), len(c.Messages))
	}
	for i, s := range sig {
		if s < 0 || s > 1 {
			t.Errorf("signal %d = %v out of [0,1]", i, s)
		}
	}
	byPrefix := func(p string) float64 {
		for i, m := range c.Messages {
			if strings.HasPrefix(m.Text, p) {
				return sig[i]
			}
		}
		t.Fatalf("no message %q", p)
		return 0
	}
	for _, tc := range []struct {
		prefix string
		want   float64
	}{
		{"Add a worker pool", SignalTask + SignalNamesFile},
		{"I'll start by reading", 0},
		{"I decided to use a worker pool", SignalBeforeChange},
		{"Bash go test ./internal/indexer/: error", SignalFailure},
		{"The test fails because", min(1, SignalAfterFailure+SignalBeforeChange+SignalNamesFile)},
		{"The tests pass now.", 0},
		{"No, don't make the pool", SignalCorrection},
		{"<system-reminder>", 0},
		{"Understood", SignalBeforeChange},
		{"Read ", 0},
	} {
		if got := byPrefix(tc.prefix); got != tc.want {
			t.Errorf("signal of %q = %v, want %v", tc.prefix, got, tc.want)
		}
	}

	// The signals drive the selector: the decision and the correction are
	// kept when only a few messages fit.
	cfg := memory.DefaultSalienceConfig()
	cfg.TopK = 3
	sel, err := memory.NewSelector(cfg, clock.NewDeterministicRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	got := sel.Select(c.MemoryMessages(), sig)
	joined := strings.Join(func() []string {
		var s []string
		for _, m := range got.Messages {
			s = append(s, m.Content)
		}
		return s
	}(), "\n")
	for _, w := range []string{"No, don't make the pool", "The test fails because"} {
		if !strings.Contains(joined, w) {
			t.Errorf("selection lacks %q:\n%s", w, joined)
		}
	}
}

func TestOutcome(t *testing.T) {
	call := func(cmd string, status prune.Status, out string) prune.ToolCall {
		return prune.ToolCall{Tool: "Bash", Params: map[string]any{"command": cmd}, Status: status, Output: out}
	}
	for _, tc := range []struct {
		name  string
		calls []prune.ToolCall
		want  memory.Outcome
	}{
		{"no tests", []prune.ToolCall{call("ls", prune.StatusCompleted, "")}, ""},
		{"pass", []prune.ToolCall{call("go test ./...", prune.StatusCompleted, "ok  \tx\t0.1s")}, memory.OutcomeSuccess},
		{"exit status", []prune.ToolCall{call("pytest -q", prune.StatusError, "")}, memory.OutcomeFailure},
		{"fail marker without error", []prune.ToolCall{call("go test ./...", prune.StatusCompleted, "--- FAIL: TestX\nFAIL")}, memory.OutcomeFailure},
		{"fail then pass", []prune.ToolCall{call("cargo test", prune.StatusError, ""), call("cargo test", prune.StatusCompleted, "test result: ok")}, memory.OutcomeSuccess},
		{"pass then fail", []prune.ToolCall{call("npm test", prune.StatusCompleted, ""), call("npm test", prune.StatusError, "")}, memory.OutcomeFailure},
		{"pending run ignored", []prune.ToolCall{call("go test ./...", prune.StatusCompleted, "ok"), call("go test ./...", prune.StatusPending, "")}, memory.OutcomeSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Conversation{Calls: tc.calls}).Outcome(); got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	const uuid = `"uuid":"u1","sessionId":"s1","cwd":"/r"`
	user := func(content string) string {
		return `{"type":"user",` + uuid + `,"message":{"role":"user","content":` + content + `}}`
	}
	assistant := func(content string) string {
		return `{"type":"assistant",` + uuid + `,"message":{"role":"assistant","content":` + content + `}}`
	}
	huge := strings.Repeat("x", 4<<20)
	for _, tc := range []struct {
		name    string
		format  string
		lines   []string
		check   func(t *testing.T, c Conversation)
		skipped int
	}{
		{
			name:    "not objects",
			format:  events.TranscriptClaudeCode,
			lines:   []string{`[1,2]`, `"user"`, `42`, `null`, `{`, `{"type":"user"`, ``, `garbage`},
			skipped: 8,
		},
		{
			name:   "wrong field types",
			format: events.TranscriptClaudeCode,
			lines: []string{
				`{"type":5}`,
				user(`5`),
				user(`{"text":"x"}`),
				`{"type":"user","message":"hello"}`,
				`{"type":"user","sessionId":7,"message":{"role":"user","content":"x"}}`,
				assistant(`[{"type":"text","text":5}]`),
				`{"type":"assistant"}`,
			},
			skipped: 7,
		},
		{
			name:   "timestamp of another shape keeps the line",
			format: events.TranscriptClaudeCode,
			lines:  []string{`{"type":"user","timestamp":{"s":1},"message":{"role":"user","content":"hi"}}`},
			check: func(t *testing.T, c Conversation) {
				if len(c.Messages) != 1 || !c.Messages[0].Time.IsZero() {
					t.Errorf("%+v", c.Messages)
				}
			},
		},
		{
			name:   "invalid utf-8",
			format: events.TranscriptClaudeCode,
			lines:  []string{user("\"caf\xff\xfe \xc3\"")},
			check: func(t *testing.T, c Conversation) {
				if len(c.Messages) != 1 || !utf8.ValidString(c.Messages[0].Text) || !strings.HasPrefix(c.Messages[0].Text, "caf") {
					t.Errorf("%+v", c.Messages)
				}
			},
		},
		{
			name:   "huge line",
			format: events.TranscriptClaudeCode,
			lines:  []string{assistant(`[{"type":"text","text":"` + huge + `"}]`)},
			check: func(t *testing.T, c Conversation) {
				if len(c.Messages) != 1 || len(c.Messages[0].Text) != len(huge) {
					t.Errorf("%d messages", len(c.Messages))
				}
			},
		},
		{
			name:   "huge tool result is summarised",
			format: events.TranscriptClaudeCode,
			lines: []string{
				assistant(`[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/r/a.go"}}]`),
				user(`[{"type":"tool_result","tool_use_id":"t1","content":"` + huge + `"}]`),
			},
			check: func(t *testing.T, c Conversation) {
				if len(c.Calls[0].Output) != len(huge) || utf8.RuneCountInString(c.Messages[0].Text) > summaryRunes+keyRunes+20 {
					t.Errorf("output %d, summary %d", len(c.Calls[0].Output), len(c.Messages[0].Text))
				}
			},
		},
		{
			name:   "client text is synthetic",
			format: events.TranscriptClaudeCode,
			lines: []string{
				user(`"<command-name>/clear</command-name>\n<command-message>clear</command-message>"`),
				user(`"  <local-command-stdout></local-command-stdout>"`),
				user(`"[Request interrupted by user for tool use]"`),
				`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"}}`,
				`{"type":"user","origin":{"kind":"scheduled"},"message":{"role":"user","content":"run the nightly check"}}`,
				user(`"Please use <b>bold</b> here"`),
			},
			check: func(t *testing.T, c Conversation) {
				for i, m := range c.Messages {
					if want := i < 5; m.Synthetic != want {
						t.Errorf("message %d %q synthetic=%v", i, m.Text, m.Synthetic)
					}
				}
			},
		},
		{
			name:   "result blocks and errors",
			format: events.TranscriptClaudeCode,
			lines: []string{
				assistant(`[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Two calls."},{"type":"tool_use","id":"t1","name":"Grep","input":{"pattern":"x"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"false"}}]`),
				user(`[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a.go:1"},{"type":"image","source":{}},{"type":"text","text":"b.go:2"}]},{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"Exit code 1"},{"type":"tool_result","tool_use_id":"elsewhere","content":"late"}]`),
			},
			check: func(t *testing.T, c Conversation) {
				if len(c.Calls) != 2 || c.Calls[0].Output != "a.go:1\nb.go:2" || c.Calls[1].Status != prune.StatusError {
					t.Fatalf("calls %+v", c.Calls)
				}
				if len(c.Messages) != 4 || c.Messages[0].Text != "Two calls." {
					t.Fatalf("messages %+v", c.Messages)
				}
				if m := c.Messages[2]; !m.ToolError || m.Text != "Bash false: error: Exit code 1" || m.ID != "u1#1" {
					t.Errorf("error message %+v", m)
				}
				if m := c.Messages[3]; m.CallID != "elsewhere" || m.Text != "tool result: late" {
					t.Errorf("orphan result %+v", m)
				}
			},
		},
		{
			name:   "prompt as blocks starts a turn",
			format: events.TranscriptClaudeCode,
			lines:  []string{user(`[{"type":"text","text":"what is in this screenshot"},{"type":"image","source":{}}]`)},
			check: func(t *testing.T, c Conversation) {
				if c.Turns != 1 || len(c.Messages) != 1 || c.Messages[0].Synthetic {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name:   "no offsets",
			format: events.TranscriptChatJSONL,
			lines:  []string{`{"role":"user","content":"a"}`, `{"role":"assistant","content":"b"}`},
			check: func(t *testing.T, c Conversation) {
				if c.Messages[1].Offset != 1 || c.Messages[1].ID != "1" {
					t.Errorf("%+v", c.Messages[1])
				}
			},
		},
		{
			name:   "chat bad lines",
			format: events.TranscriptChatJSONL,
			lines: []string{
				`{"role":1,"content":"x"}`, `{"role":"user","content":5}`, `{"role":"robot","content":"x"}`,
				`{"role":"assistant","tool_calls":{}}`, `[]`, `{"role":"user","content":{"a":1}}`,
				`{"role":"user","content":"ok","timestamp":"yesterday"}`,
			},
			skipped: 6,
		},
		{
			name:   "chat arguments",
			format: events.TranscriptChatJSONL,
			lines: []string{
				`{"role":"assistant","tool_calls":[{"id":"a","name":"write","arguments":{"filePath":"x.go"}},{"id":"b","name":"Write","arguments":"{\"file_path\":\"y.go\"}"},{"id":"c","name":"bash","arguments":"ls -la"},{"id":"d","name":"bash","arguments":""}]}`,
				`{"role":"tool","tool_call_id":"c","content":"total 0","is_error":true}`,
			},
			check: func(t *testing.T, c Conversation) {
				if !slices.Equal(c.FilesModified, []string{"x.go", "y.go"}) {
					t.Errorf("files %q", c.FilesModified)
				}
				if c.Calls[2].Params["raw"] != "ls -la" || c.Calls[3].Params != nil || c.Calls[2].Status != prune.StatusError {
					t.Errorf("calls %+v", c.Calls)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := make([]json.RawMessage, len(tc.lines))
			for i, l := range tc.lines {
				raw[i] = json.RawMessage(l)
			}
			c := mustParse(t, tc.format, raw, nil)
			if c.Lines != len(tc.lines) || c.Skipped != tc.skipped {
				t.Errorf("lines %d skipped %d, want %d and %d", c.Lines, c.Skipped, len(tc.lines), tc.skipped)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseUnknownFormat(t *testing.T) {
	if _, err := Parse("jsonl", nil, nil); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("err %v, want ErrUnknownFormat", err)
	}
}

func TestParseChatSession(t *testing.T) {
	lines, offsets := readLines(t, "testdata/chat-session.jsonl")
	c := mustParse(t, events.TranscriptChatJSONL, lines, offsets)
	if c.Session != "chat-1" || c.Cwd != sessionCwd || c.Skipped != 0 || c.Turns != 1 {
		t.Errorf("%+v", c)
	}
	roles := []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleAssistant, RoleTool, RoleTool, RoleAssistant}
	if len(c.Messages) != len(roles) {
		t.Fatalf("%d messages: %+v", len(c.Messages), c.Messages)
	}
	for i, r := range roles {
		if c.Messages[i].Role != r {
			t.Errorf("message %d role %s, want %s", i, c.Messages[i].Role, r)
		}
	}
	if !slices.Equal(c.FilesModified, []string{"pkg/core/resilience/retry_test.go"}) {
		t.Errorf("files %q", c.FilesModified)
	}
	if len(c.Calls) != 3 || c.Calls[1].Tool != "edit" || c.Calls[1].Params["newString"] != "clk.Advance" || c.Calls[1].Output != "edited" {
		t.Errorf("calls %+v", c.Calls)
	}
	if c.Messages[2].Time.Unix() != 1772449202 {
		t.Errorf("unix timestamp read as %v", c.Messages[2].Time)
	}
	if c.Outcome() != memory.OutcomeSuccess {
		t.Errorf("outcome %q", c.Outcome())
	}
	if sig := Signals(c); sig[4] < SignalBeforeChange {
		t.Errorf("signal before the edit %v", sig[4])
	}
}

// samplesDir holds the captured Claude Code transcripts shared by the team;
// the tests that read them are skipped where they are absent.
func samplesDir(t *testing.T) string {
	dir := os.Getenv("CUEDECK_SAMPLES")
	if dir == "" {
		dir = "/work/shared/samples"
	}
	dir = filepath.Join(dir, "claude-code")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no samples: %v", err)
	}
	return dir
}

func TestParseSamples(t *testing.T) {
	dir := samplesDir(t)

	t.Run("run1-read", func(t *testing.T) {
		lines, offsets := readLines(t, filepath.Join(dir, "run1-read/822efcc6-1670-4307-9faa-0598d5a48a0b.stripped.jsonl"))
		c := mustParse(t, events.TranscriptClaudeCode, lines, offsets)
		if c.Session != "822efcc6-1670-4307-9faa-0598d5a48a0b" || c.Cwd != "/tmp/ccproj" || c.Agent != "" || c.Turns != 1 {
			t.Errorf("%+v", c)
		}
		if len(c.Calls) != 1 || c.Calls[0].Tool != "Read" || c.Calls[0].Status != prune.StatusCompleted ||
			c.Calls[0].Params["file_path"] != "/tmp/ccproj/README.md" || !strings.Contains(c.Calls[0].Output, "hello from the fixture project") {
			t.Errorf("calls %+v", c.Calls)
		}
		if len(c.FilesModified) != 0 {
			t.Errorf("a read modified %q", c.FilesModified)
		}
		if c.Skipped != c.Lines-4 {
			t.Errorf("skipped %d of %d", c.Skipped, c.Lines)
		}
		if got := c.AssistantProse(); got != "The README says: hello from the fixture project." {
			t.Errorf("prose %q", got)
		}
	})

	t.Run("run2-subagent", func(t *testing.T) {
		lines, offsets := readLines(t, filepath.Join(dir, "run2-subagent/4a054283-897b-4901-a501-da0fbc78e52f.stripped.jsonl"))
		c := mustParse(t, events.TranscriptClaudeCode, lines, offsets)
		if c.Agent != "" || c.Turns != 2 {
			t.Errorf("agent %q turns %d", c.Agent, c.Turns)
		}
		if len(c.Calls) != 1 || c.Calls[0].Tool != "Agent" || c.Calls[0].Status != prune.StatusCompleted {
			t.Errorf("calls %+v", c.Calls)
		}
		var notification *Message
		for i := range c.Messages {
			if strings.HasPrefix(c.Messages[i].Text, "<task-notification>") {
				notification = &c.Messages[i]
			}
		}
		if notification == nil || !notification.Synthetic || notification.Role != RoleUser {
			t.Fatalf("task notification %+v", notification)
		}
		if Signals(c)[notification.Index] != 0 {
			t.Error("a task notification has a signal")
		}
		if c.Messages[0].Synthetic || c.Messages[0].Text != "DELEGATE this to a subagent please" {
			t.Errorf("typed prompt %+v", c.Messages[0])
		}
	})

	t.Run("subagent", func(t *testing.T) {
		lines, offsets := readLines(t, filepath.Join(dir, "run2-subagent/subagents/agent-a54c52676825771b6.stripped.jsonl"))
		c := mustParse(t, events.TranscriptClaudeCode, lines, offsets)
		if c.Agent != "a54c52676825771b6" || c.Session != "4a054283-897b-4901-a501-da0fbc78e52f" {
			t.Errorf("agent %q session %q", c.Agent, c.Session)
		}
		if c.AssistantProse() != "OK." || len(c.Messages) != 2 || c.Messages[0].Text != "Reply with the single word OK." {
			t.Errorf("%+v", c.Messages)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/coding-session.jsonl", "testdata/chat-session.jsonl"} {
		lines, _ := readLines(f, name)
		for _, l := range lines {
			f.Add(true, []byte(l))
			f.Add(false, []byte(l))
		}
	}
	f.Add(true, []byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"\u00ff"}]}]}}`))
	f.Add(false, []byte(`{"role":"tool","tool_call_id":"","content":null,"timestamp":1e300}`))
	f.Fuzz(func(t *testing.T, claude bool, data []byte) {
		format := events.TranscriptChatJSONL
		if claude {
			format = events.TranscriptClaudeCode
		}
		// The fuzzed bytes are one line and, split at newlines, several.
		lines, offsets := splitLines(data)
		for _, in := range [][]json.RawMessage{{json.RawMessage(data)}, lines} {
			c, err := Parse(format, in, offsets)
			if err != nil {
				t.Fatal(err)
			}
			if c.Lines != len(in) || c.Skipped > c.Lines {
				t.Fatalf("lines %d skipped %d of %d", c.Lines, c.Skipped, len(in))
			}
			for i, m := range c.Messages {
				if m.Index != i || m.Turn > c.Turns || m.ID == "" {
					t.Fatalf("message %d: %+v", i, m)
				}
			}
			sig := Signals(c)
			if len(sig) != len(c.Messages) {
				t.Fatalf("%d signals for %d messages", len(sig), len(c.Messages))
			}
			for _, s := range sig {
				if !(s >= 0 && s <= 1) {
					t.Fatalf("signal %v", s)
				}
			}
			_ = c.Outcome()
			_ = c.MemoryTranscript()
		}
	})
}
