package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/tools/toolstest"
	"github.com/cuedeck/cuedeck/internal/version"
)

// stdioEnv makes the test binary serve MCP on its stdin and stdout instead
// of running tests, so the stdio tests drive ServeStdio in a real process.
const stdioEnv = "CUEDECK_MCPSERVER_TEST_STDIO"

// testCommit stands for the commit a dev build was linked with, in this
// process and the stdio server it starts; serverInfo must then carry
// testLabel, not a bare "dev".
const (
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	testLabel  = "dev+0123456789ab"
)

func TestMain(m *testing.M) {
	version.Commit = testCommit
	if os.Getenv(stdioEnv) == "1" {
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		err := mcpserver.ServeStdio(context.Background(), mcpserver.New(testCaller(), mcpserver.Options{Logger: log}))
		if err != nil {
			log.Error("serve stdio", "error", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testCaller is the sample tool set, plus an internal failure for the
// query "boom".
func testCaller() tools.Caller {
	docs := toolstest.Sample()
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == tools.ReadContext && strings.Contains(string(args), `"boom"`) {
			return nil, errors.New("index unavailable")
		}
		return docs.Call(ctx, tool, args)
	})
}

func stdioCommand(t *testing.T) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	// The race detector's exit delay would hold up every session's close.
	cmd.Env = append(os.Environ(), stdioEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = t.Output()
	return cmd
}

// serveInMemory runs the server on one end of an in-memory pipe for the
// test's duration and returns the other end.
func serveInMemory(t *testing.T, server *mcp.Server) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mcpserver.Serve(ctx, server, st); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return ct
}

func serveHTTP(t *testing.T, opts mcpserver.HTTPOptions) string {
	t.Helper()
	srv := httptest.NewServer(mcpserver.HTTPHandler(mcpserver.New(testCaller(), mcpserver.Options{}), opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// sdkTransports are the ways the official client reaches the server.
// A stateful HTTP server speaks only the protocol versions with sessions
// (up to 2025-11-25): the SDK serves 2026-07-28 over stateless HTTP only.
var sdkTransports = []struct {
	name     string
	stateful bool
	new      func(t *testing.T) mcp.Transport
}{
	{"memory", false, func(t *testing.T) mcp.Transport {
		return serveInMemory(t, mcpserver.New(testCaller(), mcpserver.Options{}))
	}},
	{"http", true, func(t *testing.T) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mcpserver.HTTPOptions{})}
	}},
	{"http-stateless", false, func(t *testing.T) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mcpserver.HTTPOptions{Stateless: true})}
	}},
	{"http-json", true, func(t *testing.T) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mcpserver.HTTPOptions{JSONResponse: true})}
	}},
	{"stdio", false, func(t *testing.T) mcp.Transport {
		return &mcp.CommandTransport{Command: stdioCommand(t)}
	}},
	{"http-token", true, func(t *testing.T) mcp.Transport {
		return &mcp.StreamableClientTransport{
			Endpoint:   serveHTTP(t, mcpserver.HTTPOptions{Tokens: testTokens(t)}),
			HTTPClient: &http.Client{Transport: withBearer{testSecret}},
		}
	}},
}

// testSecret is the one token of the servers that require tokens.
const testSecret = "suite-0123456789abcdefghijkl"

