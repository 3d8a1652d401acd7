package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// mcpgoTransports are the ways the third-party client reaches the server.
var mcpgoTransports = []struct {
	name     string
	stateful bool
	new      func(t *testing.T) transport.Interface
}{
	{"http", true, func(t *testing.T) transport.Interface {
		return mustHTTP(t, serveHTTP(t, mcpserver.HTTPOptions{}))
	}},
	{"http-stateless", false, func(t *testing.T) transport.Interface {
		return mustHTTP(t, serveHTTP(t, mcpserver.HTTPOptions{Stateless: true}))
	}},
	{"http-token", true, func(t *testing.T) transport.Interface {
		tr, err := transport.NewStreamableHTTP(serveHTTP(t, mcpserver.HTTPOptions{Tokens: testTokens(t)}),
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testSecret}))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}},
	{"stdio", false, func(t *testing.T) transport.Interface {
		return transport.NewStdio(os.Args[0], []string{stdioEnv + "=1", "GORACE=atexit_sleep_ms=0"})
	}},
}

func mustHTTP(t *testing.T, url string) transport.Interface {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestMCPGoClient(t *testing.T) {
	for _, tr := range mcpgoTransports {
		for _, v := range versions {
			t.Run(tr.name+"/"+cmp(v.propose, "default"), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				trans := tr.new(t)
				c := mcpgo.NewClient(trans, mcpgo.WithProtocolVersion(v.propose))
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
					ClientInfo: mcp.Implementation{Name: "mcp-go-test", Version: "0"},
				}})
				if err != nil {
					t.Fatal(err)
				}
				want := v.want
				if tr.stateful && want >= "2026-07-28" {
					want = "2025-11-25"
				}
				if init.ProtocolVersion != want {
					t.Errorf("protocol version %q, want %q", init.ProtocolVersion, want)
				}
				checkMCPGo(ctx, t, c)
				// The client reduces tool errors to their message; the
				// transport shows what was on the wire. Only on the
				// handshake-era versions, whose requests need no _meta.
				if want < "2026-07-28" {
					checkMCPGoWire(ctx, t, trans)
				}
			})
		}
	}
}

func checkMCPGo(ctx context.Context, t *testing.T, c *mcpgo.Client) {
	t.Helper()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		// mcp-go re-encodes a schema without "required" as
		// "required": []; the server sent none.
		if r, ok := s["required"].([]any); ok && len(r) == 0 {
			delete(s, "required")
		}
		schemas[tool.Name] = s
	}
	checkSchemas(t, schemas)

	res, err := c.CallTool(ctx, call(tools.ReadContext, map[string]any{"query": "oauth login"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.StructuredContent != nil || len(res.Content) != 1 {
		t.Fatalf("read_context result: %+v", res)
	}
	text, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		t.Fatalf("read_context content %T", res.Content[0])
	}
	checkHits(t, text.Text)

	res, err = c.CallTool(ctx, call(tools.ReadDoc, map[string]any{"path": "docs/auth.md"}))
	if err != nil {
		t.Fatal(err)
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["path"] != "docs/auth.md" {
		t.Errorf("read_doc structured content: %#v", res.StructuredContent)
	}

	_, err = c.CallTool(ctx, call(tools.ReadDoc, map[string]any{"path": "notes/auth.md"}))
	if err == nil || err.Error() != "File Not Found" {
		t.Errorf("missing file: %v", err)
	}
	_, err = c.CallTool(ctx, call(tools.ReadContext, map[string]any{"query": ""}))
	if !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("empty query: %v", err)
	}
	_, err = c.CallTool(ctx, call(tools.ReadContext, map[string]any{"query": "boom"}))
	if !errors.Is(err, mcp.ErrInternalError) || !strings.Contains(err.Error(), "index unavailable") {
		t.Errorf("internal failure: %v", err)
	}
}

func call(name string, args map[string]any) mcp.CallToolRequest {
	return mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}}
}

func checkMCPGoWire(ctx context.Context, t *testing.T, trans transport.Interface) {
	t.Helper()
	cases := []struct {
		args      map[string]any
		code      int
		key, want string
	}{
		{map[string]any{"path": "notes/auth.md"}, tools.CodeFileNotFound, "suggestion", "Did you mean 'docs/auth.md'?"},
		{map[string]any{"path": "/etc/auth.md"}, tools.CodeInvalidParams, "detail", "pattern"},
	}
	for i, c := range cases {
		resp, err := trans.SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId(int64(1000 + i)),
			Method:  string(mcp.MethodToolsCall),
			Params:  map[string]any{"name": tools.ReadDoc, "arguments": c.args},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Error == nil || resp.Error.Code != c.code {
			t.Errorf("%v: response %+v, want code %d", c.args, resp, c.code)
			continue
		}
		data, _ := resp.Error.Data.(map[string]any)
		if got, _ := data[c.key].(string); !strings.Contains(got, c.want) {
			t.Errorf("%v: data %v, want %s containing %q", c.args, resp.Error.Data, c.key, c.want)
		}
	}
}
