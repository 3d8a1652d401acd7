package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// TestTaskToolsOnTheWire drives an edge's task tools through the MCP
// server: results arrive as content, and DependencyNotFound and
// CircularDependency as JSON-RPC errors 1001 and 1002 with their data.
func TestTaskToolsOnTheWire(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	board := tasks.NewBoard(conn.JS, nil)
	bctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- board.Run(bctx) }()
	t.Cleanup(func() { stop(); <-done })
	e := edge.New(nil, nil, edge.WithBoard(board), edge.WithDefaultRepo("app"))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, serveInMemory(t, mcpserver.New(e, mcpserver.Options{})), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	create := func(args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.CreateTask, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out tools.CreateTaskResult
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	a := create(map[string]any{"title": "a"})
	b := create(map[string]any{"title": "b", "depends_on": []string{a}})

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.CreateTask, Arguments: map[string]any{"title": "c", "depends_on": []string{"zzz999"}}})
	checkWireError(t, err, tools.CodeFileNotFound, "Dependency Not Found", "error", "DependencyNotFound")

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.UpdateTask, Arguments: map[string]any{"id": a, "updates": map[string]any{"depends_on": []string{b}}}})
	checkWireError(t, err, tools.CodeCycle, "Cycle Detected", "cycle", a+" → "+b+" → "+a)

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.UpdateTask, Arguments: map[string]any{"id": a, "updates": map[string]any{}}})
	checkWireError(t, err, tools.CodeInvalidParams, "Invalid params", "detail", "minProperties")
}
