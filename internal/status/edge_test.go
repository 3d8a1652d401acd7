package status_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// serveEdge answers the query service's endpoints from m until the test
// ends, and returns a client of them.
func serveEdge(t *testing.T, conn *bus.Conn, m *edge.Materialiser, prefix string) *query.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- query.Serve(ctx, conn.NC, edge.New(m, nil), query.Options{Prefix: prefix, Docs: m.DocSets, Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	c, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The comparison of an edge with cue_docs: agreeing after a replay;
// disagreeing, with counts and the remedy, once the edge's store has lost
// a document at its revision; not made while the edge lags the bucket.
func TestCompareEdgeWithTheBucket(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	docs, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(path, content string) uint64 {
		t.Helper()
		data, err := events.Encode(events.DocRecord{Repo: "r", Path: path, SHA256: events.SHA256Hex([]byte(content)), SourceSeq: 1, Content: content, Kind: "doc"})
		if err != nil {
			t.Fatal(err)
		}
		rev, err := docs.Put(ctx, events.DocKey("r", path), data)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	put("a.md", "# A\n")
	put("b.md", "# B\n")
	head := put("c.md", "# C\n")

	dir := t.TempDir()
	live, err := edge.OpenOnWith(ctx, conn.JS, dir, edge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- live.Run(runCtx) }()
	if err := live.WaitRevision(ctx, head); err != nil {
		t.Fatal(err)
	}
	a, err := status.CompareEdge(ctx, conn.JS, serveEdge(t, conn, live, "cue.query.live"), []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Moving || a.Revision != head || len(a.Repos) != 1 || !a.Repos[0].Agree || a.Repos[0].Bucket != 3 || a.Repos[0].Edge != 3 {
		t.Fatalf("a replayed edge: %+v", a)
	}
	var out bytes.Buffer
	(status.Report{Edge: &a}).Print(&out, status.PrintOptions{})
	if !strings.Contains(out.String(), "serves the 3 documents cue_docs holds") {
		t.Errorf("printed:\n%s", out.String())
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}

	// A write the store lost, its revision kept: what an edge that
	// diverged while it ran looks like (at start it would compare itself).
	store, err := edge.OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply([]edge.Change{{Key: events.DocKey("r", "b.md"), Rev: head}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	damaged, err := edge.Open(edge.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer damaged.Close()
	client := serveEdge(t, conn, damaged, "cue.query.damaged")
	a, err = status.CompareEdge(ctx, conn.JS, client, []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	bad := a.Disagreeing()
	if a.Moving || len(bad) != 1 || bad[0].Bucket != 3 || bad[0].Edge != 2 {
		t.Fatalf("an edge that lost a document: %+v", a)
	}
	out.Reset()
	(status.Report{Edge: &a}).Print(&out, status.PrintOptions{})
	for _, want := range []string{"ERROR repo r: cue_docs holds 3 indexed documents, the edge serves 2", "at start the edge compares its store with cue_docs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed %q, want %q", out.String(), want)
		}
	}

	// The bucket moves on and this edge does not follow: nothing is
	// compared, and the wait ends with the caller's deadline.
	put("d.md", "# D\n")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	a, err = status.CompareEdge(short, conn.JS, client, []string{"r"})
	if err != nil || !a.Moving {
		t.Fatalf("an edge behind the bucket: %+v, %v", a, err)
	}
}
