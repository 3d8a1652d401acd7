package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/scene"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// node is a daemon running in-process on a temp workspace, and a client of
// its tools over NATS, as `cue mcp` would be.
type node struct {
	ws     *workspace.Workspace
	info   workspace.DaemonInfo
	conn   *bus.Conn
	caller tools.Caller
	stop   func() error
	// exited is closed when Run has returned, with runErr.
	exited <-chan struct{}
	runErr *error
}

func startNode(t testing.TB, root string, tweak func(*workspace.Config)) *node {
	t.Helper()
	return startNodeLogged(t, root, tweak, nil)
}

// startNodeLogged is startNode with the daemon logging to log.
func startNodeLogged(t testing.TB, root string, tweak func(*workspace.Config), log *slog.Logger) *node {
	t.Helper()
	ws := &workspace.Workspace{Root: root}
	cfg, err := ws.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ingest.Debounce.Duration = 50 * time.Millisecond
	// Tests poll read_context far faster than an agent may; the limits
	// have their own test, which turns them back on.
	cfg.MCP.RateLimitsDisabled = true
	if tweak != nil {
		tweak(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan workspace.DaemonInfo, 1)
	exited := make(chan struct{})
	var runErr error
	go func() {
		defer close(exited)
		runErr = Run(ctx, Options{Workspace: ws, Config: cfg, Logger: log, Ready: func(i workspace.DaemonInfo) { ready <- i }})
	}()
	var info workspace.DaemonInfo
	select {
	case info = <-ready:
	case <-exited:
		cancel()
		t.Fatalf("daemon failed to start: %v", runErr)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("daemon not ready within 60s")
	}
	conn, err := bus.Connect(context.Background(), info.NATSURL, bus.ConnectOptions{Name: "test-client"})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: info.QueryPrefix})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{ws: ws, info: info, conn: conn, caller: caller, exited: exited, runErr: &runErr}
	stopped := false
	n.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		conn.Close()
		cancel()
		<-exited
		return runErr
	}
	t.Cleanup(func() {
		if err := n.stop(); err != nil {
			t.Errorf("daemon stopped with error: %v", err)
		}
	})
	return n
}

func (n *node) readContext(t testing.TB, q string) []tools.ContextHit {
	t.Helper()
	args, _ := json.Marshal(tools.ReadContextArgs{Query: q, Limit: 50, Mode: "keyword"})
	out, err := n.caller.Call(context.Background(), tools.ReadContext, args)
	if err != nil {
		t.Fatalf("read_context %q: %v", q, err)
	}
	var hits []tools.ContextHit
	if err := json.Unmarshal(out, &hits); err != nil {
		t.Fatalf("read_context result %s: %v", out, err)
	}
	return hits
}

func (n *node) finds(t testing.TB, q, path string) bool {
	for _, h := range n.readContext(t, q) {
		if h.Path == path {
			return true
		}
	}
	return false
}

func (n *node) readDoc(path, anchor string) (tools.ReadDocResult, error) {
	args, _ := json.Marshal(tools.ReadDocArgs{Path: path, Anchor: anchor})
	out, err := n.caller.Call(context.Background(), tools.ReadDoc, args)
	var res tools.ReadDocResult
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	return res, err
}

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEditMakesFindableAndDeleteRemoves(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/guide.md", "# Guide\n\nNothing special here.\n")
	n := startNode(t, root, nil)
	bustest.Eventually(t, 30*time.Second, "initial doc indexed", func() bool { return n.finds(t, "guide", "docs/guide.md") })
	if n.finds(t, "zeppelin", "docs/guide.md") {
		t.Fatal("found a word the file does not contain")
	}

	write(t, root, "docs/guide.md", "# Guide\n\n## Zeppelin mooring\n\nHow to moor a zeppelin.\n")
	bustest.Eventually(t, 30*time.Second, "edit findable", func() bool { return n.finds(t, "zeppelin", "docs/guide.md") })
	doc, err := n.readDoc("docs/guide.md", "Zeppelin mooring")
	if err != nil {
		t.Fatal(err)
	}
	if doc.LineRange == nil || doc.LineRange.Start != 3 || !strings.Contains(doc.Content, "moor a zeppelin") {
		t.Fatalf("section: %+v", doc)
	}

	if err := os.Remove(filepath.Join(root, "docs/guide.md")); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 30*time.Second, "deletion applied", func() bool { return !n.finds(t, "zeppelin", "docs/guide.md") })
	_, err = n.readDoc("docs/guide.md", "")
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Fatalf("read_doc of a deleted file: %v, want 1001", err)
	}
}

