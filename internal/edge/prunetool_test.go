package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
)

// pruneGolden runs testdata/prune_conversation.json through an edge and
// returns each step with its answer.
func pruneGolden(t *testing.T) []goldenStep {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "prune_conversation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []goldenStep
	if err := json.Unmarshal(raw, &steps); err != nil {
		t.Fatal(err)
	}
	// No materialiser and no board: the tool is stateless.
	e := New(nil, nil)
	for i := range steps {
		s := &steps[i]
		out, err := e.Call(context.Background(), s.Tool, s.Args)
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
	return steps
}

// TestPruneConversationGolden compares every answer with
// testdata/prune_conversation.golden.json; -update rewrites it.
func TestPruneConversationGolden(t *testing.T) {
	steps := pruneGolden(t)
	golden := filepath.Join("testdata", "prune_conversation.golden.json")
	if _, same := compareGolden(t, golden, steps); !same {
		got, _ := json.MarshalIndent(steps, "", "  ")
		t.Fatalf("answers differ from %s (run with -update if the change is intended):\n%s", golden, got)
	}
}

// TestPruneConversationSeedExamples holds the answers to seed 001's worked
// examples, written down from the seed before running: which call each
// rule supersedes, and by which.
func TestPruneConversationSeedExamples(t *testing.T) {
	steps := pruneGolden(t)
	byName := map[string]tools.PruneConversationResult{}
	for _, s := range steps {
		if s.Error == nil {
			var r tools.PruneConversationResult
			if err := json.Unmarshal(s.Response, &r); err != nil {
				t.Fatal(err)
			}
			byName[s.Name] = r
		}
	}
	hashOf := func(tool string, params map[string]any) string {
		h, err := prune.CallHash(tool, params)
		if err != nil {
			t.Fatal(err)
		}
		return h[:6]
	}
	appTS := map[string]any{"filePath": "/src/app.ts"}
	for _, c := range []struct {
		name       string
		superseded []string // "id→by (reason)", in the order the rules ran
		log        []string // nil: not checked
		saved      int
	}{
		{"seed hash: same tool, same params", []string{"call_001→call_002 (hash)"},
			[]string{fmt.Sprintf("[auto-supersede] 🔄 hash %s: call_001 → call_002", hashOf("read", appTS))}, 1200},
		{"seed file: an edit clears the reads", []string{"call_001→call_002 (hash)", "call_002→call_003 (file)"},
			[]string{
				fmt.Sprintf("[auto-supersede] 🔄 hash %s: call_001 → call_002", hashOf("read", appTS)),
				"[auto-supersede] 📝 file /src/app.ts: read call_002 superseded by edit",
			}, -1},
		{"seed log: read superseded by write", []string{"call_001→call_002 (file)"},
			[]string{"[auto-supersede] 📝 file /src/app.ts: read call_001 superseded by write"}, 900},
		// The two todoreads have the same (empty) params, so the hash rule,
		// which runs first, takes the older one. Each todowrite supersedes
		// the one before it.
		{"seed todo: only the latest todowrite and todoread stay", []string{"call_002→call_005 (hash)", "call_001→call_003 (todo)", "call_003→call_004 (todo)"},
			[]string{
				fmt.Sprintf("[auto-supersede] 🔄 hash %s: call_002 → call_005", hashOf("todoread", map[string]any{})),
				"[auto-supersede] ✅ todo: pruned old todowrite call_001",
				"[auto-supersede] ✅ todo: pruned old todowrite call_003",
			}, 300},
		{"seed stuck task: reminder with breakdown suggestion", []string{"w3→w7 (hash)", "w1→w3 (todo)"}, nil, -1},
		{"protection: in progress, error and current turn calls stay", nil, nil, 0},
		{"claude code messages", []string{"toolu_01→toolu_03 (hash)", "toolu_02→toolu_06 (hash)", "toolu_03→toolu_04 (file)", "toolu_05→toolu_07 (todo)"}, nil, -1},
	} {
		r, ok := byName[c.name]
		if !ok {
			t.Fatalf("%s: no answer", c.name)
		}
		var got []string
		for _, s := range r.Superseded {
			got = append(got, fmt.Sprintf("%s→%s (%s)", s.ID, s.By, s.Reason))
		}
		if !slices.Equal(got, c.superseded) {
			t.Errorf("%s: superseded %q, want %q", c.name, got, c.superseded)
		}
		if c.log != nil && !slices.Equal(r.Log, c.log) {
			t.Errorf("%s: log %q, want %q", c.name, r.Log, c.log)
		}
		if c.saved >= 0 && r.Stats.TokensSaved != c.saved {
			t.Errorf("%s: saved %d tokens, want %d", c.name, r.Stats.TokensSaved, c.saved)
		}
		if !strings.HasPrefix(r.Stats.Text, "Strategy Effectiveness:\n") {
			t.Errorf("%s: stats text %q", c.name, r.Stats.Text)
		}
	}

	stuck := byName["seed stuck task: reminder with breakdown suggestion"]
	if !strings.Contains(stuck.Reminder, "A task has been in progress for 12 turns.") {
		t.Errorf("stuck task reminder: %q", stuck.Reminder)
	}
	if byName["seed hash: same tool, same params"].Reminder != "" {
		t.Error("a conversation without todos got a reminder")
	}

	// Superseded calls carry their supersession and a marker for output.
	file := byName["seed file: an edit clears the reads"]
	if c := file.ToolCalls[1]; !c.Superseded || c.SupersededBy != "call_003" || c.Reason != "file" || c.Output != "[superseded by call_003: file written since]" {
		t.Errorf("call_002: %+v", c)
	}
	if c := file.ToolCalls[2]; c.Superseded || c.Output != "ok" {
		t.Errorf("call_003: %+v", c)
	}

	// In messages, a superseded result's content becomes the marker and
	// everything else is unchanged.
	msgs := byName["claude code messages"]
	if msgs.CurrentTurn != 3 {
		t.Errorf("current turn %d, want 3 (three user prompts)", msgs.CurrentTurn)
	}
	var m2 struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(msgs.Messages[2], &m2); err != nil {
		t.Fatal(err)
	}
	if got := m2.Content[0]["content"]; got != "[superseded by toolu_03: same call made again]" || m2.Content[0]["tool_use_id"] != "toolu_01" {
		t.Errorf("messages[2]: %v", m2.Content)
	}
	if got := string(msgs.Messages[9]); !strings.Contains(got, "has been updated") {
		t.Errorf("the edit's result must stay: %s", got)
	}
}

func TestPruneConversationRedactsSecrets(t *testing.T) {
	key := "AKIA" + "Q7ZK2M4N6P8R3T5V"
	args, _ := json.Marshal(map[string]any{"tools": "seed", "tool_calls": []map[string]any{
		{"id": "a", "tool": "bash", "params": map[string]any{"command": "export AWS_ACCESS_KEY_ID=" + key}, "turn": 1, "status": "completed", "output": "key " + key},
	}})
	out, err := New(nil, nil).Call(context.Background(), tools.PruneConversation, args)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), key) {
		t.Fatalf("secret returned: %s", out)
	}
	msgs, _ := json.Marshal(map[string]any{"messages": []map[string]any{
		{"role": "user", "content": "my key is " + key},
	}})
	out, err = New(nil, nil).Call(context.Background(), tools.PruneConversation, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), key) {
		t.Fatalf("secret returned from messages: %s", out)
	}
}

func TestPruneConversationLimits(t *testing.T) {
	calls := make([]map[string]any, 5001)
	for i := range calls {
		calls[i] = map[string]any{"id": fmt.Sprint(i), "tool": "read", "turn": 1, "status": "completed"}
	}
	args, _ := json.Marshal(map[string]any{"tool_calls": calls})
	_, err := New(nil, nil).Call(context.Background(), tools.PruneConversation, args)
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Fatalf("5001 calls: %v", err)
	}
}
