package hookserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/transcripts"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const within10s = 10 * time.Second

// decisions is a fixed DecisionSource: the edge's ranking has its own
// tests; here only what reaches the cache matters.
type decisions []events.MemoryRecord

func (d decisions) RecentDecisions(repo string, files []string, now time.Time, limit int) []events.MemoryRecord {
	return d[:min(limit, len(d))]
}

func record(agent, session, content string, at time.Time) events.MemoryRecord {
	var r events.MemoryRecord
	r.Agent, r.Session, r.Content, r.UpdatedAt = agent, session, content, at
	return r
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, ".cuedeck/rules.md", "# Rules\n- Run go vet before committing\n- The staging password=Zx9vQ2mL7pR4tY8w is never logged\n")
	write(t, root, ".cuedeck/cards/login.md", "---\nid: login\ntitle: Fix login\nstatus: active\ndepends_on: [auth]\n---\nBody\n")
	write(t, root, ".cuedeck/cards/other.md", "---\nid: other\ntitle: Later\nstatus: todo\n---\n")
	return root
}

func serve(t *testing.T, s *Server) {
	t.Helper()
	conn, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, conn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

func cached(t *testing.T, root string) hook.CacheFile {
	t.Helper()
	c, err := hook.ReadCache(root)
	if err != nil {
		return hook.CacheFile{}
	}
	return c
}

func TestCacheFromRulesCardAndDecisions(t *testing.T) {
	root := newRoot(t)
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	ds := decisions{record("agent-abc", "", "Use a singleton for the DB pool", now.Add(-2*time.Hour))}
	var rev atomic.Uint64
	s := New(Options{
		Root: root, Files: os.DirFS(root), Decisions: ds, Revision: rev.Load,
		Debounce: 10 * time.Millisecond, Now: func() time.Time { return now },
	})
	serve(t, s)
	bustest.Eventually(t, within10s, "cache written at start", func() bool { return cached(t, root).Context != "" })
	c := cached(t, root)
	for _, want := range []string{
		"# Project context (CueDeck)", "## Rules", "- Run go vet before committing",
		"## Active Task", "- login: Fix login (.cuedeck/cards/login.md)", "depends on: auth",
		"## Recent Decisions", "- agent-abc: Use a singleton for the DB pool (2 hours ago)",
	} {
		if !strings.Contains(c.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, c.Context)
		}
	}
	if strings.Contains(c.Context, "Zx9vQ2mL7pR4tY8w") || !strings.Contains(c.Context, "[REDACTED") {
		t.Errorf("secret not redacted:\n%s", c.Context)
	}
	if c.ExperienceCount != 1 || c.ProjectHash != hook.ProjectHash(root) || c.Timestamp != now.Unix() ||
		strings.Join(c.NodesIncluded, ",") != ".cuedeck/rules.md,.cuedeck/cards/login.md" {
		t.Errorf("cache %+v", c)
	}

	// A changed revision rewrites the cache.
	write(t, root, ".cuedeck/cards/login.md", "---\nid: login\ntitle: Fix login for good\nstatus: active\n---\n")
	rev.Add(1)
	bustest.Eventually(t, within10s, "cache refreshed on a new revision", func() bool {
		return strings.Contains(cached(t, root).Context, "Fix login for good")
	})

	// So does a UserPromptSubmit signal, revision unchanged.
	write(t, root, ".cuedeck/rules.md", "- Only this rule now\n")
	if err := hook.Send(hook.SocketPath(root), hook.Signal{Event: hook.UserPromptSubmit, Workspace: root}); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within10s, "cache refreshed on a prompt", func() bool {
		return strings.Contains(cached(t, root).Context, "Only this rule now")
	})

	// Garbage is counted, and the server keeps serving.
	sendRaw(t, hook.SocketPath(root), []byte("not json"))
	sendRaw(t, hook.SocketPath(root), []byte(`{"session_id":"no event"}`))
	bustest.Eventually(t, within10s, "malformed datagrams counted", func() bool { return s.Malformed() == 2 })
	before := s.Refreshes()
	hook.Send(hook.SocketPath(root), hook.Signal{Event: hook.SessionStart, Workspace: root})
	bustest.Eventually(t, within10s, "still serving", func() bool { return s.Refreshes() > before })
}

func sendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Sendto(fd, b, 0, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
}

func TestContextStaysUnderTheTokenLimit(t *testing.T) {
	root := newRoot(t)
	now := time.Now()
	var ds decisions
	for i := range 10 {
		ds = append(ds, record("", fmt.Sprintf("session-%d", i), strings.Repeat(fmt.Sprintf("decision %d is long ", i), 20), now))
	}
	s := New(Options{Root: root, Files: os.DirFS(root), Decisions: ds, TokenLimit: 200})
	c := s.Render()
	if n := tokens.Count(c.Context); n > 200 {
		t.Errorf("%d tokens over a limit of 200", n)
	}
	if c.ExperienceCount == 0 || c.ExperienceCount == len(ds) {
		t.Errorf("%d of %d decisions kept; want some, not all", c.ExperienceCount, len(ds))
	}
	if !strings.Contains(c.Context, "## Rules") {
		t.Errorf("rules dropped first:\n%s", c.Context)
	}
	// Nothing to say: no context, so the hook injects nothing.
	empty := New(Options{Root: t.TempDir(), Files: os.DirFS(t.TempDir())})
	if c := empty.Render(); c.Context != "" {
		t.Errorf("empty workspace context %q", c.Context)
	}
}

