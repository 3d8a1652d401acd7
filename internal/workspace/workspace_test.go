package workspace

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInitIsIdempotentAndKeepsConfig(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/"), 0o644)
	w := &Workspace{Root: root}
	if _, err := w.Init(false); err != nil {
		t.Fatal(err)
	}
	cfg := w.Path(ConfigFile)
	os.WriteFile(cfg, []byte("[workspace]\nname = \"custom\"\n"), 0o644)
	res, err := w.Init(false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg); !strings.Contains(string(got), "custom") {
		t.Fatal("init without --force overwrote config.toml")
	}
	if !strings.Contains(strings.Join(res.Kept, ","), "--force") {
		t.Fatalf("kept list should say how to overwrite: %v", res.Kept)
	}
	gi, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
	if strings.Count(string(gi), ".cuedeck/.cache") != 1 || !strings.HasPrefix(string(gi), "node_modules/\n") {
		t.Fatalf(".gitignore: %q", gi)
	}
	if _, err := w.Init(true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg); strings.Contains(string(got), "custom") {
		t.Fatal("--force did not rewrite config.toml")
	}
	c, err := w.LoadConfig()
	if err != nil {
		t.Fatalf("the default config must load: %v", err)
	}
	if c.Ingest.Debounce.Duration.String() != "500ms" || !*c.NATS.SyncAlways || c.Embed.Model != "builtin" {
		t.Fatalf("defaults: %+v", c)
	}
}

// cue init ignores the cache and the rendered scene, adds only what is
// missing, and leaves the permissions of every file it rewrites as they
// were (a .gitignore used to come back 0600).
func TestInitIgnoresSceneAndKeepsModes(t *testing.T) {
	root := t.TempDir()
	w := &Workspace{Root: root}
	gitignore := filepath.Join(root, ".gitignore")
	if err := os.WriteFile(gitignore, []byte("/.cuedeck/.cache/\nbuild/\n"), 0o664); err != nil {
		t.Fatal(err)
	}
	os.Chmod(gitignore, 0o664) // whatever the umask
	res, err := w.Init(false)
	if err != nil {
		t.Fatal(err)
	}
	gi, _ := os.ReadFile(gitignore)
	if string(gi) != "/.cuedeck/.cache/\nbuild/\n# CueDeck: the cache (rebuildable) and the rendered scene\n/.cuedeck/SCENE.md\n" || res.Gitignore != "added /.cuedeck/SCENE.md" {
		t.Fatalf(".gitignore %q, reported %q", gi, res.Gitignore)
	}
	if st, err := os.Stat(gitignore); err != nil || st.Mode().Perm() != 0o664 {
		t.Fatalf(".gitignore mode after init: %v %v", st.Mode(), err)
	}
	if res, err := w.Init(false); err != nil || !strings.HasPrefix(res.Gitignore, "already ignores /.cuedeck/.cache/, /.cuedeck/SCENE.md") {
		t.Fatalf("second init: %q %v", res.Gitignore, err)
	}

	// --force rewrites the config and keeps the mode it was given; a new
	// config is private, a new .gitignore is not.
	cfg := w.Path(ConfigFile)
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Fatalf("new config.toml mode %v", st.Mode())
	}
	if err := os.Chmod(cfg, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Init(true); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o640 {
		t.Fatalf("config.toml mode after --force: %v", st.Mode())
	}
	fresh := &Workspace{Root: t.TempDir()}
	if _, err := fresh.Init(false); err != nil {
		t.Fatal(err)
	}
	gi, _ = os.ReadFile(fresh.Path(".gitignore"))
	if st, _ := os.Stat(fresh.Path(".gitignore")); st.Mode().Perm() != 0o644 || !strings.Contains(string(gi), "/.cuedeck/.cache/\n/.cuedeck/SCENE.md\n") {
		t.Fatalf("new .gitignore %v: %q", st.Mode(), gi)
	}
}

