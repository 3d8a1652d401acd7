package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
)

var comparisonQueries = []string{"authentication", "login oauth", "error codes", "tokens revoked", "api", "nothingmatchesthis"}

// answers asks every comparison query and reads every doc.
func answers(t *testing.T, c tools.Caller) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, q := range comparisonQueries {
		out["q:"+q] = callTool(t, c, tools.ReadContext, tools.ReadContextArgs{Query: q, Limit: 10, Mode: "keyword"})
	}
	for _, p := range []string{"docs/auth.md", "docs/api.md"} {
		out["doc:"+p] = callTool(t, c, tools.ReadDoc, tools.ReadDocArgs{Path: p})
	}
	out["doc:docs/auth.md#Login Flow"] = callTool(t, c, tools.ReadDoc, tools.ReadDocArgs{Path: "docs/auth.md", Anchor: "Login Flow"})
	return out
}

// memoryAnswers asks search_memories until it answers, and keeps what does
// not depend on when the memories were extracted.
func memoryAnswers(t *testing.T, c tools.Caller) []tools.MemoryHit {
	t.Helper()
	var hits []tools.MemoryHit
	bustest.Eventually(t, 60*time.Second, "memories extracted from the transcript", func() bool {
		out := callTool(t, c, tools.SearchMemories, tools.SearchMemoriesArgs{Query: "retries transport attempts", Limit: 10, Mode: "keyword"})
		hits = nil
		if err := json.Unmarshal(out, &hits); err != nil {
			t.Fatalf("search_memories: %s: %v", out, err)
		}
		return len(hits) >= 2
	})
	for i := range hits {
		hits[i].CreatedAt, hits[i].UpdatedAt = time.Time{}, time.Time{}
	}
	return hits
}

// writeClaudeSession puts the extractor's fixture session where Claude Code
// would write it for a session working in root, and returns the projects
// directory.
func writeClaudeSession(t *testing.T, root string) string {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "internal", "extractor", "testdata", "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	projects := filepath.Join(os.Getenv("HOME"), ".claude", "projects")
	dir := filepath.Join(projects, strings.NewReplacer("/", "-", ".", "-").Replace(real))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	session := strings.ReplaceAll(string(fixture), "/home/dev/src/app", real)
	if err := os.WriteFile(filepath.Join(dir, "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01.jsonl"), []byte(session), 0o644); err != nil {
		t.Fatal(err)
	}
	return projects
}

// TestSeparateBinariesMatchCueUp runs ingest, indexer, extractor and
// mcp-edge as four processes against one nats-server and compares their
// answers, documents and memories, with those of `cue up` on the same
// workspace.
func TestSeparateBinariesMatchCueUp(t *testing.T) {
	root := sampleWorkspace(t)
	writeFile(t, root, ".cuedeck/config.toml", "[workspace]\nname = \"app\"\n")
	projects := writeClaudeSession(t, root)

	d := startUp(t, root)
	conn := connect(t, d.info.NATSURL)
	viaUp := queryClient(t, conn, d.info.QueryPrefix)
	bustest.Eventually(t, 60*time.Second, "cue up indexed", func() bool {
		return len(contextPaths(t, viaUp, "error codes")) > 0 && len(contextPaths(t, viaUp, "login")) > 0
	})
	want := answers(t, viaUp)
	wantMemories := memoryAnswers(t, viaUp)
	d.interrupt(t)

	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{StoreDir: t.TempDir(), SyncAlways: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	url := srv.ClientURL()
	state := t.TempDir()
	var procs []*exec.Cmd
	for _, args := range [][]string{
		{bin("ingest"), "--nats", url, "--repo", "app=" + root, "--state-dir", filepath.Join(state, "ingest"), "--debounce", "50ms", "--claude-dir", projects},
		{bin("indexer"), "--nats", url},
		{bin("extractor"), "--nats", url},
		{bin("mcp-edge"), "--nats", url, "--state-dir", filepath.Join(state, "edge"), "--http", ""},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		var log bytes.Buffer
		cmd.Stderr = &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s exited with %v\n%s", filepath.Base(args[0]), err, log.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Errorf("%s did not stop on interrupt", filepath.Base(args[0]))
			}
		})
	}
	conn2 := connect(t, url)
	viaRoles := queryClient(t, conn2, d.info.QueryPrefix)
	bustest.Eventually(t, 60*time.Second, "separate roles indexed", func() bool {
		_, err := viaRoles.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"docs/api.md"}`))
		return err == nil && len(contextPaths(t, viaRoles, "login")) > 0 && len(contextPaths(t, viaRoles, "error codes")) > 0
	})
	got := answers(t, viaRoles)
	if gotMemories := memoryAnswers(t, viaRoles); !reflect.DeepEqual(gotMemories, wantMemories) {
		t.Errorf("search_memories differs:\n cue up:   %+v\n separate: %+v", wantMemories, gotMemories)
	}
	for k, w := range want {
		var a, b any
		json.Unmarshal(w, &a)
		json.Unmarshal(got[k], &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs:\n cue up:   %s\n separate: %s", k, w, got[k])
		}
	}
}
