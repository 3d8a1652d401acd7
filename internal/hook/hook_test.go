package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// samplesDir holds real Claude Code hook payloads (see its README).
func samplesDir(t testing.TB) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "samples", "claude-code")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no hook samples at %s: %v", dir, err)
	}
	return dir
}

// sample returns the first sample payload of event in run, with its cwd
// pointed at cwd.
func sample(t testing.TB, run, event, cwd string) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(samplesDir(t), run, event+".*.json"))
	if len(files) == 0 {
		t.Fatalf("no %s sample in %s", event, run)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return withCwd(t, b, cwd)
}

func withCwd(t testing.TB, b []byte, cwd string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["cwd"] = cwd
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadPayloadSamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(samplesDir(t), "*", "*.json"))
	if len(files) < 10 {
		t.Fatalf("found %d samples", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ReadPayload(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		event, _, _ := strings.Cut(filepath.Base(f), ".")
		if p.HookEventName != event || p.SessionID == "" || p.TranscriptPath == "" || p.Cwd != "/tmp/ccproj" {
			t.Errorf("%s: %+v", f, p)
		}
		switch event {
		case SubagentStop:
			if p.AgentTranscriptPath == "" || p.AgentID == "" {
				t.Errorf("%s: no agent transcript: %+v", f, p)
			}
		case SessionStart:
			if p.Source != "startup" {
				t.Errorf("%s: source %q", f, p.Source)
			}
		case UserPromptSubmit:
			if p.Prompt == "" {
				t.Errorf("%s: no prompt", f)
			}
			if p.SystemGenerated() != strings.Contains(string(b), "<task-notification>") {
				t.Errorf("%s: SystemGenerated=%v", f, p.SystemGenerated())
			}
		}
	}
}

func TestReadPayloadBounds(t *testing.T) {
	if p, err := ReadPayload(strings.NewReader(" \n")); err != nil || p != (Payload{}) {
		t.Errorf("empty stdin: %+v, %v", p, err)
	}
	if _, err := ReadPayload(strings.NewReader(`{"session_id":`)); err == nil || !strings.Contains(err.Error(), "not the JSON object") {
		t.Errorf("truncated JSON: %v", err)
	}
	big := `{"prompt":"` + strings.Repeat("x", MaxPayload) + `"}`
	if _, err := ReadPayload(strings.NewReader(big)); !errors.Is(err, ErrPayloadTooLarge) {
		t.Errorf("oversized payload: %v", err)
	}
}

// newWorkspace is an initialised workspace in a temporary directory.
func newWorkspace(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".cuedeck", ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs `cue hook <event>` in-process with stdin and returns stdout and
// stderr. The engine must not be needed: calling it fails the test.
func run(t *testing.T, event string, stdin []byte, env Env) (string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	env.Stdin, env.Stdout, env.Stderr = bytes.NewReader(stdin), &out, &errw
	if env.Engine == nil {
		env.Engine = func() (string, error) { t.Error("the engine was asked for"); return "", errors.New("no engine") }
	}
	if env.ConfigDir == "" {
		env.ConfigDir = t.TempDir()
	}
	if code := Main([]string{event}, env); code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errw.String())
	}
	return out.String(), errw.String()
}

func contextOf(t *testing.T, stdout string) (event, context string) {
	t.Helper()
	if stdout == "" {
		return "", ""
	}
	var o output
	if err := json.Unmarshal([]byte(stdout), &o); err != nil {
		t.Fatalf("stdout is not the hook JSON: %v\n%s", err, stdout)
	}
	return o.HookSpecificOutput.HookEventName, o.HookSpecificOutput.AdditionalContext
}

// listen stands in for the daemon's socket and returns what it receives.
func listen(t *testing.T, root string) <-chan Signal {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: SocketPath(root), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch := make(chan Signal, 16)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			var s Signal
			if json.Unmarshal(buf[:n], &s) == nil {
				ch <- s
			}
		}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan Signal) Signal {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no signal reached the socket")
		return Signal{}
	}
}

func TestSessionStartInjectsCache(t *testing.T) {
	root := newWorkspace(t)
	sigs := listen(t, root)
	if err := WriteCache(root, CacheFile{Timestamp: 1, ProjectHash: ProjectHash(root), Context: "## Rules\n- be kind"}); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "internal", "x")
	os.MkdirAll(sub, 0o755)
	out, _ := run(t, SessionStart, sample(t, "run1-read", SessionStart, sub), Env{})
	ev, ctx := contextOf(t, out)
	if ev != SessionStart || ctx != "## Rules\n- be kind" {
		t.Errorf("answer %q", out)
	}
	s := receive(t, sigs)
	if s.Event != SessionStart || s.Workspace != root || s.SessionID == "" || s.TranscriptPath == "" || s.Cwd != sub {
		t.Errorf("signal %+v", s)
	}
}

