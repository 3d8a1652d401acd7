package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
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

// TestSeparateBinariesMatchCueUp runs ingest, indexer and mcp-edge as three
// processes against one nats-server and compares their answers with those
// of `cue up` on the same workspace.
func TestSeparateBinariesMatchCueUp(t *testing.T) {
	root := sampleWorkspace(t)
	writeFile(t, root, ".cuedeck/config.toml", "[workspace]\nname = \"app\"\n")

	d := startUp(t, root)
	conn := connect(t, d.info.NATSURL)
	viaUp := queryClient(t, conn, d.info.QueryPrefix)
	bustest.Eventually(t, 60*time.Second, "cue up indexed", func() bool {
		return len(contextPaths(t, viaUp, "error codes")) > 0 && len(contextPaths(t, viaUp, "login")) > 0
	})
	want := answers(t, viaUp)
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
		{bin("ingest"), "--nats", url, "--repo", "app=" + root, "--state-dir", filepath.Join(state, "ingest"), "--debounce", "50ms"},
		{bin("indexer"), "--nats", url},
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
	for k, w := range want {
		var a, b any
		json.Unmarshal(w, &a)
		json.Unmarshal(got[k], &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs:\n cue up:   %s\n separate: %s", k, w, got[k])
		}
	}
}
