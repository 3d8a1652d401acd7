package prune

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// readTranscript turns a Claude Code session transcript into tool calls the
// way the extractor does: a typed prompt (a user message whose content is a
// string) starts a turn, a tool_use block is a call, and its tool_result
// completes it (or errors it, with is_error). It returns the calls and the
// last turn.
func readTranscript(t *testing.T, path string) ([]ToolCall, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type block struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     map[string]any  `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	var line struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	var calls []ToolCall
	index := map[string]int{}
	turn := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line.Message.Content = nil
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Type != "user" && line.Type != "assistant" {
			continue
		}
		var prompt string
		if json.Unmarshal(line.Message.Content, &prompt) == nil {
			turn++
			continue
		}
		var blocks []block
		if err := json.Unmarshal(line.Message.Content, &blocks); err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				index[b.ID] = len(calls)
				calls = append(calls, ToolCall{ID: b.ID, Tool: b.Name, Params: b.Input, Turn: turn, Status: StatusPending})
			case "tool_result":
				c := &calls[index[b.ToolUseID]]
				c.Status = StatusCompleted
				if b.IsError {
					c.Status = StatusError
				}
				c.Output = resultText(b.Content)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return calls, turn
}

// resultText is a tool_result's content: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func TestClaudeCodeTranscript(t *testing.T) {
	calls, turn := readTranscript(t, "testdata/claude-code.jsonl")
	if turn != 3 || len(calls) != 10 {
		t.Fatalf("read %d calls up to turn %d; want 10 calls, turn 3", len(calls), turn)
	}
	p := newPruner(t, Config{Tools: ClaudeCodeTools()})
	res := p.Supersede(calls, turn)
	wantState(t, calls, map[string]string{
		"toolu_01": "hash by toolu_06", // the same Read of README.md
		"toolu_02": "todo by toolu_08",
		"toolu_03": "hash by toolu_09", // the same Grep
		"toolu_04": "kept",             // its Edit (toolu_05) failed and changed nothing
		"toolu_05": "kept",             // errored calls are purgeErrors' business
		"toolu_06": "file by toolu_07",
		"toolu_07": "kept",
		"toolu_08": "kept",
		"toolu_09": "kept",
		"toolu_10": "kept", // still pending, in the current turn
	})
	readHash := short("Read", map[string]any{"file_path": "/repo/README.md"})
	grepHash := short("Grep", calls[2].Params)
	wantLog(t, res,
		"[auto-supersede] 🔄 hash "+readHash+": toolu_01 → toolu_06",
		"[auto-supersede] 🔄 hash "+grepHash+": toolu_03 → toolu_09",
		"[auto-supersede] 📝 file /repo/README.md: Read toolu_06 superseded by Edit",
		"[auto-supersede] ✅ todo: pruned old TodoWrite toolu_02",
	)
	out := func(id string) int {
		for _, c := range calls {
			if c.ID == id {
				return len(c.Output)
			}
		}
		return -1
	}
	want := Stats{
		Hash: Tally{2, out("toolu_01") + out("toolu_03")},
		File: Tally{1, out("toolu_06")},
		Todo: Tally{1, out("toolu_02")},
	}
	if res.Stats != want {
		t.Errorf("stats %+v, want %+v", res.Stats, want)
	}
	if got := p.FileKey(calls[2]); got != "grep:/repo:Teh:*.md" {
		t.Errorf("Grep key %q", got)
	}
	if got := p.FileKey(calls[9]); got != "glob::docs/**/*.md" {
		t.Errorf("Glob key %q", got)
	}

	// Claude Code's todos have no id: they are matched by content, so a
	// changed activeForm keeps the task's turn.
	fix := res.Todos.Tasks[0]
	if fix.Content != "Fix README typo" || fix.InProgressSince != 1 || res.Todos.LastWriteTurn != 2 {
		t.Errorf("todos %+v", res.Todos)
	}
	r := p.TodoReminder(res.Todos, 13)
	if !strings.HasSuffix(r.Text, StuckGuidance(12, "TodoWrite")) {
		t.Errorf("reminder at 13:\n%s", r.Text)
	}
}

// The seed's naming does not know Claude Code's tools: with it, only the
// hash rule applies to a Claude Code transcript.
func TestSeedNamingOnClaudeCodeTranscript(t *testing.T) {
	calls, turn := readTranscript(t, "testdata/claude-code.jsonl")
	res := newPruner(t, Config{}).Supersede(calls, turn)
	if res.Stats.File.Count+res.Stats.Todo.Count != 0 || res.Stats.Hash.Count != 2 {
		t.Errorf("stats %+v; want the two hash supersessions only", res.Stats)
	}
}