func TestCacheMissingOrCorrupt(t *testing.T) {
	root := newWorkspace(t)
	listen(t, root)
	payload := sample(t, "run1-read", SessionStart, root)
	if out, errOut := run(t, SessionStart, payload, Env{}); out != "" || errOut != "" {
		t.Errorf("no cache: stdout %q stderr %q", out, errOut)
	}
	os.WriteFile(CachePath(root), []byte(`{"context": "half`), 0o644)
	if out, _ := run(t, SessionStart, payload, Env{}); out != "" {
		t.Errorf("corrupt cache: stdout %q", out)
	}
	if _, err := ReadCache(root); !errors.Is(err, ErrNoCache) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("ReadCache of a corrupt file: %v", err)
	}
}

func TestUserPromptSubmitInjectsOnlyChanges(t *testing.T) {
	root := newWorkspace(t)
	sigs := listen(t, root)
	WriteCache(root, CacheFile{Context: "v1"})
	prompt := sample(t, "run1-read", UserPromptSubmit, root)
	notification := sample(t, "run2-subagent", UserPromptSubmit, root)
	if !strings.Contains(string(notification), "task-notification") {
		files, _ := filepath.Glob(filepath.Join(samplesDir(t), "run2-subagent", "UserPromptSubmit.*.json"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "task-notification") {
				notification = withCwd(t, b, root)
			}
		}
	}

	if _, ctx := contextOf(t, first(run(t, UserPromptSubmit, prompt, Env{}))); ctx != "v1" {
		t.Errorf("first prompt of a session: %q, want v1", ctx)
	}
	if out, _ := run(t, UserPromptSubmit, prompt, Env{}); out != "" {
		t.Errorf("unchanged context injected again: %q", out)
	}
	WriteCache(root, CacheFile{Context: "v2"})
	if out, _ := run(t, UserPromptSubmit, notification, Env{}); out != "" {
		t.Errorf("task notification got context: %q", out)
	}
	if _, ctx := contextOf(t, first(run(t, UserPromptSubmit, prompt, Env{}))); ctx != "v2" {
		t.Errorf("changed context: %q, want v2", ctx)
	}
	// Every prompt signals the daemon, notifications included.
	for range 4 {
		if s := receive(t, sigs); s.Event != UserPromptSubmit {
			t.Errorf("signal %+v", s)
		}
	}
	// Another session has received nothing yet.
	other := bytes.Replace(prompt, []byte("822efcc6"), []byte("99999999"), 1)
	if _, ctx := contextOf(t, first(run(t, UserPromptSubmit, other, Env{}))); ctx != "v2" {
		t.Errorf("other session: %q", ctx)
	}
}

func TestSessionStartMarksTheSession(t *testing.T) {
	root := newWorkspace(t)
	listen(t, root)
	WriteCache(root, CacheFile{Context: "v1"})
	run(t, SessionStart, sample(t, "run1-read", SessionStart, root), Env{})
	if out, _ := run(t, UserPromptSubmit, sample(t, "run1-read", UserPromptSubmit, root), Env{}); out != "" {
		t.Errorf("context given at SessionStart injected again on the first prompt: %q", out)
	}
}

func first(a, _ string) string { return a }