func testTokens(t *testing.T) *access.Tokens {
	t.Helper()
	tok, err := access.NewTokens([]access.TokenConfig{{Name: "suite", Token: testSecret, Repos: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type withBearer struct{ secret string }

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// versions are what clients propose and what they must end up speaking:
// their own choice when the server knows it, the newest otherwise.
var versions = []struct{ propose, want string }{
	{"", "2026-07-28"},
	{"2026-07-28", "2026-07-28"},
	{"2025-11-25", "2025-11-25"},
	{"2025-03-26", "2025-03-26"},
	{"2099-01-01", "2026-07-28"},
}

func TestGoSDKClient(t *testing.T) {
	for _, tr := range sdkTransports {
		for _, v := range versions {
			t.Run(tr.name+"/"+cmp(v.propose, "default"), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
				cs, err := client.Connect(ctx, tr.new(t), &mcp.ClientSessionOptions{ProtocolVersion: v.propose})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				want := v.want
				if tr.stateful && want >= "2026-07-28" {
					want = "2025-11-25"
				}
				if got := cs.InitializeResult().ProtocolVersion; got != want {
					t.Errorf("protocol version %q, want %q", got, want)
				}
				if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "cuedeck" || si.Version != testLabel {
					t.Errorf("serverInfo %+v, want cuedeck %s", si, testLabel)
				}
				checkGoSDK(ctx, t, cs)
			})
		}
	}
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func checkGoSDK(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
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
		schemas[tool.Name] = s
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	checkSchemas(t, schemas)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "oauth login"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.StructuredContent != nil || len(res.Content) != 1 {
		t.Fatalf("read_context result: %+v", res)
	}
	checkHits(t, res.Content[0].(*mcp.TextContent).Text)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/auth.md", "anchor": "Tokens"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc tools.ReadDocResult
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Path != "docs/auth.md" || !strings.Contains(doc.Content, "VerifyToken") {
		t.Errorf("read_doc text: %+v", doc)
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["path"] != "docs/auth.md" || sc["anchor"] != "Tokens" {
		t.Errorf("read_doc structured content: %#v", res.StructuredContent)
	}

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "notes/auth.md"}})
	checkWireError(t, err, tools.CodeFileNotFound, "File Not Found", "suggestion", "Did you mean 'docs/auth.md'?")

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": ""}})
	checkWireError(t, err, tools.CodeInvalidParams, "Invalid params", "detail", "minLength")

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "boom"}})
	checkWireError(t, err, tools.CodeInternal, "Internal error: index unavailable", "", "")
}

// checkSchemas checks that tools/list carried the contract's schemas
// intact, keywords included.
func checkSchemas(t *testing.T, got map[string]map[string]any) {
	t.Helper()
	for _, d := range tools.Definitions() {
		var want map[string]any
		if err := json.Unmarshal(d.InputSchema, &want); err != nil {
			t.Fatal(err)
		}
		g, ok := got[d.Name]
		if !ok {
			t.Errorf("tool %s not listed", d.Name)
			continue
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("%s schema\n got %s\nwant %s", d.Name, gj, wj)
		}
	}
	if len(got) != len(tools.Definitions()) {
		t.Errorf("listed %d tools, want %d", len(got), len(tools.Definitions()))
	}
	q := prop(got[tools.ReadContext], "query")
	if q["minLength"] != 1.0 || q["maxLength"] != 200.0 {
		t.Errorf("query schema: %v", q)
	}
	if e, _ := prop(got[tools.ReadContext], "mode")["enum"].([]any); len(e) != 4 || e[3] != tools.ModeRRF {
		t.Errorf("mode enum: %v", e)
	}
	// The pattern arrives intact: it still admits any repo path and
	// refuses absolute ones and backslashes.
	p, _ := prop(got[tools.ReadDoc], "path")["pattern"].(string)
	if re, err := regexp.Compile(p); err != nil || !re.MatchString("cmd/main.go") || !re.MatchString(".github/ci.md") ||
		re.MatchString("/etc/passwd") || re.MatchString(`docs\api.md`) {
		t.Errorf("path pattern: %q (%v)", p, err)
	}
}

func prop(schema map[string]any, name string) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

func checkHits(t *testing.T, text string) {
	t.Helper()
	var hits []tools.ContextHit
	if err := json.Unmarshal([]byte(text), &hits); err != nil {
		t.Fatalf("read_context text %q: %v", text, err)
	}
	if len(hits) == 0 || hits[0].Path != "docs/auth.md" || hits[0].Hash == "" {
		t.Errorf("read_context hits: %+v", hits)
	}
}

// checkWireError checks a JSON-RPC error as the official client surfaces
// it; key, when set, names a data field that must hold want.
func checkWireError(t *testing.T, err error, code int, message, key, want string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	if we.Code != int64(code) || we.Message != message {
		t.Errorf("error %d %q, want %d %q", we.Code, we.Message, code, message)
	}
	if key == "" {
		if len(we.Data) != 0 {
			t.Errorf("unexpected data %s", we.Data)
		}
		return
	}
	var data map[string]any
	if err := json.Unmarshal(we.Data, &data); err != nil {
		t.Fatalf("data %s: %v", we.Data, err)
	}
	if got, _ := data[key].(string); !strings.Contains(got, want) {
		t.Errorf("data.%s = %q, want %q (data %s)", key, got, want, we.Data)
	}
}

func ExampleNew() {
	server := mcpserver.New(toolstest.Sample(), mcpserver.Options{Name: "cuedeck", Version: "v0.1.0"})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.Serve(ctx, server, st) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_doc", Arguments: map[string]any{"path": "docs/missing.md"}})
	fmt.Println(err)
	cs.Close()
	cancel()
	<-done
	// Output: calling "tools/call": File Not Found
}
