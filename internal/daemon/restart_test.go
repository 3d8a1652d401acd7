package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// A daemon restarted with nothing changed says what it does while it
// starts, loads the keyword index the clean stop saved instead of
// analysing every document again, and answers as before.
func TestCleanRestartSaysWhatItDoesAndReusesTheKeywordIndex(t *testing.T) {
	root := t.TempDir()
	for _, f := range []struct{ path, text string }{
		{"docs/release.md", "# Releasing\n\n## Rollback\n\nRoll back with the previous tag.\n"},
		{"docs/login.md", "# Login\n\nThe login flow issues a session token.\n"},
		{"cmd/serve.go", "package main\n\n// serve answers login requests.\nfunc serve() {}\n"},
	} {
		write(t, root, f.path, f.text)
	}
	noModel := func(c *workspace.Config) { c.Embed.Model = "none" }
	first := startNode(t, root, noModel)
	bustest.Eventually(t, 30*time.Second, "every file findable", func() bool {
		return first.finds(t, "rollback", "docs/release.md") && first.finds(t, "serve", "cmd/serve.go")
	})
	queries := []string{"rollback", "login token", "serve"}
	answers := func(n *node) string {
		var b strings.Builder
		for _, q := range queries {
			out, _ := json.Marshal(n.readContext(t, q))
			b.Write(out)
		}
		return b.String()
	}
	want := answers(first)
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	var log logtest.Buffer
	second := startNodeLogged(t, root, noModel, slog.New(slog.NewTextHandler(&log, nil)))
	for _, line := range []string{"starting: starting the NATS server", "starting: reading the stored documents", "saved_keyword_index=true"} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("the restart's log lacks %q", line)
		}
	}
	if _, err := os.Stat(second.ws.StartingPath()); !os.IsNotExist(err) {
		t.Errorf("a ready daemon left its starting line (%v)", err)
	}
	if got := answers(second); got != want {
		t.Fatalf("after the restart:\n%s\nbefore:\n%s", got, want)
	}
}

func TestHeapLimitFollowsTheLiveHeapAboveAFloor(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one setting, then return
	limitHeap(ctx, slog.New(slog.DiscardHandler))
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := int64(sample[0].Value.Uint64())
	want := max(int64(heapFloor), live+live*heapGrowthPct/100)
	if got := debug.SetMemoryLimit(-1); got < int64(heapFloor) || got > want+want/10 {
		t.Fatalf("memory limit %d MiB; live heap %d MiB, floor %d MiB", got>>20, live>>20, heapFloor>>20)
	}
}
