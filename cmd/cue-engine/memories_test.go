package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// `cue memories` through the running daemon: a memory an agent saved is
// listed, found by a search and shown by the 12 digits the list prints;
// forgotten by them, it leaves the list and show says it is gone.
func TestMemoriesCommand(t *testing.T) {
	root := t.TempDir()
	cue(t, "init", "--workspace", root)
	d := startUp(t, root)
	defer d.kill()

	// An agent saves two memories as it would over MCP.
	var caller tools.Caller
	bustest.Eventually(t, 60*time.Second, "the daemon answers", func() bool {
		c, done, err := dialDaemon(d.info, "", "memories-test")
		if err != nil {
			return false
		}
		if _, err := callDaemonTool(c, tools.ListTasks, tools.ListTasksArgs{}); err != nil {
			done()
			return false
		}
		caller = c
		t.Cleanup(done)
		return true
	})
	var saved []tools.SaveMemoryResult
	for _, m := range []tools.SaveMemoryArgs{
		{Kind: "decision", Text: "Pin the NATS server to v2.15.2 in every image", Rationale: "the leader-election fix"},
		{Kind: "fact", Text: "The staging cluster has three nodes"},
	} {
		out, err := callDaemonTool(caller, tools.SaveMemory, m)
		if err != nil {
			t.Fatal(err)
		}
		var r tools.SaveMemoryResult
		if err := json.Unmarshal(out, &r); err != nil || r.Action != "saved" {
			t.Fatalf("save_memory: %s %v", out, err)
		}
		saved = append(saved, r)
	}
	short := saved[0].Hash[:12]

	list := cue(t, "memories", "list", "--workspace", root)
	if !strings.Contains(list, short+"  decision") || !strings.Contains(list, "Pin the NATS server to v2.15.2 in every image") || !strings.Contains(list, "three nodes") {
		t.Errorf("cue memories list:\n%s", list)
	}
	if facts := cue(t, "memories", "list", "--kind", "fact", "--workspace", root); strings.Contains(facts, short) || !strings.Contains(facts, "three nodes") {
		t.Errorf("cue memories list --kind fact:\n%s", facts)
	}
	if found := cue(t, "memories", "search", "nats", "server", "version", "--mode", "keyword", "--workspace", root); !strings.HasPrefix(found, short) {
		t.Errorf("cue memories search: the decision is not first:\n%s", found)
	}
	show := cue(t, "memories", "show", short, "--workspace", root)
	for _, want := range []string{saved[0].Hash, "rationale   the leader-election fix", "by          agent"} {
		if !strings.Contains(show, want) {
			t.Errorf("cue memories show lacks %q:\n%s", want, show)
		}
	}

	if out := cue(t, "memories", "forget", short, "--workspace", root); !strings.Contains(out, "forgot "+saved[0].Hash) {
		t.Errorf("cue memories forget: %s", out)
	}
	if list := cue(t, "memories", "list", "--json", "--workspace", root); strings.Contains(list, saved[0].Hash) || !strings.Contains(list, saved[1].Hash) {
		t.Errorf("after forget, cue memories list --json:\n%s", list)
	}
	msg, err := exec.Command(bin("cue"), "memories", "show", short, "--workspace", root).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "no such memory") {
		t.Errorf("cue memories show of a forgotten memory: %v\n%s", err, msg)
	}
	msg, err = exec.Command(bin("cue"), "memories", "search", "quantum", "teleportation", "--mode", "keyword", "--workspace", root).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "no memory matches") {
		t.Errorf("cue memories search of nothing: %v\n%s", err, msg)
	}
}
