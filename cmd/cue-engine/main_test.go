package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// binDir holds the real binaries, built once for the package's tests.
var binDir string

// goHome is $HOME as the tests found it. TestMain gives the daemons a home
// of their own, and a go command run under that home would find an empty
// build cache and module cache there: it downloaded every module and
// compiled everything again, a minute of a cold `make test`.
var goHome = os.Getenv("HOME")

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cue-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/cue", "./cmd/cue-engine", "./cmd/ingest", "./cmd/indexer", "./cmd/extractor", "./cmd/mcp-edge")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building binaries: %v\n%s", err, out)
		os.Exit(1)
	}
	binDir = dir
	// The tests poll read_context far faster than seed 002's limits
	// allow an agent; internal/daemon tests the limits.
	os.Setenv("CUE_RATE_LIMITS", "off")
	// Daemons started by the tests tail the Claude Code transcripts under
	// $HOME; a home of their own keeps the developer's sessions out.
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.RemoveAll(dir)
	os.Exit(code)
}

func bin(name string) string { return filepath.Join(binDir, name) }

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cue runs the cue binary and returns its combined output.
func cue(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin("cue"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cue %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// daemonProc is a `cue up` child process.
type daemonProc struct {
	cmd  *exec.Cmd
	ws   *workspace.Workspace
	info workspace.DaemonInfo
	log  *strings.Builder
}

func startUp(t testing.TB, root string) *daemonProc {
	t.Helper()
	d := &daemonProc{ws: &workspace.Workspace{Root: root}, log: &strings.Builder{}}
	d.cmd = exec.Command(bin("cue"), "up", "--workspace", root, "--log-level", "warn")
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 60*time.Second, "daemon file", func() bool {
		info, err := d.ws.ReadDaemonInfo()
		if err == nil && info.PID == d.cmd.Process.Pid {
			d.info = info
			return true
		}
		return false
	})
	return d
}

func (d *daemonProc) kill() {
	d.cmd.Process.Kill()
	d.cmd.Wait()
}

func (d *daemonProc) interrupt(t testing.TB) {
	t.Helper()
	d.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cue up exited with %v\n%s", err, d.log)
		}
	case <-time.After(60 * time.Second):
		d.cmd.Process.Kill()
		t.Fatalf("cue up did not stop on interrupt\n%s", d.log)
	}
	if !strings.Contains(d.log.String(), "stopped cleanly") {
		t.Fatalf("no clean stop reported:\n%s", d.log)
	}
}

func connect(t testing.TB, url string) *bus.Conn {
	t.Helper()
	conn, err := bus.Connect(context.Background(), url, bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

func callTool(t testing.TB, c tools.Caller, tool string, args any) json.RawMessage {
	t.Helper()
	raw, _ := json.Marshal(args)
	out, err := c.Call(context.Background(), tool, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, raw, err)
	}
	return out
}

func contextPaths(t testing.TB, c tools.Caller, q string) []string {
	var hits []tools.ContextHit
	json.Unmarshal(callTool(t, c, tools.ReadContext, tools.ReadContextArgs{Query: q, Limit: 50}), &hits)
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Path)
	}
	return paths
}

// TestKillDuringIndexingRecovers kills the daemon with SIGKILL while it is
// indexing 2,000 files and checks that a restart ends with each file
// indexed once, with the right content hash, and nothing dead-lettered.
func TestKillDuringIndexingRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("long: indexes 2,000 files twice")
	}
	root := t.TempDir()
	want := map[string]string{}
	for i := range 2000 {
		rel := fmt.Sprintf("docs/d%02d/file%04d.md", i%40, i)
		body := fmt.Sprintf("# File %d\n\n## Part\n\nword%d %s\n", i, i, strings.Repeat("lorem ipsum dolor ", 40))
		writeFile(t, root, rel, body)
		want[rel] = events.SHA256Hex([]byte(body))
	}
	d := startUp(t, root)
	conn := connect(t, d.info.NATSURL)
	var killedAt int
	bustest.Eventually(t, 120*time.Second, "indexing under way", func() bool {
		rep, err := status.Collect(context.Background(), conn.JS)
		if err != nil || len(rep.Repos) == 0 {
			return false
		}
		killedAt = rep.Repos[0].Indexed
		return killedAt > 0
	})
	d.kill()
	conn.Close()
	t.Logf("killed with %d of 2000 indexed", killedAt)
	if killedAt >= 2000 {
		t.Log("indexing finished before the kill; the restart still has to find nothing to redo")
	}

	d = startUp(t, root)
	defer d.interrupt(t)
	conn = connect(t, d.info.NATSURL)
	var rep status.Report
	bustest.Eventually(t, 180*time.Second, "all 2000 indexed after restart", func() bool {
		var err error
		rep, err = status.Collect(context.Background(), conn.JS)
		return err == nil && len(rep.Repos) == 1 && rep.Repos[0].Indexed == 2000 && rep.IngestQueue == 0
	})
	if rep.DeadLetters != 0 || len(rep.Repos[0].Skipped) != 0 {
		t.Fatalf("after recovery: %d dead letters, skipped %v", rep.DeadLetters, rep.Repos[0].Skipped)
	}
	kv, err := conn.JS.KeyValue(context.Background(), events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k := range keys.Keys() {
		e, err := kv.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := events.DecodeDocRecord(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[rec.Path]; dup {
			t.Fatalf("%s indexed twice", rec.Path)
		}
		got[rec.Path] = rec.SHA256
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for p, sha := range want {
		if got[p] != sha {
			t.Fatalf("%s: stored hash %q, file hash %q", p, got[p], sha)
		}
	}
	// And the edge answers for them.
	caller := queryClient(t, conn, d.info.QueryPrefix)
	bustest.Eventually(t, 60*time.Second, "edge caught up", func() bool {
		p := contextPaths(t, caller, "word1999")
		return len(p) > 0 && p[0] == "docs/d39/file1999.md"
	})
}

func queryClient(t testing.TB, conn *bus.Conn, prefix string) tools.Caller {
	t.Helper()
	c, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
