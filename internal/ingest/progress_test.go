package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestScanProgressIsPublished holds the first scan back with a full ingest
// stream: its record says how many files it found before it could publish
// them all, and says it is done, with every file handled, once workers
// drain the stream.
func TestScanProgressIsPublished(t *testing.T) {
	// Room for a few events only: publishers wait for the workers.
	conn, _ := bustest.Start(t, bus.Settings{IngestMaxBytes: 4 << 10})
	dir := t.TempDir()
	const files = 30
	tree := map[string]string{}
	for i := range files {
		tree[fmt.Sprintf("docs/f%02d.md", i)] = fmt.Sprintf("# File %d\n\n%s\n", i, strings.Repeat("words ", 60))
	}
	writeTree(t, dir, tree)
	svc, err := ingest.New(conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}), nil)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "ingest", svc.Run)
	scans, err := conn.JS.KeyValue(context.Background(), events.ScansBucket)
	if err != nil {
		t.Fatal(err)
	}
	read := func() events.ScanProgress {
		var p events.ScanProgress
		if e, err := scans.Get(context.Background(), "app"); err == nil {
			_ = json.Unmarshal(e.Value(), &p)
		}
		return p
	}
	var held events.ScanProgress
	bustest.Eventually(t, within, "a running scan's progress", func() bool {
		held = read()
		return held.Scanning && held.Files == files
	})
	if held.Repo != "app" || held.Unpublished() == 0 || held.Unpublished() > files {
		t.Fatalf("held scan: %+v", held)
	}

	got := collect(t, conn)
	bustest.Eventually(t, 60*time.Second, "the scan done with every file handled", func() bool {
		p := read()
		return !p.Scanning && p.Files == files && p.Handled == files && p.Unpublished() == 0
	})
	got.waitCount(t, files)
	if n := len(got.all()); n != files {
		t.Errorf("%d events, want %d", n, files)
	}
}
