package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// commands lists the command hooks of event in settings.
func commands(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if c, ok := h.(map[string]any)["command"].(string); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestInstallMergesAndIsIdempotent(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	existing := `{
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 3}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "/old/bin/cue hook SessionStart", "timeout": 5}]}]
  }
}`
	os.WriteFile(path, []byte(existing), 0o600)

	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: &out, Front: "/new/bin/cue"}
	if err := Install([]string{"--workspace", root}, env); err != nil {
		t.Fatal(err)
	}
	s := readSettings(t, path)
	if perms, _ := s["permissions"].(map[string]any); perms == nil {
		t.Error("permissions lost")
	}
	if got := commands(s, "PreToolUse"); len(got) != 1 || got[0] != "./check.sh" {
		t.Errorf("PreToolUse: %v", got)
	}
	if got := commands(s, Stop); len(got) != 2 || got[0] != "notify-send done" || got[1] != "/new/bin/cue hook Stop" {
		t.Errorf("Stop: %v", got)
	}
	if got := commands(s, SessionStart); len(got) != 1 || got[0] != "/new/bin/cue hook SessionStart" {
		t.Errorf("SessionStart (path updated in place): %v", got)
	}
	for _, e := range InstalledEvents {
		if got := commands(s, e); len(got) == 0 {
			t.Errorf("%s not installed", e)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if !strings.Contains(out.String(), "updated   SessionStart") || !strings.Contains(out.String(), "added     UserPromptSubmit") {
		t.Errorf("output:\n%s", out.String())
	}

	before, _ := os.ReadFile(path)
	out.Reset()
	if err := Install([]string{"--workspace", root}, env); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("second install changed the file or said so:\n%s", out.String())
	}
}

func TestInstallDryRunAndNewFile(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".claude", "settings.json")
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: &out, Front: "/path with space/cue"}
	if err := Install([]string{"--workspace", root, "--dry-run"}, env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("dry run wrote %s", path)
	}
	if !strings.Contains(out.String(), "would write") {
		t.Errorf("output:\n%s", out.String())
	}
	if err := Install([]string{"--workspace", root}, env); err != nil {
		t.Fatal(err)
	}
	s := readSettings(t, path)
	got := commands(s, PreCompact)
	if len(got) != 1 || got[0] != "'/path with space/cue' hook PreCompact" {
		t.Errorf("PreCompact: %v", got)
	}
	if !isOurs(got[0], PreCompact) {
		t.Error("a quoted path is not recognised as ours")
	}
	h := s["hooks"].(map[string]any)[Stop].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if h["type"] != "command" || h["timeout"] != float64(HookTimeout) {
		t.Errorf("entry %v", h)
	}
}

func TestInstallRefusesInvalidJSON(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":      `{"hooks": {`,
		"hooks kind":  `{"hooks": []}`,
		"groups kind": `{"hooks": {"Stop": {"hooks": []}}}`,
	} {
		root := t.TempDir()
		path := filepath.Join(root, ".claude", "settings.json")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(content), 0o644)
		var out bytes.Buffer
		err := Install([]string{"--workspace", root}, Env{Stdout: &out, Stderr: &out, Front: "/bin/cue"})
		if err == nil || !strings.Contains(err.Error(), "not changed") {
			t.Errorf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: file changed to %s", name, b)
		}
	}
}
