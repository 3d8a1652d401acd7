package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// `cue search` ranks through the running daemon and prints each hit as
// path:line, its section's heading and the section's lines holding the
// query's words; --json prints read_context's hits; a query nothing
// matches exits 1 saying so; without a daemon it starts one.
func TestSearchCommand(t *testing.T) {
	root := t.TempDir()
	cue(t, "init", "--workspace", root)
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/deploy.md", "# Deploying\n\nIntro text.\n\n## Rollback\n\nSomething unrelated first.\nTo roll back a release, run the rollback job with the previous tag.\n")
	write("docs/other.md", "# Other\n\nNothing about that here.\n")
	write("internal/queue/retry.go", "package queue\n\n// Backoff waits before the next attempt.\nfunc Backoff(attempt int) int {\n\treturn attempt * 2\n}\n")

	d := startUp(t, root)
	defer d.kill()
	var hits []tools.ContextHit
	bustest.Eventually(t, 60*time.Second, "the rollback section searchable", func() bool {
		out, err := exec.Command(bin("cue"), "search", "rollback", "--json", "--workspace", root).Output()
		return err == nil && json.Unmarshal(out, &hits) == nil && len(hits) > 0 && hits[0].Path == "docs/deploy.md"
	})
	stdout, err := exec.Command(bin("cue"), "search", "rollback", "release", "--limit", "1", "--workspace", root).Output()
	if err != nil {
		t.Fatal(err)
	}
	out := string(stdout)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "docs/deploy.md:8") || !strings.Contains(lines[0], "Rollback") {
		t.Fatalf("cue search rollback release:\n%s\nwant docs/deploy.md:8 under Rollback first", out)
	}
	if !strings.Contains(out, "To roll back a release") || strings.Contains(out, "Something unrelated") {
		t.Errorf("the snippet is not the section's line with the query's words:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour written to a pipe:\n%q", out)
	}
	bustest.Eventually(t, 30*time.Second, "the Go file searchable", func() bool {
		out, err := exec.Command(bin("cue"), "search", "Backoff", "--workspace", root).Output()
		return err == nil && strings.HasPrefix(string(out), "internal/queue/retry.go:")
	})

	// cue status compares the files with what cue_docs holds.
	bustest.Eventually(t, 30*time.Second, "cue status comparing the files with cue_docs", func() bool {
		out, err := exec.Command(bin("cue"), "status", "--rate-window", "0", "--workspace", root).Output()
		return err == nil && strings.Contains(string(out), "indexed documents of repo") && strings.Contains(string(out), "match their files")
	})

	cmd := exec.Command(bin("cue"), "search", "zzqqxxnothing", "--workspace", root)
	msg, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(msg), "no match") {
		t.Errorf("cue search with nothing matching: %v\n%s", err, msg)
	}
	if msg, err := exec.Command(bin("cue"), "search", "--workspace", root).CombinedOutput(); err == nil || !strings.Contains(string(msg), "usage") {
		t.Errorf("cue search without a query: %v\n%s", err, msg)
	}

	// No daemon: one is started in the background, and stopped here.
	idle := t.TempDir()
	cue(t, "init", "--workspace", idle)
	write2 := filepath.Join(idle, "docs", "a.md")
	if err := os.MkdirAll(filepath.Dir(write2), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(write2, []byte("# Alpha\n\nthe quokka lives here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", idle).Run() })
	msg, _ = exec.Command(bin("cue"), "search", "quokka", "--workspace", idle).CombinedOutput()
	if !strings.Contains(string(msg), "starting one in the background") {
		t.Errorf("cue search without a daemon does not say it starts one:\n%s", msg)
	}
	bustest.Eventually(t, 60*time.Second, "the started daemon answering", func() bool {
		out, err := exec.Command(bin("cue"), "search", "quokka", "--workspace", idle).Output()
		return err == nil && strings.HasPrefix(string(out), "docs/a.md:")
	})
}
