package transcripts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/transcript"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const within5s = 5 * time.Second

type env struct {
	t      *testing.T
	conn   *bus.Conn
	claude string // a Claude projects dir
	repo   string // root of repo "app"
	state  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	root := t.TempDir()
	e := &env{t: t, conn: conn, claude: filepath.Join(root, "claude"), repo: filepath.Join(root, "src", "app"), state: filepath.Join(root, "state")}
	for _, d := range []string{e.claude, e.repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) config() Config {
	return Config{
		Repos:         []RepoRoot{{Name: "app", Root: e.repo}},
		ClaudeDirs:    []string{e.claude},
		StateDir:      e.state,
		FlushInterval: 5 * time.Millisecond,
		PollInterval:  50 * time.Millisecond,
	}
}

// start runs a tailer until the returned stop is called (or the test ends).
func (e *env) start(cfg Config) (*Tailer, func()) {
	e.t.Helper()
	tl, err := New(e.conn, cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}
	e.t.Cleanup(stop)
	bustest.Eventually(e.t, within5s, "tailer running", func() bool {
		tl.life.RLock()
		defer tl.life.RUnlock()
		return tl.state != nil
	})
	return tl, stop
}

// batches reads every transcript batch in the stream, in order.
func (e *env) batches() []events.TranscriptBatch {
	e.t.Helper()
	ctx := context.Background()
	s, err := e.conn.JS.Stream(ctx, events.IngestStream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []events.TranscriptBatch
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		ev, err := events.Decode(m.Data)
		if err != nil {
			e.t.Fatal(err)
		}
		if b, ok := ev.(events.TranscriptBatch); ok {
			out = append(out, b)
		}
	}
	return out
}

// lines returns, per stream key, the lines the stream holds by offset, and
// fails the test if one offset was sent twice.
func (e *env) lines() map[string]map[int64]string {
	e.t.Helper()
	out := map[string]map[int64]string{}
	for _, b := range e.batches() {
		m := out[b.StreamKey()]
		if m == nil {
			m = map[int64]string{}
			out[b.StreamKey()] = m
		}
		for i, l := range b.Lines {
			if _, dup := m[b.Offsets[i]]; dup {
				e.t.Fatalf("line at %d of %s sent twice", b.Offsets[i], b.StreamKey())
			}
			m[b.Offsets[i]] = string(l)
		}
	}
	return out
}

func (e *env) waitLines(key string, n int) map[int64]string {
	e.t.Helper()
	var got map[int64]string
	bustest.Eventually(e.t, within5s, fmt.Sprintf("%d lines of %s", n, key), func() bool {
		got = e.lines()[key]
		return len(got) >= n
	})
	if len(got) != n {
		e.t.Fatalf("%d lines of %s, want %d", len(got), key, n)
	}
	return got
}

func ccLine(cwd, session, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "user", "uuid": fmt.Sprintf("u-%s", text), "sessionId": session, "cwd": cwd,
		"isSidechain": false, "timestamp": "2026-03-02T10:00:00Z",
		"message": map[string]any{"role": "user", "content": text},
	})
	return string(b) + "\n"
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// checkAgainstFile checks that every line sent is the line at its offset.
func checkAgainstFile(t *testing.T, path string, got map[int64]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off, line := range got {
		end := strings.IndexByte(string(data[off:]), '\n')
		if end < 0 || string(data[off:off+int64(end)]) != line {
			t.Errorf("line at %d is %q, not what the file holds there", off, line)
		}
	}
}

func TestPartialLinesAndRestart(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.claude, "-src-app", "s1.jsonl")
	// A queue operation without cwd comes first, as Claude Code writes it.
	appendTo(t, path, `{"type":"queue-operation","operation":"enqueue","sessionId":"s1"}`+"\n"+ccLine(e.repo, "s1", "one"))
	half := ccLine(e.repo, "s1", "two")
	appendTo(t, path, half[:20])

	tl, stop := e.start(e.config())
	e.waitLines("s1", 2)
	appendTo(t, path, half[20:]+ccLine(e.repo, "s1", "three"))
	got := e.waitLines("s1", 4)
	checkAgainstFile(t, path, got)
	// The tailer counts a batch once its publish is acknowledged, which
	// can be after the batch is read from the stream.
	var s Stats
	bustest.Eventually(t, within5s, "the tailer's counts", func() bool {
		s = tl.Stats()
		return s.Transcripts == 1 && s.Lines >= 4
	})
	if s.Lines != 4 {
		t.Errorf("stats %+v", s)
	}
	stop()

	// Written while the tailer is down: sent after the restart, and
	// nothing before it again.
	appendTo(t, path, ccLine(e.repo, "s1", "four")+ccLine(e.repo, "s1", "five"))
	e.start(e.config())
	got = e.waitLines("s1", 6)
	checkAgainstFile(t, path, got)

	for _, b := range e.batches() {
		if b.Repo != "app" || b.Session != "s1" || b.Format != events.TranscriptClaudeCode || b.Cwd != e.repo || b.Source == "" {
			t.Errorf("batch %+v", b)
		}
		c, err := transcript.Parse(b.Format, b.Lines, b.Offsets)
		if err != nil || c.Session != "" && c.Session != "s1" {
			t.Errorf("parse: %v %+v", err, c)
		}
	}
}