func TestConfigErrorsNameTheProblem(t *testing.T) {
	for body, want := range map[string]string{
		"[ingest]\ndebounce = \"soon\"\n":                                    "duration",
		"[ingest\n":                                                          "line",
		"[workspace]\nnmae = \"x\"\n":                                        "unknown key",
		"[workspace]\nname = \"has space\"\n":                                "invalid repo name",
		"[[repos]]\nname = \"x\"\npath = \"nope\"\n":                         "not a directory",
		"[embed]\nmodel = \"openai\"\n":                                      "[embed] model",
		"[extract]\nllm = \"gpt\"\n":                                         "[extract] llm",
		"[extract]\ndaily_budget_usd = -1\n":                                 "daily_budget_usd",
		"[[transcripts.chat]]\nglob = \"x/*.jsonl\"\nrepo = \"elsewhere\"\n": "not a repo of this workspace",
		"[[transcripts.chat]]\nrepo = \"\"\n":                                "glob is empty",
		"[nats]\nteam_query_prefix = \"cue.*\"\n":                            "team_query_prefix",
		"[nats]\nteam_query_prefix = \"cue..query\"\n":                       "team_query_prefix",
		"[nats]\nqueue_max_bytes = 1000\n":                                   "queue_max_bytes",
	} {
		root := t.TempDir()
		w := &Workspace{Root: root}
		os.MkdirAll(w.Path(MetaDir), 0o755)
		os.WriteFile(w.Path(ConfigFile), []byte(body), 0o644)
		_, err := w.LoadConfig()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %q: error %v, want mention of %q", body, err, want)
		}
	}
}

func TestExtractConfigDefaultsAndParsing(t *testing.T) {
	root := t.TempDir()
	w := &Workspace{Root: root}
	os.MkdirAll(w.Path(MetaDir), 0o755)
	os.WriteFile(w.Path(ConfigFile), []byte("[embed]\nollama_host = \"http://gpu:11434\"\n[extract]\nllm = \"ollama:qwen2.5:7b-instruct\"\n[[transcripts.chat]]\nglob = \"logs/*.jsonl\"\n"), 0o644)
	c, err := w.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	prov, model, err := ParseLLM(c.Extract.LLM)
	if err != nil || prov != "ollama" || model != "qwen2.5:7b-instruct" {
		t.Fatalf("ParseLLM(%q) = %q %q %v", c.Extract.LLM, prov, model, err)
	}
	if c.Extract.OllamaHost != "http://gpu:11434" {
		t.Errorf("extract ollama_host %q, want the embed host as default", c.Extract.OllamaHost)
	}
	if c.Extract.CallTimeout.Duration <= 0 {
		t.Errorf("call timeout %v", c.Extract.CallTimeout)
	}
	if got := c.Transcripts.Chat[0].Glob; got != filepath.Join(root, "logs/*.jsonl") {
		t.Errorf("chat glob %q, want it relative to the workspace root", got)
	}
	if len(c.Transcripts.ClaudeDirs) == 0 {
		t.Error("no default Claude Code directory")
	}
	// The commented default written by cue init parses to the same choices.
	os.WriteFile(w.Path(ConfigFile), []byte(DefaultConfigTOML("app")), 0o644)
	if c, err = w.LoadConfig(); err != nil || c.Extract.LLM != "none" || c.Transcripts.Disabled || c.NATS.TeamQueryPrefix != "cue.query" {
		t.Fatalf("default config: %+v %v", c, err)
	}
}