func TestBadInputGetsSpecificOutcomes(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "secret.md", "# Secret\n")
	write(t, root, "docs/ok.md", "# Fine document\n")
	write(t, root, "docs/broken.md", "---\ntitle: [unclosed\n---\n# Still indexed\nbody words\n")
	write(t, root, "docs/latin1.md", "# Caf\xe9 notes\n\nna\xefve text\n")
	write(t, root, "bin/blob.dat", "ELF\x00\x01\x02binary")
	big, err := os.Create(filepath.Join(root, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(50 << 20)
	big.Close()
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "docs/escape.md")); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, root, nil)

	var rep status.Report
	bustest.Eventually(t, 30*time.Second, "all files accounted for", func() bool {
		rep, err = status.Collect(context.Background(), n.conn.JS)
		if err != nil || len(rep.Repos) != 1 {
			return false
		}
		return rep.Repos[0].Indexed == 3 && len(rep.Repos[0].Skipped) == 3
	})
	rr := rep.Repos[0]
	reasons := map[string]string{}
	for _, s := range rr.Skipped {
		reasons[s.Path] = s.Reason
	}
	want := map[string]string{"bin/blob.dat": "binary", "huge.log": "too_large", "docs/escape.md": "symlink_escapes_repo"}
	for p, r := range want {
		if reasons[p] != r {
			t.Errorf("skip of %s: %q, want %q (all: %v)", p, reasons[p], r, reasons)
		}
	}
	warned := map[string]string{}
	for _, w := range rr.Warnings {
		warned[w.Path] += w.Reason + ";"
	}
	if !regexp.MustCompile(`frontmatter: line [23]:`).MatchString(warned["docs/broken.md"]) {
		t.Errorf("broken frontmatter warning should name the line: %q", warned["docs/broken.md"])
	}
	if !strings.Contains(warned["docs/latin1.md"], "UTF-8") {
		t.Errorf("invalid UTF-8 warning: %q", warned["docs/latin1.md"])
	}
	if !n.finds(t, "still indexed", "docs/broken.md") {
		t.Error("a document with broken frontmatter must still be searchable")
	}
	if n.finds(t, "secret", "docs/escape.md") {
		t.Error("content behind an escaping symlink was indexed")
	}

	for _, c := range []struct {
		path string
		code int
	}{
		{"docs/../../etc/passwd.md", tools.CodeInvalidParams},
		{"../secret.md", tools.CodeInvalidParams},
		{"docs/okk.md", tools.CodeFileNotFound},
	} {
		_, err := n.readDoc(c.path, "")
		var te *tools.Error
		if !errors.As(err, &te) || te.Code != c.code {
			t.Errorf("read_doc %q: %v, want code %d", c.path, err, c.code)
			continue
		}
		if c.code == tools.CodeFileNotFound {
			if s, _ := te.Data["suggestion"].(string); !strings.Contains(s, "docs/ok.md") {
				t.Errorf("1001 for %q should suggest docs/ok.md: %v", c.path, te.Data)
			}
		}
	}
	// The pipeline still runs after all of it.
	write(t, root, "docs/after.md", "# Afterwards quokka\n")
	bustest.Eventually(t, 30*time.Second, "pipeline alive", func() bool { return n.finds(t, "quokka", "docs/after.md") })
}

