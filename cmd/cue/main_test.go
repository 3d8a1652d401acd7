package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// binDir holds cue and cue-engine side by side, built once for the tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cue-front-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/cue", "./cmd/cue-engine")
	build.Dir = repoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building binaries: %v\n%s", err, out)
		os.Exit(1)
	}
	binDir = dir
	// Daemons started here tail Claude Code transcripts under $HOME, and
	// hooks read the user's auto-init config there: a home of their own.
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("XDG_CONFIG_HOME")
	code := m.Run()
	os.RemoveAll(home)
	os.RemoveAll(dir)
	os.Exit(code)
}

func repoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..")
}

func bin(name string) string { return filepath.Join(binDir, name) }

// samples are Claude Code's real hook payloads, by file name.
func samples(t testing.TB) map[string][]byte {
	t.Helper()
	dir := filepath.Join(repoRoot(), "..", "shared", "samples", "claude-code")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		t.Skipf("no hook samples under %s", dir)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] = b
	}
	return out
}

func withCwd(t testing.TB, payload []byte, cwd string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["cwd"] = cwd
	b, _ := json.Marshal(m)
	return b
}

func workspaceWithCache(t testing.TB, context string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(hook.CacheDir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := hook.WriteCache(root, hook.CacheFile{Context: context}); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestHookBinaryAnswersEverySample(t *testing.T) {
	root := workspaceWithCache(t, "## Rules\n- cached rule")
	// A lock held as a starting daemon holds it: SessionStart must not
	// start another one, and says so.
	lock, err := os.Create(hook.LockPath(root))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := flock(lock); err != nil {
		t.Fatal(err)
	}
	for name, payload := range samples(t) {
		event, _, _ := strings.Cut(filepath.Base(name), ".")
		cmd := exec.Command(bin("cue"), "hook", event)
		cmd.Stdin = bytes.NewReader(withCwd(t, payload, root))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, stderr.String())
			continue
		}
		if stderr.Len() > 0 {
			t.Errorf("%s: stderr %q", name, stderr.String())
		}
		switch event {
		case hook.SessionStart:
			var o struct {
				HookSpecificOutput struct{ HookEventName, AdditionalContext string }
			}
			if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
				t.Fatalf("%s: %v: %q", name, err, stdout.String())
			}
			ctx := o.HookSpecificOutput.AdditionalContext
			if o.HookSpecificOutput.HookEventName != event || !strings.Contains(ctx, "cached rule") || !strings.Contains(ctx, "is starting") {
				t.Errorf("%s: %s", name, stdout.String())
			}
		case hook.UserPromptSubmit:
			// SessionStart of each session ran first or not, by map
			// order; either way a task notification gets nothing.
			if strings.Contains(string(payload), "<task-notification>") && stdout.Len() > 0 {
				t.Errorf("%s: a task notification got %s", name, stdout.String())
			}
		default:
			if stdout.Len() > 0 {
				t.Errorf("%s: answered %q", name, stdout.String())
			}
		}
	}
}

func TestVersionAndEngineExec(t *testing.T) {
	out, err := exec.Command(bin("cue"), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "cue ") {
		t.Errorf("version: %q %v", out, err)
	}
	// help runs in the engine, reached through exec, and lists hook.
	out, err = exec.Command(bin("cue"), "help").Output()
	if err != nil || !strings.Contains(string(out), "cue hook install") || !strings.Contains(string(out), "cue up") {
		t.Errorf("help: %q %v", out, err)
	}
	// The engine's exit code and stderr come through unchanged.
	cmd := exec.Command(bin("cue"), "frobnicate")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %q %v", out, err)
	}
}

func TestMissingEngineSaysHowToBuildIt(t *testing.T) {
	dir := t.TempDir()
	front := filepath.Join(dir, "cue")
	b, err := os.ReadFile(bin("cue"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(front, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(front, "status")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cue-engine not found") || !strings.Contains(string(out), "make build") {
		t.Errorf("%q %v", out, err)
	}
	// Hooks still answer without the engine.
	cmd = exec.Command(front, "hook", "Stop")
	cmd.Stdin = strings.NewReader(`{"cwd":"` + dir + `"}`)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("hook without engine: %q %v", out, err)
	}
}

// BenchmarkHookUserPromptSubmit runs the real `cue hook UserPromptSubmit`
// binary, whole process, with a real payload on stdin: with a real `cue
// up` daemon listening on the workspace's socket, and with none. Hooks
// block Claude Code, so p99 must stay under 5 ms.
func BenchmarkHookUserPromptSubmit(b *testing.B) {
	var payload []byte
	for name, p := range samples(b) {
		if strings.HasPrefix(filepath.Base(name), hook.UserPromptSubmit) && !strings.Contains(string(p), "task-notification") {
			payload = p
		}
	}
	b.Run("daemon-up", func(b *testing.B) {
		root := b.TempDir()
		os.MkdirAll(filepath.Join(root, ".cuedeck"), 0o755)
		os.WriteFile(filepath.Join(root, ".cuedeck", "rules.md"), []byte("- Run go vet before committing\n"), 0o644)
		up := exec.Command(bin("cue"), "up", "--workspace", root, "--log-level", "warn")
		logPath := filepath.Join(b.TempDir(), "up.log")
		logFile, err := os.Create(logPath)
		if err != nil {
			b.Fatal(err)
		}
		defer logFile.Close()
		up.Stdout, up.Stderr = logFile, logFile
		if err := up.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			up.Process.Signal(os.Interrupt)
			up.Wait()
		}()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if c, err := hook.ReadCache(root); err == nil && c.Context != "" {
				if _, err := os.Stat(hook.SocketPath(root)); err == nil {
					break
				}
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(logPath)
				b.Fatalf("daemon wrote no hook context within 60s\n%s", log)
			}
			time.Sleep(20 * time.Millisecond)
		}
		benchHook(b, withCwd(b, payload, root))
	})
	b.Run("daemon-down", func(b *testing.B) {
		root := workspaceWithCache(b, "## Rules\n- Run go vet before committing")
		benchHook(b, withCwd(b, payload, root))
	})
}

func benchHook(b *testing.B, payload []byte) {
	var lat stats.LatencySummary
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(bin("cue"), "hook", hook.UserPromptSubmit)
		cmd.Stdin = bytes.NewReader(payload)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		lat.RecordDuration(time.Since(start))
	}
	s := lat.Summary()
	b.ReportMetric(s.P50*1e6, "p50-ns")
	b.ReportMetric(s.P99*1e6, "p99-ns")
}
