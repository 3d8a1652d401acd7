package main

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// TestMCPWaitsForADaemonAnotherProcessIsStarting: Claude Code starts its
// session hook (which starts the daemon) and `cue mcp` at once, so the
// daemon `cue mcp` starts can lose the lock to one still starting. It must
// wait for that one rather than fail.
func TestMCPWaitsForADaemonAnotherProcessIsStarting(t *testing.T) {
	root := sampleWorkspace(t)
	ws := &workspace.Workspace{Root: root}
	lock, err := ws.AcquireLock() // a daemon that is starting
	if err != nil {
		t.Fatal(err)
	}
	mcp := exec.Command(bin("cue"), "mcp", "--workspace", root)
	stdin, _ := mcp.StdinPipe()
	stdout, _ := mcp.StdoutPipe()
	var stderr logtest.Buffer
	mcp.Stderr = &stderr
	if err := mcp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mcp.Process.Kill(); mcp.Wait() }()
	bustest.Eventually(t, 60*time.Second, "cue mcp says it waits for the starting daemon", func() bool {
		return strings.Contains(stderr.String(), "is starting this workspace's daemon; waiting for it")
	})
	// The starting daemon gets ready.
	lock.Release()
	d := startUp(t, root)
	defer d.kill()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"result"`) || !strings.Contains(line, `"id":1`) {
		t.Fatalf("cue mcp after waiting: %q, %v\nstderr:\n%s", line, err, stderr.String())
	}
}
