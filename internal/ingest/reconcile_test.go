package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// docState is a document as cue_docs holds it: its content hash, or
// "deleted", or "" when the bucket has no live entry.
func docState(conn *bus.Conn, repo, path string) string {
	kv, err := conn.JS.KeyValue(context.Background(), events.DocsBucket)
	if err != nil {
		return ""
	}
	e, err := kv.Get(context.Background(), events.DocKey(repo, path))
	if err != nil {
		return ""
	}
	rec, err := events.DecodeDocRecord(e.Value())
	switch {
	case err != nil:
		return ""
	case rec.Deleted:
		return "deleted"
	}
	return rec.SHA256
}

// Ingest's state says every file is published; cue_docs says otherwise.
// At start ingest believes cue_docs: what it lacks or holds at other
// content is published again, a document of no file is deleted.
func TestIngestRepublishesWhatCueDocsLost(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	runBG(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	dir := t.TempDir()
	files := map[string]string{"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n", "d.md": "# D\n"}
	writeTree(t, dir, files)
	cfg := config(t, ingest.RepoConfig{Name: "r", Root: dir})
	first := start(t, conn, cfg)
	want := map[string]string{}
	for p, c := range files {
		want[p] = events.SHA256Hex([]byte(c))
	}
	bustest.Eventually(t, within, "every file in cue_docs", func() bool {
		for p, sha := range want {
			if docState(conn, "r", p) != sha {
				return false
			}
		}
		return true
	})
	first.stop()

	// The damage: b's document lost, c's rolled back to other content, a
	// document for a file that never existed (written the way entries
	// were before they carried summaries).
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, events.DocKey("r", "b.md")); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []events.DocRecord{
		{Repo: "r", Path: "c.md", SHA256: events.SHA256Hex([]byte("# C, long ago\n")), Content: "# C, long ago\n", SourceSeq: 1},
		{Repo: "r", Path: "ghost.md", SHA256: events.SHA256Hex([]byte("# Ghost\n")), Content: "# Ghost\n", SourceSeq: 1},
	} {
		b, err := events.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, events.DocKey(rec.Repo, rec.Path), b); err != nil {
			t.Fatal(err)
		}
	}

	// And d edited meanwhile: published as a change, where b and c are
	// published again as they were (FileUpserted.Repeat).
	writeTree(t, dir, map[string]string{"d.md": "# D, edited\n"})
	want["d.md"] = events.SHA256Hex([]byte("# D, edited\n"))
	published := make(chan events.FileUpserted, 16)
	sub, err := conn.NC.Subscribe(events.FileSubject("r"), func(m *nats.Msg) {
		if ev, err := events.Decode(m.Data); err == nil {
			if up, ok := ev.(events.FileUpserted); ok {
				published <- up
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	second := start(t, conn, cfg)
	rec, ok := second.svc.StartReconcile()
	if !ok || rec.Files != 4 || rec.Stale != 2 || rec.Orphans != 1 || rec.StreamReplaced {
		t.Fatalf("reconcile: %+v (ran: %v); want 4 files, 2 stale (b, c), 1 unrecorded (ghost)", rec, ok)
	}
	repeats := map[string]bool{}
	for len(repeats) < 3 {
		select {
		case up := <-published:
			repeats[up.Path] = up.Repeat
		case <-time.After(within):
			t.Fatalf("published %v; want b.md, c.md and d.md", repeats)
		}
	}
	if !repeats["b.md"] || !repeats["c.md"] || repeats["d.md"] {
		t.Fatalf("published with Repeat: %v; want b.md and c.md repeated, d.md as a change", repeats)
	}
	repaired := func() bool {
		for p, sha := range want {
			if docState(conn, "r", p) != sha {
				return false
			}
		}
		return docState(conn, "r", "ghost.md") == "deleted"
	}
	t.Cleanup(func() {
		if !repaired() {
			for _, p := range []string{"a.md", "b.md", "c.md", "d.md", "ghost.md"} {
				t.Logf("%s: %q (want %q)", p, docState(conn, "r", p), want[p])
			}
		}
	})
	t.Logf("stats: %+v", repoStats(t, second.svc, "r"))
	bustest.Eventually(t, within, "cue_docs repaired", repaired)
	second.stop()

	// Once repaired, a restart finds nothing to do.
	third := start(t, conn, cfg)
	if rec, _ := third.svc.StartReconcile(); rec.Stale != 0 || rec.Orphans != 0 {
		t.Fatalf("a second reconcile found %+v", rec)
	}
}

// The NATS store is lost (a new, empty server) while ingest keeps its
// state: every file is published again into the new streams.
func TestIngestRepublishesEverythingIntoANewStore(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.md": "# A\n", "docs/b.md": "# B\n"}
	writeTree(t, dir, files)
	stateDir := t.TempDir()
	cfg := ingest.Config{Repos: []ingest.RepoConfig{{Name: "r", Root: dir}}, StateDir: stateDir}

	old, _ := bustest.Start(t, bus.Settings{})
	runBG(t, "indexer", indexer.New(old, indexer.Config{}, nil).Run)
	first := start(t, old, cfg)
	bustest.Eventually(t, within, "indexed in the first store", func() bool {
		return docState(old, "r", "docs/b.md") != ""
	})
	first.stop()

	fresh, _ := bustest.Start(t, bus.Settings{})
	runBG(t, "indexer", indexer.New(fresh, indexer.Config{}, nil).Run)
	second := start(t, fresh, cfg)
	rec, _ := second.svc.StartReconcile()
	if !rec.StreamReplaced || rec.Stale != len(files) {
		t.Fatalf("reconcile against a new store: %+v", rec)
	}
	bustest.Eventually(t, within, "every file in the new store", func() bool {
		for p, c := range files {
			if docState(fresh, "r", p) != events.SHA256Hex([]byte(c)) {
				return false
			}
		}
		return true
	})
}

// A document lost from cue_docs while ingest runs comes back at the next
// periodic comparison, without any change to its file.
func TestIngestRepublishesWhatCueDocsLosesWhileRunning(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	runBG(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "# A\n", "b.md": "# B\n"})
	cfg := config(t, ingest.RepoConfig{Name: "r", Root: dir})
	cfg.ReconcileEvery = 50 * time.Millisecond
	start(t, conn, cfg)
	want := events.SHA256Hex([]byte("# B\n"))
	bustest.Eventually(t, within, "b indexed", func() bool { return docState(conn, "r", "b.md") == want })
	kv, err := conn.JS.KeyValue(context.Background(), events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	// Lost twice in one run (a bucket restored, then lost again): the
	// second republish must not be taken for a duplicate of the first.
	for loss := 1; loss <= 2; loss++ {
		if err := kv.Purge(context.Background(), events.DocKey("r", "b.md")); err != nil {
			t.Fatal(err)
		}
		bustest.Eventually(t, within, fmt.Sprintf("b back in cue_docs after loss %d", loss), func() bool { return docState(conn, "r", "b.md") == want })
	}
}

// cue_docs deleted and created again under a running ingest (a team's
// cluster bucket recreated): on the server's word, ingest compares the
// files with the new bucket once it has settled, and publishes every
// file into it, rather than at its next periodic comparison.
func TestIngestRefillsAReplacedCueDocsOnTheServersWord(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	runBG(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	dir := t.TempDir()
	files := map[string]string{"a.md": "# A\n", "docs/b.md": "# B\n", "c.go": "package c\n"}
	writeTree(t, dir, files)
	cfg := config(t, ingest.RepoConfig{Name: "r", Root: dir})
	cfg.ReconcileEvery = time.Hour // only the announcement can bring the comparison on
	cfg.Settle = ingest.Settle{Poll: 20 * time.Millisecond, Quiet: 100 * time.Millisecond, Most: 10 * time.Second}
	ing := start(t, conn, cfg)
	stop, err := bus.OnStreamReplaced(conn.NC, ing.svc.StreamReplaced, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	all := func() bool {
		for p, c := range files {
			if docState(conn, "r", p) != events.SHA256Hex([]byte(c)) {
				return false
			}
		}
		return true
	}
	bustest.Eventually(t, within, "every file indexed", all)
	ctx := context.Background()
	if err := conn.JS.DeleteKeyValue(ctx, events.DocsBucket); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within, "every file in the recreated cue_docs", all)
}