func TestStopEventsOnlySignal(t *testing.T) {
	root := newWorkspace(t)
	sigs := listen(t, root)
	WriteCache(root, CacheFile{Context: "v1"})
	for _, tc := range []struct{ run, event string }{{"run1-read", Stop}, {"run2-subagent", SubagentStop}} {
		out, _ := run(t, tc.event, sample(t, tc.run, tc.event, root), Env{})
		if out != "" {
			t.Errorf("%s answered %q", tc.event, out)
		}
		s := receive(t, sigs)
		if s.Event != tc.event {
			t.Errorf("signal %+v", s)
		}
		if tc.event == SubagentStop && !strings.Contains(s.AgentTranscriptPath, "/subagents/agent-") {
			t.Errorf("SubagentStop signal without the agent transcript: %+v", s)
		}
	}
	// PreCompact has no sample; its payload shares the common fields.
	run(t, PreCompact, []byte(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"`+root+`","hook_event_name":"PreCompact","trigger":"auto"}`), Env{})
	if s := receive(t, sigs); s.Event != PreCompact || s.TranscriptPath != "/t.jsonl" {
		t.Errorf("signal %+v", s)
	}
	// Events CueDeck does not use: silent, nothing sent.
	if out, errOut := run(t, "PreToolUse", sample(t, "run1-read", "PreToolUse", root), Env{}); out != "" || errOut != "" {
		t.Errorf("PreToolUse: %q %q", out, errOut)
	}
}

func TestBadPayloadNeverFailsTheAgent(t *testing.T) {
	out, errOut := run(t, SessionStart, []byte("{nope"), Env{})
	if out != "" || !strings.Contains(errOut, "cue hook SessionStart:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
}

func TestSend(t *testing.T) {
	root := newWorkspace(t)
	if err := Send(SocketPath(root), Signal{Event: Stop}); err == nil {
		t.Error("send without a listener succeeded")
	}
	sigs := listen(t, root)
	if err := Send(SocketPath(root), Signal{Event: Stop, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if s := receive(t, sigs); s.SessionID != "s1" {
		t.Errorf("received %+v", s)
	}
}

func TestSocketPathFitsSunPath(t *testing.T) {
	short := "/w"
	if got := SocketPath(short); got != "/w/.cuedeck/.cache/hook.sock" {
		t.Errorf("short root: %s", got)
	}
	long := "/" + strings.Repeat("deep/", 30)
	got := SocketPath(long)
	if len(got) > maxSocketPath || filepath.Dir(got) != filepath.Clean(os.TempDir()) {
		t.Errorf("long root: %s", got)
	}
	if got != SocketPath(long) || got == SocketPath(long+"x") {
		t.Error("socket paths of long roots are not stable and distinct")
	}
}

// fakeEngine is a real executable script standing in for cue-engine: it
// records its arguments, so the test sees what the hook started.
func fakeEngine(t *testing.T) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "args")
	path = filepath.Join(dir, "cue-engine")
	script := "#!/bin/sh\necho \"$@\" >> '" + record + "'\necho \"front=$CUE_FRONT\" >> '" + record + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, record
}

func waitFile(t *testing.T, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q; has %q", path, want, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSessionStartStartsADownDaemon(t *testing.T) {
	root := newWorkspace(t)
	WriteCache(root, CacheFile{Context: "stale but useful"})
	engine, record := fakeEngine(t)
	env := Env{Front: "/opt/cue", Engine: func() (string, error) { return engine, nil }}
	out, _ := run(t, SessionStart, sample(t, "run1-read", SessionStart, root), env)
	_, ctx := contextOf(t, out)
	if !strings.Contains(ctx, "starting in the background") || !strings.HasSuffix(ctx, "stale but useful") {
		t.Errorf("context %q", ctx)
	}
	got := waitFile(t, record, "front=")
	if !strings.Contains(got, "up --workspace "+root) || !strings.Contains(got, "front=/opt/cue") {
		t.Errorf("engine ran with %q", got)
	}
}

func TestSessionStartOutsideAWorkspace(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	payload := sample(t, "run1-read", SessionStart, dir)
	out, _ := run(t, SessionStart, payload, Env{})
	if _, ctx := contextOf(t, out); !strings.Contains(ctx, "cue init") || !strings.Contains(ctx, "cue hook install") {
		t.Errorf("context %q", ctx)
	}
	// Other events outside a workspace: nothing.
	if out, _ := run(t, UserPromptSubmit, sample(t, "run1-read", UserPromptSubmit, dir), Env{}); out != "" {
		t.Errorf("UserPromptSubmit outside a workspace: %q", out)
	}

	// With auto-init on, and enough files, cue init and up start.
	cfg := t.TempDir()
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[other]\nenabled = false\n\n[auto_init]  \nenabled = true # yes\nmin_files = 3\n"), 0o644)
	engine, record := fakeEngine(t)
	env := Env{ConfigDir: cfg, Front: "/opt/cue", Engine: func() (string, error) { return engine, nil }}
	out, _ = run(t, SessionStart, payload, env)
	if _, ctx := contextOf(t, out); ctx != "" {
		t.Errorf("auto-init in a directory of %d files: %q", 0, ctx)
	}
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	out, _ = run(t, SessionStart, payload, env)
	if _, ctx := contextOf(t, out); !strings.Contains(ctx, "initialising a workspace for "+dir) {
		t.Errorf("context %q", ctx)
	}
	got := waitFile(t, record, "up --workspace")
	if !strings.Contains(got, "init --workspace "+dir) || !strings.Contains(got, "up --workspace "+dir) {
		t.Errorf("engine ran with %q", got)
	}
}

func TestReadAutoInit(t *testing.T) {
	dir := t.TempDir()
	if ai, err := readAutoInit(dir); err != nil || ai.Enabled || ai.MinFiles != DefaultMinFiles {
		t.Errorf("no file: %+v %v", ai, err)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[auto_init]\nenabled = maybe\n"), 0o644)
	if _, err := readAutoInit(dir); err == nil || !strings.Contains(err.Error(), "config.toml:2") {
		t.Errorf("bad value: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("enabled = true\n[auto_init]\nmin_files = 0\n"), 0o644)
	if ai, err := readAutoInit(dir); err != nil || ai.Enabled || ai.MinFiles != 0 {
		t.Errorf("enabled outside the table: %+v %v", ai, err)
	}
}
