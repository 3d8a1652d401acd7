package edge

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// recreateDocs deletes cue_docs and provisions it again, empty: what a
// lost NATS store or a restore onto a new cluster leaves.
func recreateDocs(t *testing.T, conn *bus.Conn) {
	t.Helper()
	ctx := context.Background()
	if err := conn.JS.DeleteKeyValue(ctx, events.DocsBucket); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
}

func openOn(t *testing.T, conn *bus.Conn, dir string, opts Options) *running {
	t.Helper()
	opts.Logger = testLogger(t)
	m, err := OpenOnWith(context.Background(), conn.JS, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{t: t, m: m, e: New(m, testLogger(t))}
	t.Cleanup(func() {
		if r.done == nil {
			m.Close()
		}
	})
	return r
}

// An edge whose store was built from a cue_docs that is gone must not
// answer from it: it discards the store and replays the new bucket.
func TestStoreOfALostBucketIsDiscarded(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	dir := filepath.Join(t.TempDir(), "badger")

	first := openOn(t, conn, dir, Options{})
	first.run()
	first.wait(h.putAll(fixtureDocs()))
	first.stop()

	recreateDocs(t, conn)
	rev := h.put(mdRecord("app", "docs/new.md", "# New\n\nThe only document now.\n", nil))

	second := openOn(t, conn, dir, Options{})
	if st := second.m.Status(); st.Docs != 0 || st.Revision != 0 {
		t.Fatalf("the store of the lost bucket was kept: %+v", st)
	}
	second.run()
	second.wait(rev)
	if st := second.m.Status(); st.Docs != 1 {
		t.Fatalf("after the replay: %+v, want the new bucket's one document", st)
	}
	if hits := second.search(map[string]any{"query": "rollback", "mode": "keyword"}); len(hits) != 0 {
		t.Fatalf("a document of the lost bucket is still found: %v", paths(hits))
	}
	second.stop()

	// The same bucket again: the store is kept and resumed.
	third := openOn(t, conn, dir, Options{})
	if st := third.m.Status(); st.Docs != 1 || st.Revision != rev {
		t.Fatalf("a store of the current bucket was not kept: %+v", st)
	}
}

// A store that reached further than the bucket now goes (the bucket was
// restored from an older backup, or lost its tail) is discarded too.
func TestStoreAheadOfItsBucketIsDiscarded(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	dir := filepath.Join(t.TempDir(), "badger")
	first := openOn(t, conn, dir, Options{})
	first.run()
	rev := h.putAll(fixtureDocs())
	first.wait(rev)
	first.stop()

	src, err := ReadSources(context.Background(), conn.JS, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	behind := src[events.DocsBucket]
	behind.LastSeq = rev - 2
	m, err := Open(Config{Dir: dir, Docs: h.kv, Blobs: h.obs, Logger: testLogger(t), Sources: Sources{events.DocsBucket: behind}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if st := m.Status(); st.Docs != 0 || st.Revision != 0 {
		t.Fatalf("a store ahead of its bucket was kept: %+v", st)
	}
}

// A bucket replaced under a running edge stops it with an error that says
// to restart it, rather than leaving it answering for the lost bucket.
func TestBucketReplacedUnderARunningEdgeStopsIt(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	m, err := OpenOnWith(context.Background(), conn.JS, filepath.Join(t.TempDir(), "badger"), Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	m.cfg.SourceCheck = 20 * time.Millisecond
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- m.Run(ctx) }()
	rev := h.putAll(fixtureDocs())
	if err := m.WaitRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	recreateDocs(t, conn)
	select {
	case err := <-done:
		if !errors.Is(err, ErrSourceReplaced) {
			t.Fatalf("Run ended with %v, want ErrSourceReplaced", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the edge kept running on a replaced bucket")
	}
}

// racingBucket is cue_docs with an entry applied while its state is read,
// as a running edge applies entries while it checks its source.
type racingBucket struct {
	jetstream.KeyValue
	h       *harness
	applied *atomic.Uint64
}

func (b racingBucket) Status(ctx context.Context) (jetstream.KeyValueStatus, error) {
	st, err := b.KeyValue.Status(ctx)
	b.applied.Store(b.h.put(mdRecord("app", "docs/late.md", "# Late\n", nil)))
	return st, err
}

// An entry applied between reading the bucket's state and the check is not
// the bucket ending before the store: a running edge with embeddings once
// stopped itself that way.
func TestSourceCheckIgnoresEntriesAppliedMeanwhile(t *testing.T) {
	h := newHarness(t)
	var applied atomic.Uint64
	applied.Store(h.putAll(fixtureDocs()))
	m := &Materialiser{logger: testLogger(t), srcIDs: map[string]string{}}
	f := feed{bucket: events.DocsBucket, rev: applied.Load, source: racingBucket{KeyValue: h.kv, h: h, applied: &applied}}
	for range 3 {
		if err := m.checkSource(context.Background(), f); err != nil {
			t.Fatalf("a bucket that only moved on: %v", err)
		}
	}
}