// TestStopFlushesTheTranscript runs the listener with a real Tailer on an
// embedded NATS server: a Stop hook's signal publishes the transcript's
// lines at once, without waiting for the tailer's timer.
func TestStopFlushesTheTranscript(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	root := newRoot(t)
	claude := t.TempDir()
	tl, err := transcripts.New(conn, transcripts.Config{
		Repos: []transcripts.RepoRoot{{Name: "app", Root: root}}, ClaudeDirs: []string{claude},
		StateDir: t.TempDir(), FlushInterval: time.Hour, PollInterval: time.Hour,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tdone := make(chan error, 1)
	go func() { tdone <- tl.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-tdone })

	s := New(Options{Root: root, Flusher: tl})
	serve(t, s)
	path := filepath.Join(claude, "proj", "s1.jsonl")
	sub := filepath.Join(claude, "proj", "s1", "subagents", "agent-x.jsonl")
	line := func(session, text string) string {
		b, _ := json.Marshal(map[string]any{
			"type": "user", "uuid": "u-" + text, "sessionId": session, "cwd": root, "isSidechain": false,
			"timestamp": "2026-03-02T10:00:00Z", "message": map[string]any{"role": "user", "content": text},
		})
		return string(b) + "\n"
	}
	write(t, filepath.Dir(path), filepath.Base(path), line("s1", "hello")+line("s1", "again"))
	write(t, filepath.Dir(sub), filepath.Base(sub), line("s1", "sub"))

	// The tailer may not have started yet: the signal is repeated until a
	// flush lands, as Claude Code's next Stop would.
	bustest.Eventually(t, within10s, "Stop flushed the session transcript", func() bool {
		hook.Send(hook.SocketPath(root), hook.Signal{Event: hook.Stop, Workspace: root, TranscriptPath: path})
		return countLines(t, conn, "") >= 2
	})
	bustest.Eventually(t, within10s, "SubagentStop flushed the subagent's transcript", func() bool {
		hook.Send(hook.SocketPath(root), hook.Signal{Event: hook.SubagentStop, Workspace: root, TranscriptPath: path, AgentTranscriptPath: sub})
		return countLines(t, conn, "sub") >= 1
	})
}

// countLines counts the transcript lines published to the ingest stream
// that contain text.
func countLines(t *testing.T, conn *bus.Conn, text string) int {
	t.Helper()
	ctx := context.Background()
	st, err := conn.JS.Stream(ctx, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		ev, err := events.Decode(m.Data)
		if err != nil {
			continue
		}
		if b, ok := ev.(events.TranscriptBatch); ok {
			for _, l := range b.Lines {
				if strings.Contains(string(l), text) {
					n++
				}
			}
		}
	}
	return n
}

// TestPathsMatchWorkspace keeps package hook's copies of the workspace
// paths in step with package workspace.
func TestPathsMatchWorkspace(t *testing.T) {
	ws := &workspace.Workspace{Root: "/some/repo"}
	if hook.CacheDir(ws.Root) != ws.Cache() || hook.LogPath(ws.Root) != ws.LogPath() || hook.LockPath(ws.Root) != ws.LockPath() {
		t.Errorf("hook paths %s %s %s differ from workspace's %s %s %s",
			hook.CacheDir(ws.Root), hook.LogPath(ws.Root), hook.LockPath(ws.Root), ws.Cache(), ws.LogPath(), ws.LockPath())
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, workspace.MetaDir, "x"), 0o755)
	got, ok := hook.Find(filepath.Join(dir, workspace.MetaDir, "x"))
	want, _ := workspace.Find(filepath.Join(dir, workspace.MetaDir, "x"), false)
	if !ok || got != want.Root {
		t.Errorf("hook.Find %s, workspace.Find %s", got, want.Root)
	}
}

// With Tasks, the active task comes from it, not from the card files;
// until it is ready, from the files.
func TestActiveTaskFromTheBoard(t *testing.T) {
	root := newRoot(t) // its files say login is active
	var ready atomic.Bool
	var rev atomic.Uint64
	s := New(Options{
		Root: root, Files: os.DirFS(root), Revision: rev.Load, Debounce: 10 * time.Millisecond,
		Tasks: func() ([]scenes.Card, bool) {
			if !ready.Load() {
				return nil, false
			}
			return []scenes.Card{{ID: "k3m9qa", Path: ".cuedeck/cards/k3m9qa.md", Title: "Ship the board", Status: "active"}}, true
		},
	})
	serve(t, s)
	bustest.Eventually(t, within10s, "the files' active card before the board is ready", func() bool {
		return strings.Contains(cached(t, root).Context, "- login: Fix login")
	})
	ready.Store(true)
	rev.Add(1)
	bustest.Eventually(t, within10s, "the board's active task once it is ready", func() bool {
		return strings.Contains(cached(t, root).Context, "- k3m9qa: Ship the board (.cuedeck/cards/k3m9qa.md)")
	})
	if c := cached(t, root); strings.Contains(c.Context, "login") || !slices.Contains(c.NodesIncluded, ".cuedeck/cards/k3m9qa.md") {
		t.Errorf("cache %+v", c)
	}
}
