package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
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
	limitHeap(ctx, slog.New(slog.DiscardHandler), 0)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := int64(sample[0].Value.Uint64())
	want := max(int64(heapFloor), live+live*heapGrowthPct/100)
	if got := debug.SetMemoryLimit(-1); got < int64(heapFloor) || got > want+want/10 {
		t.Fatalf("memory limit %d MiB; live heap %d MiB, floor %d MiB", got>>20, live>>20, heapFloor>>20)
	}
}

func TestHeapSettingsHoldWhileTheDaemonRunsAndAreRestoredAfter(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	const outside = 150
	defer debug.SetGCPercent(debug.SetGCPercent(outside))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	stop := limitHeapFromStart(context.Background(), slog.New(slog.DiscardHandler))
	if got := debug.SetGCPercent(gcPercent); got != gcPercent {
		t.Errorf("GC percent %d while running, want %d", got, gcPercent)
	}
	// The limit is set at once, not at limitHeap's first tick.
	if got := debug.SetMemoryLimit(-1); got < int64(heapFloor) || got == math.MaxInt64 {
		t.Errorf("memory limit %d while running, want at least the floor %d", got, int64(heapFloor))
	}
	stop()
	if got := debug.SetGCPercent(outside); got != outside {
		t.Errorf("GC percent %d after stop, want the earlier %d", got, outside)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d after stop, want the earlier setting", got)
	}

	// A user's GOGC or GOMEMLIMIT is theirs.
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	stop = limitHeapFromStart(context.Background(), slog.New(slog.DiscardHandler))
	if got := debug.SetGCPercent(outside); got != outside {
		t.Errorf("GC percent %d under GOGC=100, want it untouched (%d)", got, outside)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d under GOMEMLIMIT, want it untouched", got)
	}
	stop()
}