func TestSecondDaemonFailsWithLockError(t *testing.T) {
	root := t.TempDir()
	startNode(t, root, nil)
	ws := &workspace.Workspace{Root: root}
	cfg, _ := ws.LoadConfig()
	err := Run(context.Background(), Options{Workspace: ws, Config: cfg})
	var le *workspace.LockError
	if !errors.As(err, &le) || le.HolderPID != os.Getpid() {
		t.Fatalf("second daemon: %v, want a 1007 lock error naming this pid", err)
	}
}

// The cache is deleted under a running daemon (a user's rm -rf, a
// cleanup script): the daemon stops with an error that says what happened
// and how to recover rather than serve stores that are gone, and its exit
// leaves the daemon file of a daemon started since in place.
func TestDaemonStopsWhenItsCacheIsDeleted(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/a.md", "# Alpha\n")
	n := startNode(t, root, nil)
	// The daemon writes into its cache meanwhile: RemoveAll can find a
	// directory refilled behind it ("directory not empty") and is asked
	// again, as a user would run rm -rf again.
	bustest.Eventually(t, 10*time.Second, "the cache deleted", func() bool {
		return os.RemoveAll(n.ws.Cache()) == nil
	})
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon kept running on a deleted cache")
	}
	if err := *n.runErr; err == nil || !strings.Contains(err.Error(), "deleted or replaced") || !strings.Contains(err.Error(), "cue up") {
		t.Errorf("the daemon's error: %v, want it to say the cache was deleted and to run `cue up`", err)
	}
	n.stop = func() error { return nil }

	// A daemon file naming another process is left alone.
	other := workspace.DaemonInfo{PID: os.Getpid() + 1, Workspace: root}
	if err := os.MkdirAll(n.ws.Cache(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := n.ws.WriteDaemonInfo(other); err != nil {
		t.Fatal(err)
	}
	if err := n.ws.RemoveDaemonInfo(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(n.ws.DaemonFilePath()); err != nil {
		t.Errorf("the daemon file of another daemon was removed: %v", err)
	}
}

// Part of the cache deleted under a running daemon: the embedded NATS
// server's store or the edge's. The daemon stops and says to start it
// again, rather than serve what it held while the streams are gone (a
// NATS server restarted after the write errors comes back without them).
// The next start rebuilds from the files: a file written meanwhile is
// found.
func TestDaemonStopsWhenAStoreDirectoryIsDeleted(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(ws *workspace.Workspace) string
	}{
		{"nats", func(ws *workspace.Workspace) string { return ws.NATSStoreDir() }},
		{"edge", func(ws *workspace.Workspace) string { return ws.StateDir("edge") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "docs/a.md", "# Alpha\n")
			n := startNode(t, root, nil)
			bustest.Eventually(t, 30*time.Second, "a.md indexed", func() bool { return n.finds(t, "alpha", "docs/a.md") })
			dir := tc.dir(n.ws)
			bustest.Eventually(t, 10*time.Second, dir+" deleted", func() bool { return os.RemoveAll(dir) == nil })
			write(t, root, "docs/b.md", "# Bravo\n")
			select {
			case <-n.exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("the daemon kept running with %s deleted", dir)
			}
			if err := *n.runErr; err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "cue up") {
				t.Errorf("the daemon's error: %v, want it to name %s and say to run `cue up`", err, dir)
			}
			n.stop = func() error { return nil }

			again := startNode(t, root, nil)
			bustest.Eventually(t, 30*time.Second, "both files found after the restart", func() bool {
				return again.finds(t, "alpha", "docs/a.md") && again.finds(t, "bravo", "docs/b.md")
			})
		})
	}
}

