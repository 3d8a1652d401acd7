package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Secrets of the fixture: a token's holder reads only its repos, and
// nothing of the others may come back to it in any form.
const (
	alphaSecret = "alpha-0123456789abcdefghij" // repo app (the workspace)
	bravoSecret = "bravo-0123456789abcdefghij" // repo vault
	carolSecret = "carol-0123456789abcdefghij" // repo app, for the burst
	opsSecret   = "ops-0123456789abcdefghijkl" // every repo, to wait on indexing
	vaultWord   = "VAULTCONTENT7781"
	vaultMemory = "Rotate the vault keys every Tuesday"
)

type bearer struct{ secret, origin string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, url, secret string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "security-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{secret: secret}},
	}, nil)
	if err != nil {
		t.Fatalf("connect with token: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool and returns its text or its JSON-RPC error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, *jsonrpc.Error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return "", we
		}
		t.Fatalf("%s: %v", tool, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), nil
}

func noLeak(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{vaultWord, vaultMemory, "vault.md", "keys.md"} {
		if strings.Contains(text, s) {
			t.Errorf("%s leaks %q: %s", what, s, text)
		}
	}
}

// TestSecurityRefusals runs a daemon with two repos and tokens and checks
// each refusal issue 7 names: a token for one repo asking for the other's
// documents directly, by search, by memory search and by scene; a missing
// or invalid token; a foreign Origin; an oversized body; a burst over the
// rate limit. Each is refused with its error and logged, and no content of
// the other repo comes back.
func TestSecurityRefusals(t *testing.T) {
	root, vault := t.TempDir(), t.TempDir()
	write(t, root, "docs/app.md", "# App\n\nThe quasar mooring procedure of the app.\n")
	write(t, root, ".cuedeck/cards/moor01.md", "---\nid: moor01\ntitle: Moor the quasar\nstatus: active\n---\n\nSee @docs/app.md.\n")
	write(t, vault, "docs/vault.md", "# Vault\n\nThe quasar mooring vault combination is "+vaultWord+".\n")
	write(t, vault, "docs/keys.md", "# Keys\n\nKey rotation for the quasar mooring.\n")
	logs := &logtest.Buffer{}
	n := startNodeLogged(t, root, func(c *workspace.Config) {
		c.Workspace.Name = "app"
		c.Repos = []workspace.RepoConfig{{Name: "vault", Path: vault}}
		c.MCP.Tokens = []access.TokenConfig{
			{Name: "alpha", Token: alphaSecret, Repos: []string{"app"}},
			{Name: "bravo", Token: bravoSecret, Repos: []string{"vault"}},
			{Name: "carol", Token: carolSecret, Repos: []string{"app"}},
			{Name: "ops", Token: opsSecret, Repos: []string{"*"}},
		}
		// Seed 002's limits, but read_doc loose enough to poll on.
		c.MCP.RateLimitsDisabled = false
		c.MCP.RateLimits = map[string]workspace.RateLimitConfig{tools.ReadDoc: {Limit: 100000, Window: workspace.Duration{Duration: time.Minute}}}
	}, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))

	// A NATS caller without a token is refused; with one it is its token.
	_, err := n.caller.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"docs/app.md"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeUnauthorized {
		t.Fatalf("NATS call without a token: %v", err)
	}
	ops, err := query.NewClient(n.conn.NC, query.ClientOptions{Prefix: n.info.QueryPrefix, Token: opsSecret})
	if err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 60*time.Second, "both repos indexed", func() bool {
		for _, p := range []string{"app/docs/app.md", "vault/docs/vault.md", "vault/docs/keys.md"} {
			if _, err := ops.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"`+p+`"}`)); err != nil {
				return false
			}
		}
		return true
	})
	// A memory of the vault repo, as an extractor would store it.
	mkv, err := n.conn.JS.KeyValue(context.Background(), events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	rec := events.MemoryRecord{Memory: memory.Memory{Content: vaultMemory, Kind: memory.KindDecision, Confidence: 0.9, Repo: "vault", Session: "s1", CreatedAt: now, UpdatedAt: now}, Hash: memory.Hash(vaultMemory), Extractions: 1}
	raw, err := events.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mkv.Put(context.Background(), events.MemoryKey("vault", rec.Hash), raw); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 30*time.Second, "the vault memory served", func() bool {
		out, err := ops.Call(context.Background(), tools.SearchMemories, json.RawMessage(`{"query":"vault keys","mode":"keyword"}`))
		return err == nil && strings.Contains(string(out), vaultMemory)
	})

	alpha := mcpSession(t, n.info.MCPURL, alphaSecret)
	// Directly: the vault's documents do not exist for alpha, by any name.
	for _, p := range []string{"vault/docs/vault.md", "docs/vault.md", "docs/keys.md"} {
		out, werr := call(t, alpha, tools.ReadDoc, map[string]any{"path": p})
		if werr == nil || werr.Code != tools.CodeFileNotFound {
			t.Errorf("alpha read_doc %s: %s %v", p, out, werr)
			continue
		}
		// The path asked for is echoed back; nothing else may name the vault.
		noLeak(t, "alpha read_doc "+p, strings.ReplaceAll(werr.Message+string(werr.Data), p, ""))
	}
	// Traversal is refused before any lookup.
	if out, werr := call(t, alpha, tools.ReadDoc, map[string]any{"path": "docs/../../vault/docs/vault.md"}); werr == nil || werr.Code != tools.CodeInvalidParams {
		t.Errorf("alpha traversal: %s %v", out, werr)
	}
	// By search: only the app's documents and memories.
	out, werr := call(t, alpha, tools.ReadContext, map[string]any{"query": "quasar mooring vault combination", "mode": "keyword"})
	if werr != nil || !strings.Contains(out, "docs/app.md") {
		t.Errorf("alpha read_context: %s %v", out, werr)
	}
	noLeak(t, "alpha read_context", out)
	out, werr = call(t, alpha, tools.SearchMemories, map[string]any{"query": "vault keys Tuesday"})
	if werr != nil {
		t.Errorf("alpha search_memories: %v", werr)
	}
	noLeak(t, "alpha search_memories", out)
	out, werr = call(t, alpha, tools.SearchMemories, map[string]any{"query": "vault keys", "filters": map[string]any{"repo": "vault"}})
	if werr != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("alpha search_memories in vault: %s %v", out, werr)
	}
	// By scene: alpha's scene is the workspace's, without the vault.
	out, werr = call(t, alpha, tools.GetScene, map[string]any{"token_limit": 4000})
	if werr != nil || !strings.Contains(out, "moor01") {
		t.Errorf("alpha get_scene: %s %v", out, werr)
	}
	noLeak(t, "alpha get_scene", out)
	// By the task tools: the vault's board is not there for alpha.
	if out, werr := call(t, alpha, tools.ListTasks, map[string]any{"repo": "vault"}); werr == nil || werr.Code != tools.CodeInvalidParams {
		t.Errorf("alpha list_tasks in vault: %s %v", out, werr)
	}

	// bravo reads the vault, and gets no scene of the app's workspace.
	bravo := mcpSession(t, n.info.MCPURL, bravoSecret)
	if out, werr := call(t, bravo, tools.ReadDoc, map[string]any{"path": "docs/vault.md"}); werr != nil || !strings.Contains(out, vaultWord) {
		t.Errorf("bravo read_doc its own repo: %s %v", out, werr)
	}
	if out, werr := call(t, bravo, tools.ReadDoc, map[string]any{"path": "docs/app.md"}); werr == nil || werr.Code != tools.CodeFileNotFound {
		t.Errorf("bravo read_doc app: %s %v", out, werr)
	}
	if out, werr := call(t, bravo, tools.GetScene, map[string]any{}); werr == nil || werr.Code != tools.CodeFileNotFound || strings.Contains(out, "moor01") {
		t.Errorf("bravo get_scene: %s %v", out, werr)
	}

	// Over NATS the token decides the same way.
	alphaNATS, _ := query.NewClient(n.conn.NC, query.ClientOptions{Prefix: n.info.QueryPrefix, Token: alphaSecret})
	_, err = alphaNATS.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"vault/docs/vault.md"}`))
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("alpha over NATS, vault doc: %v", err)
	}
	noLeak(t, "alpha over NATS", strings.ReplaceAll(err.Error(), "vault/docs/vault.md", ""))

	// At the door: no token, a wrong one, a foreign page, a huge body.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`
	for _, tc := range []struct {
		name   string
		rt     bearer
		body   string
		status int
		reason string
	}{
		{"no token", bearer{}, initialize, http.StatusUnauthorized, "no token"},
		{"invalid token", bearer{secret: alphaSecret + "x"}, initialize, http.StatusUnauthorized, "invalid token"},
		{"foreign origin", bearer{secret: alphaSecret, origin: "https://evil.example"}, initialize, http.StatusForbidden, "origin"},
		{"oversized body", bearer{secret: alphaSecret}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_context","arguments":{"query":"` + strings.Repeat("a", 2<<20) + `"}}}`, http.StatusRequestEntityTooLarge, "body too large"},
	} {
		req, _ := http.NewRequest(http.MethodPost, n.info.MCPURL, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: tc.rt}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.status, body.String())
		}
		noLeak(t, tc.name, body.String())
		if !strings.Contains(logs.String(), `"reason":"`+tc.reason+`"`) {
			t.Errorf("%s: not logged:\n%s", tc.name, logs)
		}
	}

	// A burst over read_context's limit (15 at once) is refused with the
	// seed's 429 and data.
	carol := mcpSession(t, n.info.MCPURL, carolSecret)
	for i := 1; i <= 16; i++ {
		out, werr := call(t, carol, tools.ReadContext, map[string]any{"query": "quasar", "mode": "keyword"})
		if i < 16 {
			if werr != nil {
				t.Fatalf("carol call %d: %v", i, werr)
			}
			continue
		}
		if werr == nil || werr.Code != tools.CodeRateLimit || werr.Message != "Rate Limit Exceeded" {
			t.Fatalf("carol call 16: %s %v", out, werr)
		}
		var data struct {
			Limit             int    `json:"limit"`
			WindowSeconds     int    `json:"window_seconds"`
			CurrentCount      int    `json:"current_count"`
			RetryAfterSeconds int    `json:"retry_after_seconds"`
			Suggestion        string `json:"suggestion"`
		}
		if err := json.Unmarshal(werr.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data.Limit != 10 || data.WindowSeconds != 60 || data.CurrentCount != 16 || data.RetryAfterSeconds < 1 || data.RetryAfterSeconds > 6 ||
			!strings.Contains(data.Suggestion, "[mcp.rate_limits.read_context]") {
			t.Errorf("429 data: %s", werr.Data)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"rate limit exceeded"`) || !strings.Contains(logs.String(), `"client":"token:carol"`) {
		t.Errorf("rate limit refusal not logged:\n%s", logs)
	}
	// The attempts on the other repo were logged with who made them.
	for _, want := range []string{
		`"tool":"read_doc","reason":"repo not readable by this client","client":"token:alpha","path":"vault/docs/vault.md","repo":"vault"`,
		`"tool":"read_doc","reason":"repo not readable by this client","client":"token:alpha","path":"docs/vault.md","repo":"vault"`,
		`"tool":"read_doc","reason":"path leaves the repository","client":"token:alpha"`,
		`"tool":"list_tasks","reason":"repo not readable by this client","client":"token:alpha","repo":"vault"`,
		`"tool":"get_scene","reason":"repo not readable by this client","client":"token:bravo","repo":"app"`,
		`"reason":"repo not readable by this client","client":"token:alpha/local","path":"vault/docs/vault.md"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log line with %s", want)
		}
	}
	// alpha's own budget is its own: carol's burst did not spend it.
	if _, werr := call(t, alpha, tools.ReadContext, map[string]any{"query": "quasar"}); werr != nil {
		t.Errorf("alpha after carol's burst: %v", werr)
	}
}
