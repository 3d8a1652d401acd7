package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

func sampleWorkspace(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "docs/auth.md", "# Authentication\n\n## Login Flow\n\nUsers sign in with OAuth tokens.\n\n## Logout\n\nTokens are revoked.\n")
	writeFile(t, root, "docs/api.md", "# API\n\n## Error Codes\n\n1001 means file not found.\n")
	return root
}

// goSDKSession checks one official-SDK client session against the sample
// workspace: tools listed with the seed's schemas, both tools answering,
// and errors arriving as JSON-RPC errors with code and data.
func goSDKSession(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	if !names[tools.ReadContext] || !names[tools.ReadDoc] {
		t.Fatalf("tools listed: %v", names)
	}
	var text string
	bustest.Eventually(t, 60*time.Second, "read_context finds docs/auth.md", func() bool {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "login oauth"}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			return false
		}
		text = res.Content[0].(*mcp.TextContent).Text
		return strings.Contains(text, "docs/auth.md")
	})
	var hits []tools.ContextHit
	if err := json.Unmarshal([]byte(text), &hits); err != nil || hits[0].Path != "docs/auth.md" || len(hits[0].Anchors) == 0 {
		t.Fatalf("read_context: %s", text)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/auth.md", "anchor": "Login Flow"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc tools.ReadDocResult
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &doc)
	if doc.LineRange == nil || doc.LineRange.Start != 3 || !strings.Contains(doc.Content, "OAuth") || strings.Contains(doc.Content, "revoked") {
		t.Fatalf("read_doc section: %+v", doc)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/auht.md"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != tools.CodeFileNotFound || !strings.Contains(string(wire.Data), "docs/auth.md") {
		t.Fatalf("missing file: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "x", "limit": 99}})
	if !errors.As(err, &wire) || wire.Code != tools.CodeInvalidParams {
		t.Fatalf("limit 99: %v", err)
	}
}

// startMCPGo starts an mcp-go client and initialises its session.
func startMCPGo(ctx context.Context, t *testing.T, c *mcpgo.Client) {
	t.Helper()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcpgotypes.InitializeRequest{Params: mcpgotypes.InitializeParams{
		ClientInfo: mcpgotypes.Implementation{Name: "mcp-go", Version: "test"},
	}}); err != nil {
		t.Fatal(err)
	}
}

