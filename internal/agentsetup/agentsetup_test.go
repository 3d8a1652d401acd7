package agentsetup_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/agentsetup"
)

var stdio = agentsetup.Server{Command: "cue", Args: []string{"mcp"}}

const existing = `{
  "mcpServers": {
    "db": {"command": "psql-mcp", "args": ["--read-only"], "env": {"PGHOST": "a&b<c>"}}
  },
  "x-team": {"owner": "ops"}
}
`

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func TestMergeMCPJSONKeepsOthersAndIsIdempotent(t *testing.T) {
	out, action, err := agentsetup.MergeMCPJSON(".mcp.json", []byte(existing), stdio)
	if err != nil || action != "added" {
		t.Fatalf("first merge: %q, %v", action, err)
	}
	m := decode(t, out)
	servers := m["mcpServers"].(map[string]any)
	db := servers["db"].(map[string]any)
	if db["command"] != "psql-mcp" || db["env"].(map[string]any)["PGHOST"] != "a&b<c>" || m["x-team"].(map[string]any)["owner"] != "ops" {
		t.Fatalf("unrelated entries changed:\n%s", out)
	}
	if strings.Contains(string(out), `\u0026`) {
		t.Errorf("& escaped in the rewritten file:\n%s", out)
	}
	ours := servers["cuedeck"].(map[string]any)
	if ours["command"] != "cue" || ours["type"] != "stdio" || ours["args"].([]any)[0] != "mcp" {
		t.Fatalf("our entry: %v", ours)
	}
	if !strings.Contains(string(out), "\n  \"mcpServers\": {\n    \"cuedeck\": {") {
		t.Errorf("not indented by two spaces:\n%s", out)
	}
	again, action, err := agentsetup.MergeMCPJSON(".mcp.json", out, stdio)
	if err != nil || action != "unchanged" || string(again) != string(out) {
		t.Fatalf("second merge: %q, %v, changed: %v", action, err, string(again) != string(out))
	}
	// Another binary path is an update in place, not a second entry.
	moved, action, err := agentsetup.MergeMCPJSON(".mcp.json", out, agentsetup.Server{Command: "/opt/cue", Args: []string{"mcp"}})
	if err != nil || action != "updated" || strings.Count(string(moved), `"cuedeck"`) != 1 {
		t.Fatalf("update: %q, %v\n%s", action, err, moved)
	}
}

func TestMergeMCPJSONHTTPReferencesTheTokenVariable(t *testing.T) {
	out, _, err := agentsetup.MergeMCPJSON(".mcp.json", nil, agentsetup.Server{URL: "https://edge.example:8443/mcp", TokenEnv: "CUE_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	ours := decode(t, out)["mcpServers"].(map[string]any)["cuedeck"].(map[string]any)
	if ours["type"] != "http" || ours["url"] != "https://edge.example:8443/mcp" || ours["headers"].(map[string]any)["Authorization"] != "Bearer ${CUE_TOKEN}" {
		t.Fatalf("http entry: %v", ours)
	}
}

func TestMergeMCPJSONRefusesBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		old  string
		srv  agentsetup.Server
		want string
	}{
		"not JSON":        {`{"mcpServers": {`, stdio, "not valid JSON"},
		"servers a list":  {`{"mcpServers": []}`, stdio, `"mcpServers" is not an object`},
		"secret in URL":   {``, agentsetup.Server{URL: "https://u:secret@edge/mcp"}, "holds credentials"},
		"token as name":   {``, agentsetup.Server{URL: "https://edge/mcp", TokenEnv: "Bearer abc.def"}, "name of an environment variable"},
		"not http":        {``, agentsetup.Server{URL: "edge:4222"}, "http(s)://"},
		"token for stdio": {``, agentsetup.Server{Command: "cue", TokenEnv: "T"}, "--http only"},
	} {
		_, _, err := agentsetup.MergeMCPJSON(".mcp.json", []byte(tc.old), tc.srv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

func TestSnippets(t *testing.T) {
	team := agentsetup.Server{URL: "https://edge/mcp", TokenEnv: "CUE_TOKEN"}
	for name, tc := range map[string]struct {
		f    func(agentsetup.Server) (agentsetup.Snippet, error)
		srv  agentsetup.Server
		want []string
	}{
		"cursor stdio": {agentsetup.Cursor, stdio, []string{`"command": "cue"`, ".cursor/mcp.json"}},
		"cursor http":  {agentsetup.Cursor, team, []string{`"url": "https://edge/mcp"`, `"Bearer ${env:CUE_TOKEN}"`}},
		"codex stdio":  {agentsetup.Codex, stdio, []string{"[mcp_servers.cuedeck]\ncommand = \"cue\"\nargs = [\"mcp\"]\n", "~/.codex/config.toml"}},
		"codex http":   {agentsetup.Codex, team, []string{"url = \"https://edge/mcp\"\nbearer_token_env_var = \"CUE_TOKEN\"\n"}},
		"json http":    {agentsetup.GenericJSON, team, []string{`"type": "http"`, `"Bearer ${CUE_TOKEN}"`}},
	} {
		s, err := tc.f(tc.srv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(s.Where+"\n"+s.Text, w) {
				t.Errorf("%s lacks %q:\n# %s\n%s", name, w, s.Where, s.Text)
			}
		}
		if strings.HasSuffix(name, "http") && !strings.HasPrefix(name, "codex") {
			var v any
			if err := json.Unmarshal([]byte(s.Text), &v); err != nil {
				t.Errorf("%s: snippet is not JSON: %v", name, err)
			}
		}
	}
}

func TestDiffShowsOnlyChangedLines(t *testing.T) {
	old := "{\n  \"a\": 1,\n  \"b\": 2\n}\n"
	new := "{\n  \"a\": 1,\n  \"b\": 3\n}\n"
	d := agentsetup.Diff("x.json", []byte(old), []byte(new))
	if !strings.Contains(d, "--- a/x.json\n+++ b/x.json\n") || !strings.Contains(d, "-  \"b\": 2\n+  \"b\": 3\n") || strings.Count(d, "\n+") != 2 {
		t.Fatalf("diff:\n%s", d)
	}
	if agentsetup.Diff("x.json", []byte(old), []byte(old)) != "" {
		t.Fatal("diff of equal contents is not empty")
	}
	if d := agentsetup.Diff("y.json", nil, []byte("{}\n")); !strings.HasPrefix(d, "--- /dev/null\n+++ b/y.json\n+{}\n") {
		t.Fatalf("diff of a new file:\n%s", d)
	}
}
