package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/hook"
)

// runHook runs the built `cue hook event` with payload and returns the
// additionalContext it answered ("" for none).
func runHook(t *testing.T, event string, payload []byte) string {
	t.Helper()
	cmd := exec.Command(bin("cue"), "hook", event)
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("cue hook %s: %v\n%s", event, err, stderr.String())
	}
	if len(out) == 0 {
		return ""
	}
	var o struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("cue hook %s answered %q: %v", event, out, err)
	}
	return o.HookSpecificOutput.AdditionalContext
}

func samplePayload(t *testing.T, prefix, cwd string, skip func(string) bool) []byte {
	t.Helper()
	for name, p := range samples(t) {
		if strings.HasPrefix(filepath.Base(name), prefix+".") && !skip(string(p)) {
			return withCwd(t, p, cwd)
		}
	}
	t.Fatalf("no %s sample", prefix)
	return nil
}

// TestHooksWithARealDaemon drives the hooks against `cue up`: the daemon
// caches the rules for SessionStart, a prompt after a rule changed gets
// the new context, and SessionStart with the daemon down starts one.
func TestHooksWithARealDaemon(t *testing.T) {
	root := t.TempDir()
	rules := filepath.Join(root, ".cuedeck", "rules.md")
	os.MkdirAll(filepath.Dir(rules), 0o755)
	os.WriteFile(rules, []byte("- Run go vet before committing\n"), 0o644)
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", root).Run() })
	up := exec.Command(bin("cue"), "up", "--workspace", root, "--log-level", "warn")
	logPath := filepath.Join(t.TempDir(), "up.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	up.Stdout, up.Stderr = logFile, logFile
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 60*time.Second, "the daemon's hook context", func() bool {
		c, err := hook.ReadCache(root)
		return err == nil && strings.Contains(c.Context, "Run go vet")
	})
	// The engine names the front in the commands it prints.
	bustest.Eventually(t, 60*time.Second, "cue up names the cue front", func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), bin("cue")+" mcp --workspace")
	})

	none := func(string) bool { return false }
	start := samplePayload(t, hook.SessionStart, root, none)
	if ctx := runHook(t, hook.SessionStart, start); !strings.Contains(ctx, "Run go vet") || strings.Contains(ctx, "starting") {
		t.Errorf("SessionStart with the daemon up: %q", ctx)
	}
	notification := func(p string) bool { return strings.Contains(p, "task-notification") }
	prompt := samplePayload(t, hook.UserPromptSubmit, root, notification)
	// Same session as the SessionStart? Either way, after one prompt the
	// session has the current context and the next one adds nothing.
	runHook(t, hook.UserPromptSubmit, prompt)
	if ctx := runHook(t, hook.UserPromptSubmit, prompt); ctx != "" {
		t.Errorf("unchanged context injected again: %q", ctx)
	}
	os.WriteFile(rules, []byte("- Prefer table tests\n"), 0o644)
	// Each prompt signals the daemon, which re-renders for the next one.
	bustest.Eventually(t, 30*time.Second, "a prompt gets the changed rules", func() bool {
		return strings.Contains(runHook(t, hook.UserPromptSubmit, prompt), "Prefer table tests")
	})

	if out, err := exec.Command(bin("cue"), "down", "--workspace", root).CombinedOutput(); err != nil {
		t.Fatalf("cue down: %v\n%s", err, out)
	}
	up.Wait()
	if ctx := runHook(t, hook.SessionStart, start); !strings.Contains(ctx, "starting in the background") || !strings.Contains(ctx, "Prefer table tests") {
		t.Errorf("SessionStart with the daemon down: %q", ctx)
	}
	bustest.Eventually(t, 60*time.Second, "the daemon started by SessionStart answers", func() bool {
		return hook.Send(hook.SocketPath(root), hook.Signal{Event: hook.Stop}) == nil
	})
}