func mcpGoSession(ctx context.Context, t *testing.T, c *mcpgo.Client) {
	t.Helper()
	startMCPGo(ctx, t, c)
	list, err := c.ListTools(ctx, mcpgotypes.ListToolsRequest{})
	if err != nil || len(list.Tools) < 2 {
		t.Fatalf("list tools: %v %v", list, err)
	}
	var text string
	bustest.Eventually(t, 60*time.Second, "mcp-go read_context", func() bool {
		res, err := c.CallTool(ctx, mcpgotypes.CallToolRequest{Params: mcpgotypes.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "error codes"}}})
		if err != nil || len(res.Content) == 0 {
			return false
		}
		tc, _ := mcpgotypes.AsTextContent(res.Content[0])
		text = tc.Text
		return strings.Contains(text, "docs/api.md")
	})
	res, err := c.CallTool(ctx, mcpgotypes.CallToolRequest{Params: mcpgotypes.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/api.md"}}})
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := mcpgotypes.AsTextContent(res.Content[0])
	if !strings.Contains(tc.Text, "1001 means file not found") {
		t.Fatalf("mcp-go read_doc: %s", tc.Text)
	}
	_, err = c.CallTool(ctx, mcpgotypes.CallToolRequest{Params: mcpgotypes.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/nope.md"}}})
	if err == nil || !strings.Contains(err.Error(), "File Not Found") {
		t.Fatalf("mcp-go missing file: %v", err)
	}
}

// mcpGoMemories has an mcp-go client write, correct and forget a memory:
// save_memory's hash is what search_memories finds; update_memory's
// correction replaces it in search; forget_memory takes each out.
func mcpGoMemories(ctx context.Context, t *testing.T, c *mcpgo.Client) {
	t.Helper()
	startMCPGo(ctx, t, c)
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := c.CallTool(ctx, mcpgotypes.CallToolRequest{Params: mcpgotypes.CallToolParams{Name: tool, Arguments: args}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("mcp-go %s: %v %+v", tool, err, res)
		}
		tc, _ := mcpgotypes.AsTextContent(res.Content[0])
		return tc.Text
	}
	hashOf := func(text string) string {
		var r struct {
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil || r.Hash == "" {
			t.Fatalf("no hash in %s: %v", text, err)
		}
		return r.Hash
	}
	found := func(query string) []string {
		t.Helper()
		text := call(tools.SearchMemories, map[string]any{"query": query, "mode": "keyword"})
		var hits []struct {
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(text), &hits); err != nil {
			// "nothing found" is said in words
			return nil
		}
		var hashes []string
		for _, h := range hits {
			hashes = append(hashes, h.Hash)
		}
		return hashes
	}
	first := hashOf(call(tools.SaveMemory, map[string]any{"kind": "decision", "text": "Sign tokens with Ed25519 keys", "tags": []string{"auth"}}))
	if got := found("sign tokens"); len(got) != 1 || got[0] != first {
		t.Fatalf("search_memories after save_memory: %v, want %s", got, first)
	}
	second := hashOf(call(tools.UpdateMemory, map[string]any{"hash": first, "text": "Sign tokens with ECDSA P-256 keys"}))
	if got := found("sign tokens"); len(got) != 1 || got[0] != second || second == first {
		t.Fatalf("search_memories after update_memory: %v, want %s alone", got, second)
	}
	// Forgetting the correction makes the corrected memory current again
	// (docs/tools.md); forgetting that too leaves nothing.
	call(tools.ForgetMemory, map[string]any{"hash": second})
	if got := found("sign tokens"); len(got) != 1 || got[0] != first {
		t.Fatalf("search_memories after forgetting the correction: %v, want %s again", got, first)
	}
	call(tools.ForgetMemory, map[string]any{"hash": first})
	if got := found("sign tokens"); len(got) != 0 {
		t.Fatalf("search_memories after forgetting both: %v, want nothing", got)
	}
}

// TestMCPClientsOverStdioAndHTTP drives the real `cue mcp` binary over stdio
// with two MCP clients that are not ours, and the daemon it starts over
// Streamable HTTP with both.
func TestMCPClientsOverStdioAndHTTP(t *testing.T) {
	root := sampleWorkspace(t)
	ws := &workspace.Workspace{Root: root}
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", root).Run() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("go-sdk/stdio", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin("cue"), "mcp", "--workspace", root)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		goSDKSession(ctx, t, cs)
	})
	info, err := ws.ReadDaemonInfo()
	if err != nil {
		t.Fatalf("`cue mcp` should have started a daemon: %v", err)
	}
	t.Run("mcp-go/stdio/memory", func(t *testing.T) {
		c := mcpgo.NewClient(transport.NewStdio(bin("cue"), os.Environ(), "mcp", "--workspace", root))
		defer c.Close()
		mcpGoMemories(ctx, t, c)
	})
	t.Run("mcp-go/stdio", func(t *testing.T) {
		c := mcpgo.NewClient(transport.NewStdio(bin("cue"), os.Environ(), "mcp", "--workspace", root))
		defer c.Close()
		mcpGoSession(ctx, t, c)
	})
	t.Run("go-sdk/http", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: info.MCPURL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		goSDKSession(ctx, t, cs)
	})
	t.Run("mcp-go/http", func(t *testing.T) {
		tr, err := transport.NewStreamableHTTP(info.MCPURL)
		if err != nil {
			t.Fatal(err)
		}
		c := mcpgo.NewClient(tr)
		defer c.Close()
		mcpGoSession(ctx, t, c)
	})
	// A second daemon on the same workspace is refused with 1007.
	out, err := exec.Command(bin("cue"), "up", "--workspace", root).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1007") || !strings.Contains(string(out), ".cuedeck/.cache/lock") {
		t.Fatalf("second cue up: %v\n%s", err, out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("second cue up exit: %v", err)
	}
	out2 := cue(t, "down", "--workspace", root)
	if !strings.Contains(out2, "Stopped") {
		t.Fatalf("cue down: %s", out2)
	}
	if _, err := ws.ReadDaemonInfo(); !errors.Is(err, workspace.ErrNoDaemon) {
		t.Fatalf("after cue down the daemon file must be gone: %v", err)
	}
}

// The daemon is killed under a live `cue mcp`: the agent's next calls
// reach a new daemon, started by `cue mcp` itself, within 5 s, without the
// agent restarting its MCP server; a write made afterwards lands once.
func TestMCPOutlivesItsDaemon(t *testing.T) {
	root := sampleWorkspace(t)
	ws := &workspace.Workspace{Root: root}
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", root).Run() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin("cue"), "mcp", "--workspace", root)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	goSDKSession(ctx, t, cs)

	for round := range 2 {
		before, err := ws.ReadDaemonInfo()
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		bustest.Eventually(t, 10*time.Second, "the daemon gone", func() bool { return !workspace.ProcessAlive(before.PID) })
		attempts := 0
		for {
			attempts++
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/api.md"}})
			if err == nil && !res.IsError && strings.Contains(res.Content[0].(*mcp.TextContent).Text, "1001 means file not found") {
				break
			}
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || !strings.Contains(string(wire.Data), `"retryable":true`) {
				t.Fatalf("round %d: a call after the kill failed without saying it may be retried: %v", round, err)
			}
			if time.Since(killed) > 5*time.Second {
				t.Fatalf("round %d: still failing %s after the kill: %v", round, time.Since(killed), err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		took := time.Since(killed)
		t.Logf("round %d: answered %s after the kill, on attempt %d", round, took.Round(time.Millisecond), attempts)
		if took > 5*time.Second {
			t.Errorf("round %d: the first answer came %s after the kill; want within 5s", round, took)
		}
		after, err := ws.ReadDaemonInfo()
		if err != nil || after.PID == before.PID {
			t.Fatalf("round %d: no new daemon: %+v %v", round, after, err)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.CreateTask, Arguments: map[string]any{"title": "Made after two kills"}})
	if err != nil || res.IsError {
		t.Fatalf("create_task after the kills: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ListTasks, Arguments: map[string]any{}})
	if err != nil || strings.Count(res.Content[0].(*mcp.TextContent).Text, "Made after two kills") != 1 {
		t.Fatalf("list_tasks: %v %+v", err, res)
	}
}