// BenchmarkSaveToFindable measures the time from writing a file to the
// moment read_context finds it, through ingest (debounce 500 ms), JetStream,
// the indexer, cue_docs and the edge.
func BenchmarkSaveToFindable(b *testing.B) {
	root := b.TempDir()
	write(b, root, "docs/seed.md", "# Seed\n")
	n := startNode(b, root, func(c *workspace.Config) { c.Ingest.Debounce.Duration = 500 * time.Millisecond })
	bustest.Eventually(b, 30*time.Second, "seed indexed", func() bool { return n.finds(b, "seed", "docs/seed.md") })
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word := fmt.Sprintf("marker%dx%d", i, time.Now().UnixNano())
		start := time.Now()
		write(b, root, fmt.Sprintf("docs/n%d.md", i), "# Note\n\n"+word+"\n")
		for !n.finds(b, word, fmt.Sprintf("docs/n%d.md", i)) {
			time.Sleep(2 * time.Millisecond)
			if time.Since(start) > 30*time.Second {
				b.Fatalf("save %d not findable within 30s", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

func TestEmbeddingsTrailIndexingWithTheBuiltinModel(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/guide.md", "# Guide\n\n## Mooring\n\nHow to moor a zeppelin.\n")
	write(t, root, "notes.md", "# Notes\n\nShort ones.\n")
	n := startNode(t, root, nil)
	var rep status.Report
	bustest.Eventually(t, 60*time.Second, "every document embedded", func() bool {
		var err error
		rep, err = status.CollectWith(context.Background(), n.conn.JS, status.Options{EmbedModel: "builtin:use-lite"})
		if err != nil || rep.Embeddings == nil {
			return false
		}
		e := rep.Embeddings
		return e.Docs == 2 && e.Vectors == 2 && e.Pending == 0
	})
	kv, err := n.conn.JS.KeyValue(context.Background(), events.VectorsBucket)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := kv.Get(context.Background(), events.VectorKey("builtin:use-lite", n.info.Repo, "docs/guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := events.DecodeVectorRecord(entry.Value())
	if err != nil || rec.Dimensions != 512 || len(rec.Chunks) == 0 {
		t.Fatalf("vector record: %+v, %v", rec, err)
	}

	// The daemon's edge searches those vectors: a query sharing no word
	// with the guide finds it by meaning, and names the section.
	var hits []tools.ContextHit
	bustest.Eventually(t, 30*time.Second, "semantic search through the daemon", func() bool {
		args, _ := json.Marshal(map[string]any{"query": "docking an airship", "mode": "semantic", "limit": 2})
		out, err := n.caller.Call(context.Background(), tools.ReadContext, args)
		if err != nil || json.Unmarshal(out, &hits) != nil {
			return false
		}
		return len(hits) > 0 && slices.Contains(hits[0].Modes, "semantic")
	})
	if hits[0].Path != "docs/guide.md" || hits[0].Section == nil || hits[0].Fallback != "" {
		t.Fatalf("semantic hits: %+v", hits)
	}
}

func TestNoEmbeddingsWithModelNone(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.md", "# Alpha quokka\n")
	n := startNode(t, root, func(c *workspace.Config) { c.Embed.Model = "none" })
	bustest.Eventually(t, 30*time.Second, "indexed", func() bool { return n.finds(t, "quokka", "a.md") })
	rep, err := status.Collect(context.Background(), n.conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.Embeddings; e == nil || e.Pending != 0 || len(e.ByModel) != 0 {
		t.Fatalf("embeddings with model none: %+v", e)
	}
}

// The card loop through the composed daemon: a task made through MCP
// becomes a card file; update_task rewrites it keeping the body and keys
// the tools do not know; a hand edit of the file changes list_tasks.
func TestTaskCardsRoundTripThroughTheDaemon(t *testing.T) {
	root := t.TempDir()
	n := startNode(t, root, nil)
	call := func(tool string, args map[string]any, out any) {
		t.Helper()
		b, _ := json.Marshal(args)
		res, err := n.caller.Call(context.Background(), tool, b)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if out != nil {
			if err := json.Unmarshal(res, out); err != nil {
				t.Fatalf("%s result %s: %v", tool, res, err)
			}
		}
	}
	var created tools.CreateTaskResult
	call(tools.CreateTask, map[string]any{"title": "Moor the zeppelin", "priority": "high"}, &created)
	card := filepath.Join(root, filepath.FromSlash(created.Path))
	var body []byte
	bustest.Eventually(t, 10*time.Second, "the card file written by ingest", func() bool {
		var err error
		body, err = os.ReadFile(card)
		return err == nil && strings.Contains(string(body), "Moor the zeppelin")
	})

	// A person adds a body and a key of their own.
	edited := strings.Replace(string(body), "\n---\n", "\nsprint: 14\n---\n", 1) + "\nUse the north mast.\n"
	write(t, root, created.Path, edited)
	call(tools.UpdateTask, map[string]any{"id": created.ID, "updates": map[string]any{"status": "active"}}, nil)
	bustest.Eventually(t, 10*time.Second, "the card rewritten with the new status", func() bool {
		b, err := os.ReadFile(card)
		s := string(b)
		return err == nil && strings.Contains(s, "status: active") && strings.Contains(s, "sprint: 14") && strings.HasSuffix(s, "\nUse the north mast.\n")
	})

	// A hand edit reaches list_tasks.
	b, _ := os.ReadFile(card)
	write(t, root, created.Path, strings.Replace(string(b), "status: active", "status: done", 1))
	bustest.Eventually(t, 10*time.Second, "list_tasks sees the hand edit", func() bool {
		var list []tools.TaskSummary
		b, _ := json.Marshal(map[string]any{"status": "done"})
		res, err := n.caller.Call(context.Background(), tools.ListTasks, b)
		if err != nil || json.Unmarshal(res, &list) != nil {
			return false
		}
		return len(list) == 1 && list[0].ID == created.ID
	})
}

// get_scene through the daemon packs the active card and what it
// references, from the workspace's files.
func TestGetSceneThroughTheDaemon(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/mast.md", "# Mast\n\n## North\n\nThe north mast takes ships up to 200 m.\n\n## South\n\nClosed for repair.\n")
	write(t, root, ".cuedeck/cards/moor01.md", "---\nid: moor01\ntitle: Moor the zeppelin\nstatus: active\npriority: high\n---\n\nSee @docs/mast.md#North.\n")
	n := startNode(t, root, nil)
	args, _ := json.Marshal(map[string]any{"token_limit": 2000})
	out, err := n.caller.Call(context.Background(), tools.GetScene, args)
	if err != nil {
		t.Fatal(err)
	}
	var res tools.GetSceneResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.CardID != "moor01" || res.Budget != 2000 || res.Tokens > 2000 || !strings.Contains(res.Markdown, "200 m") || strings.Contains(res.Markdown, "Closed for repair") {
		t.Fatalf("scene: %+v", res)
	}
	// The horizon's ids expand: docs/ lists mast.md with its own id.
	docsID := scene.NodeID("docs/")
	if !strings.Contains(res.Markdown, docsID) {
		t.Fatalf("no expand id for docs/ in the horizon:\n%s", res.Markdown)
	}
	out, err = n.caller.Call(context.Background(), tools.GetScene, json.RawMessage(`{"expand":"`+docsID+`"}`))
	if err != nil || !strings.Contains(string(out), "docs/mast.md [expand: "+scene.NodeID("docs/mast.md")+"]") {
		t.Fatalf("expand docs/: %s %v", out, err)
	}
	_, err = n.caller.Call(context.Background(), tools.GetScene, json.RawMessage(`{"card_id":"zzzzzz"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Fatalf("unknown card: %v", err)
	}
}

// A Claude Code session working in the workspace becomes memories: the
// tailer finds the transcript by the cwd its lines report, the extractor
// grafts its decisions by rule, and they land in cue_memories once.
func TestTranscriptBecomesMemories(t *testing.T) {
	root := t.TempDir()
	claude := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("..", "extractor", "testdata", "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	session := strings.ReplaceAll(string(fixture), "/home/dev/src/app", realRoot)
	project := filepath.Join(claude, strings.NewReplacer("/", "-", ".", "-").Replace(realRoot))
	n := startNode(t, root, func(c *workspace.Config) { c.Transcripts.ClaudeDirs = []string{claude} })
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written in two parts with the cut inside a line: the tailer holds the
	// partial line back until its newline arrives.
	path := filepath.Join(project, "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01.jsonl")
	cut := len(session) / 2
	if err := os.WriteFile(path, []byte(session[:cut]), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(session[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()

	kv, err := n.conn.JS.KeyValue(context.Background(), events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	repo := n.info.Repo
	want := []string{"Wrap the transport in a retrying RoundTripper", "Cap retries at three attempts"}
	got := map[string]events.MemoryRecord{}
	bustest.Eventually(t, 60*time.Second, "memories from the transcript", func() bool {
		for _, content := range want {
			e, err := kv.Get(context.Background(), events.MemoryKey(repo, memory.Hash(content)))
			if err != nil {
				return false
			}
			rec, err := events.DecodeMemoryRecord(e.Value())
			if err != nil {
				t.Fatalf("memory %q: %v", content, err)
			}
			got[content] = rec
		}
		return true
	})
	for _, content := range want {
		rec := got[content]
		if rec.Repo != repo || rec.Session != "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01" || rec.Provider != "rules" || rec.Extractions != 1 {
			t.Errorf("memory %q: %+v", content, rec)
		}
	}

	// Agents find them: search_memories over NATS, as `cue mcp` asks. The
	// edge applies the bucket's writes after they are stored: both are
	// ranked once it has applied both.
	var hits []tools.MemoryHit
	bustest.Eventually(t, 30*time.Second, "search_memories to rank both memories", func() bool {
		args, _ := json.Marshal(tools.SearchMemoriesArgs{Query: "retries attempts", Mode: "keyword", Filters: &tools.MemoryFilters{Repo: repo}})
		out, err := n.caller.Call(context.Background(), tools.SearchMemories, args)
		if err != nil {
			t.Fatalf("search_memories: %v", err)
		}
		hits = nil
		if err := json.Unmarshal(out, &hits); err != nil {
			t.Fatalf("search_memories result %s: %v", out, err)
		}
		return len(hits) >= len(want)
	})
	if hits[0].Content != "Cap retries at three attempts" {
		t.Fatalf("best memory for 'retries attempts': %+v", hits)
	}

	// And the scene of a card leads with them under Recent decisions.
	write(t, root, ".cuedeck/cards/retr01.md", "---\nid: retr01\ntitle: Retry 503s\nstatus: active\npriority: high\n---\n\nMake the client retry.\n")
	bustest.Eventually(t, 30*time.Second, "a scene with recent decisions", func() bool {
		out, err := n.caller.Call(context.Background(), tools.GetScene, json.RawMessage(`{"card_id":"retr01","token_limit":2000}`))
		if err != nil {
			return false
		}
		var res tools.GetSceneResult
		return json.Unmarshal(out, &res) == nil && strings.Contains(res.Markdown, "Recent Decisions") &&
			strings.Contains(res.Markdown, "Wrap the transport in a retrying RoundTripper")
	})
}

// The config's lower bound for [nats] queue_max_bytes is the bus's: the
// workspace package states it without importing NATS.
func TestQueueMaxBytesBoundsAgree(t *testing.T) {
	if workspace.MinQueueMaxBytes != bus.MinConfiguredQueueMaxBytes {
		t.Fatalf("workspace allows %d, bus %d", workspace.MinQueueMaxBytes, bus.MinConfiguredQueueMaxBytes)
	}
}