func TestBatchLimits(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.claude, "p", "s2.jsonl")
	var all string
	for i := range 7 {
		all += ccLine(e.repo, "s2", fmt.Sprintf("line %d", i))
	}
	long := ccLine(e.repo, "s2", strings.Repeat("x", 3000))
	appendTo(t, path, all+"not json at all\n\n"+long+ccLine(e.repo, "s2", "after"))
	cfg := e.config()
	cfg.MaxBatchLines = 3
	cfg.MaxBatchBytes = 2048
	tl, _ := e.start(cfg)
	got := e.waitLines("s2", 8)
	checkAgainstFile(t, path, got)
	bad := 0
	for _, b := range e.batches() {
		if len(b.Lines) > 3 {
			t.Errorf("batch of %d lines", len(b.Lines))
		}
		bad += b.BadLines
	}
	bustest.Eventually(t, within5s, "stats", func() bool { s := tl.Stats(); return s.TooLong == 1 && s.BadLines == 1 })
	if bad != 1 {
		t.Errorf("bad lines in batches %d, want 1", bad)
	}
}

// rollBack rewrites the state of path as fn says, with the tailer stopped.
func (e *env) rollBack(path string, fn func(*record)) {
	e.t.Helper()
	st, err := openState(e.state, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.close()
	real, _ := filepath.EvalSymlinks(path)
	rec, ok, err := st.get(real)
	if err != nil || !ok {
		e.t.Fatalf("no state for %s: %v", path, err)
	}
	fn(&rec)
	if err := st.put(real, rec); err != nil {
		e.t.Fatal(err)
	}
}

func TestCrashBetweenPublishAndOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		// pending says the crash came after the intent was written (the
		// state as the tailer leaves it); without, the state is older still.
		pending bool
		grow    bool
	}{
		{"pending batch, file grew", true, true},
		{"pending batch", true, false},
		{"offset only", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			path := filepath.Join(e.claude, "p", "s3.jsonl")
			appendTo(t, path, ccLine(e.repo, "s3", "a")+ccLine(e.repo, "s3", "b")+ccLine(e.repo, "s3", "c"))
			_, stop := e.start(e.config())
			e.waitLines("s3", 3)
			stop()
			e.rollBack(path, func(r *record) {
				end := r.Offset
				r.Offset = 0
				if tc.pending {
					r.PendingEnd = end
				}
			})
			want := 3
			if tc.grow {
				appendTo(t, path, ccLine(e.repo, "s3", "d"))
				want = 4
			}
			tl, _ := e.start(e.config())
			bustest.Eventually(t, within5s, "the batch sent again", func() bool { return tl.Stats().Duplicates == 1 })
			got := e.waitLines("s3", want) // fails on a line sent twice
			checkAgainstFile(t, path, got)
			if n := len(e.batches()); n != want-2 {
				t.Errorf("%d batches in the stream, want %d", n, want-2)
			}
		})
	}
}

func TestTruncationAndReplacement(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.claude, "p", "s4.jsonl")
	appendTo(t, path, ccLine(e.repo, "s4", "first")+ccLine(e.repo, "s4", "second"))
	tl, _ := e.start(e.config())
	e.waitLines("s4", 2)

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, ccLine(e.repo, "s4", "new"))
	bustest.Eventually(t, within5s, "the rewritten transcript sent", func() bool {
		for _, b := range e.batches() {
			if b.StartOffset == 0 && len(b.Lines) == 1 && strings.Contains(string(b.Lines[0]), `"new"`) {
				return true
			}
		}
		return false
	})

	// Replaced by another file under the same name.
	tmp := path + ".tmp"
	appendTo(t, tmp, ccLine(e.repo, "s4", "replaced-one")+ccLine(e.repo, "s4", "replaced-two"))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within5s, "the replacement sent", func() bool {
		n := 0
		for _, b := range e.batches() {
			for _, l := range b.Lines {
				if strings.Contains(string(l), "replaced-") {
					n++
				}
			}
		}
		return n == 2
	})
	if s := tl.Stats(); s.Restarts != 2 {
		t.Errorf("restarts %d, want 2", s.Restarts)
	}
}

