package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

func TestUpRebuildsACacheOfAnOlderFormat(t *testing.T) {
	root := sampleWorkspace(t)
	ws := &workspace.Workspace{Root: root}
	// A cache from before formats were recorded, with edge state this
	// binary could not open: were it not moved aside, Badger would fail.
	writeFile(t, root, ".cuedeck/.cache/state/edge/MANIFEST", "not a badger manifest")
	d := startUp(t, root)
	defer d.kill()
	entries, err := os.ReadDir(ws.Cache())
	if err != nil {
		t.Fatal(err)
	}
	var aside string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "format0-") {
			aside = filepath.Join(ws.Cache(), e.Name())
		}
	}
	if b, err := os.ReadFile(filepath.Join(aside, "state", "edge", "MANIFEST")); aside == "" || err != nil || string(b) != "not a badger manifest" {
		t.Fatalf("old state not moved aside (dir %q, %v)", aside, err)
	}
	if b, _ := os.ReadFile(ws.FormatPath()); string(b) != strconv.Itoa(version.DataFormat)+"\n" {
		t.Fatalf("format marker %q", b)
	}
	// And it works: the rebuilt edge answers.
	conn := connect(t, d.info.NATSURL)
	c := queryClient(t, conn, d.info.QueryPrefix)
	bustest.Eventually(t, 60*time.Second, "read_context finds docs/auth.md after the rebuild", func() bool {
		return slices.Contains(contextPaths(t, c, "OAuth tokens"), "docs/auth.md")
	})
	d.interrupt(t) // the log is complete once cue up has exited
	if !strings.Contains(d.log.String(), "older data format") || !strings.Contains(d.log.String(), aside) {
		t.Fatalf("cue up did not say what it moved:\n%s", d.log)
	}
}

func TestNewerCacheFormatIsRefusedByUpAndMCP(t *testing.T) {
	root := sampleWorkspace(t)
	newer := strconv.Itoa(version.DataFormat + 1)
	writeFile(t, root, ".cuedeck/.cache/FORMAT", newer+"\n")
	writeFile(t, root, ".cuedeck/.cache/state/edge/db", "newer state")
	for _, args := range [][]string{{"up"}, {"mcp"}} {
		cmd := exec.Command(bin("cue"), append(args, "--workspace", root)...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("cue %s over a newer cache succeeded:\n%s", args[0], out)
		}
		for _, part := range []string{"written by a newer CueDeck (data format " + newer, "cue upgrade"} {
			if !strings.Contains(string(out), part) {
				t.Errorf("cue %s: output does not say %q:\n%s", args[0], part, out)
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".cuedeck/.cache"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "FORMAT,state" {
		t.Fatalf("refused commands touched the cache: %v", names)
	}
}
