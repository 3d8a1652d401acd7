package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/hook"
)

// A project's Claude Code settings before CueDeck: another MCP server,
// another tool's hook, and keys CueDeck knows nothing about.
const (
	userMCP = `{
  "mcpServers": {
    "db": {"command": "psql-mcp", "args": ["--read-only"]}
  }
}
`
	userSettings = `{
  "permissions": {"allow": ["Bash(make test)"]},
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi >> /tmp/other-tool.log"}]}
    ],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash"}]}
    ]
  }
}
`
)

func setup(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin("cue"), append([]string{"setup", "claude", "--workspace", root}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("cue setup claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func readFiles(t *testing.T, root string) (mcp, settings []byte) {
	t.Helper()
	mcp, _ = os.ReadFile(filepath.Join(root, ".mcp.json"))
	settings, _ = os.ReadFile(filepath.Join(root, ".claude", "settings.json"))
	return mcp, settings
}

func TestSetupClaudeMergesOnceAndHooksAnswerSamples(t *testing.T) {
	root := workspaceWithCache(t, "## Rules\n- cached rule")
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(userMCP), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}

	// A dry run shows the diff and writes nothing.
	out := setup(t, root, "--dry-run")
	if m, s := readFiles(t, root); string(m) != userMCP || string(s) != userSettings {
		t.Fatal("--dry-run wrote a file")
	}
	for _, want := range []string{"--- a/.mcp.json", "+    \"cuedeck\": {", "--- a/.claude/settings.json", "hook UserPromptSubmit", "nothing was written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}

	out = setup(t, root)
	if !strings.Contains(out, "added     mcpServers.cuedeck") || !strings.Contains(out, "wrote "+filepath.Join(root, ".mcp.json")) {
		t.Errorf("first run output:\n%s", out)
	}
	mcp, settings := readFiles(t, root)
	var m struct {
		MCPServers map[string]struct {
			Type, Command string
			Args          []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(mcp, &m); err != nil {
		t.Fatalf(".mcp.json: %v\n%s", err, mcp)
	}
	if db := m.MCPServers["db"]; db.Command != "psql-mcp" || len(db.Args) != 1 {
		t.Errorf("the other server changed: %+v", db)
	}
	ours := m.MCPServers["cuedeck"]
	if ours.Type != "stdio" || (ours.Command != "cue" && ours.Command != bin("cue")) || strings.Join(ours.Args, " ") != "mcp" {
		t.Errorf("our server: %+v", ours)
	}
	var s struct {
		Permissions struct{ Allow []string }
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, settings)
	}
	if len(s.Permissions.Allow) != 1 || len(s.Hooks["PreToolUse"]) != 1 || s.Hooks["SessionStart"][0].Hooks[0].Command != "echo hi >> /tmp/other-tool.log" {
		t.Errorf("unrelated settings changed:\n%s", settings)
	}
	commands := map[string][]string{} // event → our commands
	for event, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, " hook ") {
					commands[event] = append(commands[event], h.Command)
				}
			}
		}
	}
	for _, event := range hook.InstalledEvents {
		if len(commands[event]) != 1 {
			t.Errorf("%s: our hook %d times, want once: %v", event, len(commands[event]), commands[event])
		}
	}

	// The second run changes nothing, byte for byte, and says so.
	out = setup(t, root)
	if m2, s2 := readFiles(t, root); !bytes.Equal(m2, mcp) || !bytes.Equal(s2, settings) {
		t.Fatalf("second run changed the files:\n%s", out)
	}
	if !strings.Contains(out, "nothing to do") || strings.Contains(out, "wrote") {
		t.Errorf("second run output:\n%s", out)
	}

	// Run the hooks as Claude Code does: the command through sh -c, the
	// payload on stdin. A starting daemon holds the lock, so SessionStart
	// says so rather than starting one.
	lock, err := os.Create(hook.LockPath(root))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := flock(lock); err != nil {
		t.Fatal(err)
	}
	all := samples(t)
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	ran := map[string]int{}
	for _, name := range names {
		event, _, _ := strings.Cut(filepath.Base(name), ".")
		for _, command := range commands[event] {
			payload := withCwd(t, all[name], root)
			if event == hook.UserPromptSubmit {
				payload = withSession(t, payload, "fresh-"+strings.ReplaceAll(strings.TrimSuffix(filepath.Base(name), ".json"), ".", "-"))
			}
			cmd := exec.Command("sh", "-c", command)
			cmd.Dir = root
			cmd.Stdin = bytes.NewReader(payload)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("%s: `%s`: %v\n%s", name, command, err, stderr.String())
				continue
			}
			ran[event]++
			if stderr.Len() > 0 {
				t.Errorf("%s: stderr %q", name, stderr.String())
			}
			taskNote := strings.Contains(string(all[name]), "<task-notification>")
			switch {
			case event == hook.SessionStart || event == hook.UserPromptSubmit && !taskNote:
				var o struct {
					HookSpecificOutput struct{ HookEventName, AdditionalContext string }
				}
				if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
					t.Fatalf("%s: output is not JSON: %v: %q", name, err, stdout.String())
				}
				if o.HookSpecificOutput.HookEventName != event || !strings.Contains(o.HookSpecificOutput.AdditionalContext, "cached rule") {
					t.Errorf("%s: %s", name, stdout.String())
				}
			default:
				if stdout.Len() > 0 {
					t.Errorf("%s: answered %q, want nothing", name, stdout.String())
				}
			}
		}
	}
	for _, event := range []string{hook.SessionStart, hook.UserPromptSubmit, hook.Stop, hook.SubagentStop} {
		if ran[event] == 0 {
			t.Errorf("no sample ran the %s hook", event)
		}
	}
}

func withSession(t *testing.T, payload []byte, session string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["session_id"] = session
	b, _ := json.Marshal(m)
	return b
}

func TestSetupClaudeRefusesInvalidJSONAndWritesNothing(t *testing.T) {
	root := t.TempDir()
	broken := "{\n  \"mcpServers\": {\n"
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin("cue"), "setup", "claude", "--workspace", root).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not valid JSON") || !strings.Contains(string(out), "not changed") {
		t.Fatalf("setup over broken settings: %v\n%s", err, out)
	}
	// Checked before anything was written: .mcp.json was not created.
	if m, s := readFiles(t, root); m != nil || string(s) != broken {
		t.Fatalf("refused setup wrote: .mcp.json %q, settings %q", m, s)
	}
}

func TestSetupPrintsSnippetsForOtherClients(t *testing.T) {
	for client, want := range map[string]string{
		"cursor": ".cursor/mcp.json",
		"codex":  "[mcp_servers.cuedeck]",
		"json":   `"mcpServers"`,
	} {
		dir := t.TempDir()
		cmd := exec.Command(bin("cue"), "setup", client, "--http", "https://edge.example/mcp")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "CUE_TOKEN") {
			t.Errorf("cue setup %s: %v\n%s", client, err, out)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("cue setup %s wrote files", client)
		}
	}
}