func TestRepoMapping(t *testing.T) {
	e := newEnv(t)
	inner := filepath.Join(e.repo, "vendor", "lib")
	other := t.TempDir()
	link := filepath.Join(t.TempDir(), "linked")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Repos = append(cfg.Repos, RepoRoot{Name: "lib", Root: inner}, RepoRoot{Name: "other", Root: link})
	tl, _ := e.start(cfg)

	for _, tc := range []struct{ session, cwd, repo string }{
		{"m1", filepath.Join(e.repo, "cmd"), "app"},
		{"m2", filepath.Join(inner, "x"), "lib"},
		{"m3", e.repo + "lib", ""}, // a sibling sharing a prefix of the name
		{"m4", "/", ""},
		{"m5", other, "other"}, // the root was given through a symlink
		{"m6", link, "other"},
	} {
		appendTo(t, filepath.Join(e.claude, "p", tc.session+".jsonl"), ccLine(tc.cwd, tc.session, "hi"))
		err := tl.Flush(context.Background(), filepath.Join(e.claude, "p", tc.session+".jsonl"))
		if tc.repo == "" {
			if !errors.Is(err, ErrIgnored) {
				t.Errorf("%s (cwd %s): %v, want ErrIgnored", tc.session, tc.cwd, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.session, err)
		}
		found := false
		for _, b := range e.batches() {
			if b.Session == tc.session {
				found = true
				if b.Repo != tc.repo || b.Cwd != tc.cwd {
					t.Errorf("%s: repo %q cwd %q, want %q", tc.session, b.Repo, b.Cwd, tc.repo)
				}
			}
		}
		if !found {
			t.Errorf("%s: no batch", tc.session)
		}
	}
	if s := tl.Stats(); s.Ignored != 2 {
		t.Errorf("ignored %d, want 2", s.Ignored)
	}
	if err := tl.Flush(context.Background(), filepath.Join(t.TempDir(), "x.jsonl")); !errors.Is(err, ErrUnknownTranscript) {
		t.Errorf("flush outside the dirs: %v", err)
	}
}

func TestSubagentTranscript(t *testing.T) {
	e := newEnv(t)
	_, _ = e.start(e.config())
	// Created while the tailer runs: the session and subagents
	// directories appear after it started watching.
	sub := filepath.Join(e.claude, "-src-app", "s5", "subagents", "agent-a54c52676825771b6.jsonl")
	line := strings.Replace(ccLine(e.repo, "s5", "Reply OK"), `"isSidechain":false`, `"isSidechain":true,"agentId":"a54c52676825771b6"`, 1)
	appendTo(t, sub, line)
	appendTo(t, filepath.Join(filepath.Dir(sub), "agent-a54c52676825771b6.meta.json"), `{"agentType":"general-purpose"}`)
	got := e.waitLines("s5~a54c52676825771b6", 1)
	checkAgainstFile(t, sub, got)
	b := e.batches()[0]
	if b.Agent != "a54c52676825771b6" || b.Session != "s5" || b.Repo != "app" {
		t.Errorf("batch %+v", b)
	}
	c, err := transcript.Parse(b.Format, b.Lines, b.Offsets)
	if err != nil || c.Agent != b.Agent {
		t.Errorf("parsed agent %q: %v", c.Agent, err)
	}
}

func TestChatSource(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	cfg := e.config()
	cfg.ClaudeDirs = []string{}
	cfg.ChatSources = []ChatSource{{Glob: filepath.Join(dir, "*.jsonl"), Repo: "app"}, {Glob: filepath.Join(dir, "bycwd", "*.jsonl")}}
	cfg.Repos = append(cfg.Repos, RepoRoot{Name: "lib", Root: filepath.Join(e.repo, "lib")})
	e.start(cfg)
	appendTo(t, filepath.Join(dir, "log.jsonl"), `{"role":"user","content":"hi","session":"chat-9"}`+"\n"+`{"role":"assistant","content":"hello"}`+"\n")
	appendTo(t, filepath.Join(dir, "bycwd", "b.jsonl"), `{"role":"user","content":"x","cwd":"`+filepath.Join(e.repo, "lib")+`"}`+"\n")
	appendTo(t, filepath.Join(dir, "notes.txt"), "{}\n")
	e.waitLines("chat-9", 2)
	e.waitLines("b", 1)
	for _, b := range e.batches() {
		want := map[string]string{"chat-9": "app", "b": "lib"}[b.Session]
		if b.Format != events.TranscriptChatJSONL || b.Repo != want {
			t.Errorf("batch %+v", b)
		}
	}
}

func TestFlush(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	// Nothing goes out by the timer: only Flush publishes.
	cfg.FlushInterval = time.Hour
	tl, _ := e.start(cfg)
	path := filepath.Join(e.claude, "p", "s6.jsonl")
	appendTo(t, path, ccLine(e.repo, "s6", "a")+ccLine(e.repo, "s6", "b")+`{"type":"user"`)
	ctx := context.Background()
	if err := tl.Flush(ctx, path); err != nil {
		t.Fatal(err)
	}
	bs := e.batches()
	if len(bs) != 1 || !bs[0].Final || len(bs[0].Lines) != 2 {
		t.Fatalf("batches %+v", bs)
	}
	// Nothing new: an empty final batch, once however often it is flushed.
	for range 2 {
		if err := tl.Flush(ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	bs = e.batches()
	if len(bs) != 2 || !bs[1].Final || len(bs[1].Lines) != 0 || bs[1].StartOffset != bs[0].EndOffset {
		t.Fatalf("batches %+v", bs)
	}
	// The partial line completed: its batch starts where the empty one sat.
	appendTo(t, path, `}`+"\n")
	if err := tl.Flush(ctx, path); err != nil {
		t.Fatal(err)
	}
	bs = e.batches()
	if len(bs) != 3 || len(bs[2].Lines) != 1 || bs[2].StartOffset != bs[0].EndOffset || !bs[2].Final {
		t.Fatalf("batches %+v", bs)
	}
}

func TestSymlinkOutOfDirIgnored(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	appendTo(t, outside, ccLine(e.repo, "s7", "secret"))
	if err := os.MkdirAll(filepath.Join(e.claude, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.claude, "p", "s7.jsonl")); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(e.claude, "p", "s8.jsonl"), ccLine(e.repo, "s8", "fine"))
	tl, _ := e.start(e.config())
	e.waitLines("s8", 1)
	if err := tl.Flush(context.Background(), filepath.Join(e.claude, "p", "s7.jsonl")); !errors.Is(err, ErrUnknownTranscript) {
		t.Errorf("flush through the symlink: %v", err)
	}
	if _, ok := e.lines()["s7"]; ok {
		t.Error("a transcript outside the Claude dir was sent")
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Repos: []RepoRoot{{Name: "app", Root: "/src/app"}}, StateDir: "/tmp/s", ClaudeDirs: []string{}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.StateDir = "" },
		func(c *Config) { c.Repos = nil },
		func(c *Config) { c.Repos[0].Root = "rel" },
		func(c *Config) { c.Repos = append(c.Repos, c.Repos[0]) },
		func(c *Config) { c.ClaudeDirs = []string{"rel"} },
		func(c *Config) { c.ChatSources = []ChatSource{{Glob: "/x/[", Repo: "app"}} },
		func(c *Config) { c.ChatSources = []ChatSource{{Glob: "/x/*.jsonl", Repo: "nope"}} },
		func(c *Config) { c.MaxBatchBytes = -1 },
	} {
		c := ok
		c.Repos = append([]RepoRoot(nil), ok.Repos...)
		bad(&c)
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
}

func TestNoCwdYet(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.FlushInterval = time.Hour
	tl, _ := e.start(cfg)
	path := filepath.Join(e.claude, "p", "s9.jsonl")
	appendTo(t, path, `{"type":"queue-operation","operation":"enqueue","sessionId":"s9"}`+"\n")
	if err := tl.Flush(context.Background(), path); !errors.Is(err, ErrNoCwd) {
		t.Fatalf("flush before any cwd: %v, want ErrNoCwd", err)
	}
	appendTo(t, path, ccLine(e.repo, "s9", "now"))
	if err := tl.Flush(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	got := e.waitLines("s9", 2) // the queue operation goes too
	checkAgainstFile(t, path, got)
}