func TestEmbedConfig(t *testing.T) {
	for body, want := range map[string]string{
		"":                            "builtin",
		"[embed]\nmodel = \"none\"\n": "none",
		"[embed]\nmodel = \"ollama:all-minilm\"\nollama_host = \"gpu:11434\"\n": "ollama:all-minilm",
	} {
		root := t.TempDir()
		w := &Workspace{Root: root}
		os.MkdirAll(w.Path(MetaDir), 0o755)
		os.WriteFile(w.Path(ConfigFile), []byte(body), 0o644)
		c, err := w.LoadConfig()
		if err != nil {
			t.Errorf("config %q: %v", body, err)
		} else if c.Embed.Model != want {
			t.Errorf("config %q: model %q, want %q", body, c.Embed.Model, want)
		}
	}
	// files: the model's default unless set, either way.
	for body, want := range map[string][2]bool{
		"":                             {false, true},
		DefaultConfigTOML("app"):       {false, true},
		"[embed]\nfiles = \"all\"\n":   {false, false},
		"[embed]\nfiles = \"prose\"\n": {true, true},
	} {
		w := &Workspace{Root: t.TempDir()}
		os.MkdirAll(w.Path(MetaDir), 0o755)
		os.WriteFile(w.Path(ConfigFile), []byte(body), 0o644)
		c, err := w.LoadConfig()
		if err != nil {
			t.Fatalf("config %q: %v", body, err)
		}
		if got := [2]bool{c.Embed.ProseOnly(false), c.Embed.ProseOnly(true)}; got != want {
			t.Errorf("config %q: prose only %v for a model that does not / does by default, want %v", body, got, want)
		}
	}
	w := &Workspace{Root: t.TempDir()}
	os.MkdirAll(w.Path(MetaDir), 0o755)
	os.WriteFile(w.Path(ConfigFile), []byte("[embed]\nfiles = \"code\"\n"), 0o644)
	if _, err := w.LoadConfig(); err == nil || !strings.Contains(err.Error(), `use "prose"`) {
		t.Errorf("files = \"code\": %v; want an error naming the choices", err)
	}
}

func TestLockHeldByLiveProcess(t *testing.T) {
	w := &Workspace{Root: t.TempDir()}
	l, err := w.AcquireLock()
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, so a second open in this process
	// conflicts just as another process would.
	_, err = w.AcquireLock()
	var le *LockError
	if !errors.As(err, &le) || le.HolderPID != os.Getpid() || le.LockFile != ".cuedeck/.cache/lock" {
		t.Fatalf("second acquire: %v", err)
	}
	if w.LockHolder() != os.Getpid() {
		t.Fatal("LockHolder does not name the holder")
	}
	l.Release()
	if w.LockHolder() != 0 {
		t.Fatal("released lock still reported as held")
	}
	l2, err := w.AcquireLock()
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	l2.Release()
}

// TestMain lets the test binary act as another process holding the lock.
func TestMain(m *testing.M) {
	if root := os.Getenv("CUE_TEST_HOLD_LOCK"); root != "" {
		w := &Workspace{Root: root}
		if _, err := w.AcquireLock(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	os.Exit(m.Run())
}

func TestStaleLockFromDeadProcessIsTakenOver(t *testing.T) {
	w := &Workspace{Root: t.TempDir()}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CUE_TEST_HOLD_LOCK="+w.Root)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper did not take the lock: %q %v", buf, err)
	}
	_, err := w.AcquireLock()
	var le *LockError
	if !errors.As(err, &le) || le.HolderPID != cmd.Process.Pid {
		t.Fatalf("lock held by a live process: got %v, want 1007 naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := w.AcquireLock()
	if err != nil {
		t.Fatalf("lock of a dead process must be taken over: %v", err)
	}
	l.Release()
}

// MarkRunning counts the daemons in a row that stopped without
// ClearRunning; a clean stop starts the count again, and a mark whose
// count cannot be read is one unclean stop.
func TestMarkRunningCountsUncleanStopsInARow(t *testing.T) {
	w := &Workspace{Root: t.TempDir()}
	var got []int
	mark := func() {
		t.Helper()
		n, err := w.MarkRunning()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	mark() // first start
	mark() // killed
	mark() // killed again
	w.ClearRunning()
	mark() // after a clean stop
	if err := os.WriteFile(w.RunningPath(), []byte("garbled\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark()
	if want := []int{0, 1, 2, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("unclean stops counted %v, want %v", got, want)
	}
}
