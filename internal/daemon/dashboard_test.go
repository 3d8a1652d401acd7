package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/dashboard"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// dashGet fetches a dashboard path of the daemon with a bearer secret.
func dashGet(t *testing.T, base, path, secret string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The daemon serves the dashboard beside /mcp with /mcp's tokens: tasks
// created over MCP show on the board of a token that may read their repo,
// with their dependency, and not on another's; the budget shows the
// configured daily limit.
func TestDashboardBesideMCP(t *testing.T) {
	root, vault := t.TempDir(), t.TempDir()
	n := startNode(t, root, func(c *workspace.Config) {
		c.Embed.Model = "none"
		c.Workspace.Name = "app"
		c.Repos = []workspace.RepoConfig{{Name: "vault", Path: vault}}
		c.Extract.DailyBudgetUSD = 2.5
		c.MCP.Tokens = []access.TokenConfig{
			{Name: "alpha", Token: alphaSecret, Repos: []string{"app"}},
			{Name: "ops", Token: opsSecret, Repos: []string{"*"}},
		}
	})
	base := strings.TrimSuffix(n.info.MCPURL, telemetry.PathMCP)
	ops := mcpSession(t, n.info.MCPURL, opsSecret)
	create := func(args map[string]any) string {
		out, werr := call(t, ops, tools.CreateTask, args)
		if werr != nil {
			t.Fatalf("create_task %v: %v", args, werr)
		}
		var res tools.CreateTaskResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	first := create(map[string]any{"title": "Lay the keel", "repo": "app"})
	second := create(map[string]any{"title": "Raise the mast", "repo": "app", "depends_on": []string{first}})
	hidden := create(map[string]any{"title": "Change the vault lock", "repo": "vault"})

	if code, body := dashGet(t, base, dashboard.Path, ""); code != http.StatusOK || !strings.Contains(body, `id="app"`) {
		t.Fatalf("page: %d %.200s", code, body)
	}
	if code, _ := dashGet(t, base, dashboard.PathAPI+"board", ""); code != http.StatusUnauthorized {
		t.Fatalf("board without a token: %d", code)
	}
	var b dashboard.Board
	code, body := dashGet(t, base, dashboard.PathAPI+"board", alphaSecret)
	if code != http.StatusOK {
		t.Fatalf("board: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	ids := map[string]dashboard.BoardTask{}
	for _, tk := range b.Tasks {
		ids[tk.ID] = tk
	}
	if ids[first].Title != "Lay the keel" || ids[second].Layer != 1 || len(ids[second].DependsOn) != 1 || ids[second].DependsOn[0] != first {
		t.Errorf("board of alpha: %s", body)
	}
	if _, ok := ids[hidden]; ok || strings.Contains(body, "vault lock") {
		t.Errorf("alpha sees the vault's task: %s", body)
	}
	code, body = dashGet(t, base, dashboard.PathAPI+"ops", alphaSecret)
	var o dashboard.Ops
	if err := json.Unmarshal([]byte(body), &o); code != http.StatusOK || err != nil {
		t.Fatalf("ops: %d %s", code, body)
	}
	if o.Budget == nil || o.Budget.LimitUSD == nil || *o.Budget.LimitUSD != 2.5 {
		t.Errorf("budget: %+v", o.Budget)
	}
	if o.Materialisation == nil || !o.Materialisation.Ready {
		t.Errorf("materialisation: %+v", o.Materialisation)
	}
}
