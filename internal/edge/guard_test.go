package edge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// plantedToken is a GitHub token the guard catches, assembled so no file
// holds one.
var plantedToken = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"

// plantedKey is a private key across lines: redacting it must keep the
// lines, so a section's line range still points at the same text.
var plantedKey = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAx7Yq2n8T0fVbS3kQ9mW1pL4r\n", 3) + "-----END RSA PRIVATE KEY-----"

const leakyDoc = `# Deploy notes

## Token ghp_PLANTED for the deploy bot

Export GITHUB_TOKEN=ghp_PLANTED before running the deploy.

## Signing key

` + "KEY" + `

## After the key

The rollback runbook lives next door.
`

// noSecret fails the test if out holds a planted secret, and reports
// whether the guard left its marker.
func noSecret(t *testing.T, what string, out []byte) bool {
	t.Helper()
	for _, s := range []string{plantedToken, "MIIEowIBAAKCAQEA"} {
		if strings.Contains(string(out), s) {
			t.Errorf("%s returned a secret: %s", what, out)
		}
	}
	return strings.Contains(string(out), "[REDACTED:")
}

// TestNoToolReturnsASecret plants secrets in a document (its body, a
// heading, a multi-line key), a memory, task cards and a conversation, and
// calls every tool the edge serves: none may return one, each must show
// the guard's marker where the secret was, and read_doc's hash and line
// range must describe the text returned.
func TestNoToolReturnsASecret(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	content := strings.ReplaceAll(strings.Replace(leakyDoc, "KEY", plantedKey, 1), "ghp_PLANTED", plantedToken)
	r.wait(h.put(mdRecord("app", "docs/deploy.md", content, nil)))
	r.waitMemories(h.putMemory(memRec("app", memory.KindDecision, "Deploy with token "+plantedToken, "password = "+plantedToken,
		"sess-1111aaaa", "agent-abc", nil, 0.9, 1, memNow)))

	conn, _ := bustest.Start(t, bus.Settings{})
	board := startBoard(t, conn)
	appendFileTask(t, board, "app", events.Task{ID: "abc123", Title: "Rotate " + plantedToken, Status: "todo", Priority: "high",
		Notes: "old token " + plantedToken, Created: goldenNow, Updated: goldenNow, Path: tools.CardPath("abc123")})
	e := New(r.m, testLogger(t), WithBoard(board), WithDefaultRepo("app"), WithClock(clock.NewDeterministic(memNow)))

	call := func(tool string, args any) ([]byte, error) {
		t.Helper()
		b, _ := json.Marshal(args)
		out, err := e.Call(context.Background(), tool, b)
		if err != nil {
			var te *tools.Error
			if !errors.As(err, &te) {
				t.Fatalf("%s: %v", tool, err)
			}
			return []byte(te.Error()), err
		}
		return out, nil
	}
	mustRedact := func(tool string, args any) []byte {
		t.Helper()
		out, err := call(tool, args)
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		if !noSecret(t, tool, out) {
			t.Errorf("%s: no redaction marker where the secret was: %s", tool, out)
		}
		return out
	}

	mustRedact(tools.ReadContext, map[string]any{"query": "deploy token", "mode": "keyword"})

	whole := mustRedact(tools.ReadDoc, map[string]any{"path": "docs/deploy.md"})
	var doc tools.ReadDocResult
	if err := json.Unmarshal(whole, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Hash != events.SHA256Hex([]byte(doc.Content)) || doc.ContentTrust != tools.TrustData {
		t.Errorf("read_doc hash or trust does not describe the returned text: %+v", doc)
	}
	if got, want := strings.Count(doc.Content, "\n"), strings.Count(strings.TrimSpace(content), "\n"); got != want {
		t.Errorf("redaction changed the line count: %d, want %d", got, want)
	}
	after := mustRedactSection(t, call, "After the key")
	lines := strings.Split(strings.TrimSpace(content), "\n")
	if first := lines[after.LineRange.Start-1]; first != "## After the key" {
		t.Errorf("line range %+v starts at %q in the file, want the heading", after.LineRange, first)
	}
	mustRedact(tools.ReadDoc, map[string]any{"path": "docs/deploy.md", "anchor": "Signing key"})
	// An unknown anchor lists the headings, one of which holds the token.
	if out, err := call(tools.ReadDoc, map[string]any{"path": "docs/deploy.md", "anchor": "nothing like it"}); err == nil || !noSecret(t, "unknown anchor", out) {
		t.Errorf("unknown anchor: %v, want invalid params listing a redacted heading: %s", err, out)
	}

	mustRedact(tools.SearchMemories, map[string]any{"query": "deploy token", "mode": "keyword"})

	mustRedact(tools.ListTasks, map[string]any{})
	mustRedact(tools.CreateTask, map[string]any{"title": "Use " + plantedToken, "depends_on": []string{"abc123"}})
	mustRedact(tools.UpdateTask, map[string]any{"id": "abc123", "updates": map[string]any{"notes": "now " + plantedToken}})
	mustRedact(tools.GetTaskDependencies, map[string]any{"id": "abc123", "reverse": true})

	mustRedact(tools.PruneConversation, map[string]any{"tool_calls": []map[string]any{
		{"id": "c1", "tool": "read", "turn": 0, "status": "completed", "params": map[string]any{"filePath": "a.md"}, "output": "token " + plantedToken},
		{"id": "c2", "tool": "read", "turn": 1, "status": "completed", "params": map[string]any{"filePath": "a.md"}, "output": "token " + plantedToken},
	}, "tools": "seed"})
}

func mustRedactSection(t *testing.T, call func(string, any) ([]byte, error), anchor string) tools.ReadDocResult {
	t.Helper()
	out, err := call(tools.ReadDoc, map[string]any{"path": "docs/deploy.md", "anchor": anchor})
	if err != nil {
		t.Fatalf("read_doc %s: %v", anchor, err)
	}
	noSecret(t, "read_doc "+anchor, out)
	var res tools.ReadDocResult
	if err := json.Unmarshal(out, &res); err != nil || res.LineRange == nil {
		t.Fatalf("read_doc %s: %s", anchor, out)
	}
	return res
}
