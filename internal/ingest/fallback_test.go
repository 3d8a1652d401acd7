package ingest_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestWatchFailureFallsBackToRescans(t *testing.T) {
	restore := ingest.BreakWatching(errors.New("too many open files"))
	defer restore()
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "a", "b.md": "b"})
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	cfg.PollInterval = 100 * time.Millisecond
	run := start(t, conn, cfg)
	got.waitCount(t, 2)
	if st := repoStats(t, run.svc, "app"); st.Watching {
		t.Errorf("stats say watching: %+v", st)
	}

	writeTree(t, dir, map[string]string{"a.md": "changed"})
	if err := os.Remove(filepath.Join(dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	got.waitFor(t, "edit found by a rescan", func(r received) bool {
		up, ok := r.Event.(events.FileUpserted)
		return ok && up.Path == "a.md" && up.Content == "changed"
	})
	got.waitFor(t, "deletion found by a rescan", func(r received) bool {
		return r.path() == "b.md" && r.Event.EventKind() == events.KindFileDeleted
	})
}
