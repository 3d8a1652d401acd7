package edge

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// recreateDocs deletes cue_docs and provisions it again, empty: what a
// lost NATS store or a restore onto a new cluster leaves.
func recreateDocs(t *testing.T, conn *bus.Conn) { recreateBuckets(t, conn, events.DocsBucket) }

// recreateBuckets deletes buckets and provisions them again, empty.
func recreateBuckets(t *testing.T, conn *bus.Conn, buckets ...string) {
	t.Helper()
	ctx := context.Background()
	for _, b := range buckets {
		if err := conn.JS.DeleteKeyValue(ctx, b); err != nil {
			t.Fatal(err)
		}
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

// Buckets replaced under a running edge are replayed in place: what came
// from the lost ones is discarded, the new ones are applied from their
// start, and the edge goes on running and following them; its store is
// then the new bucket's, kept by the next start.
func TestBucketReplacedUnderARunningEdgeIsReplayed(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	dir := filepath.Join(t.TempDir(), "badger")
	emb := &topics{model: testModel}
	r := openOn(t, conn, dir, Options{Embedder: emb})
	r.m.cfg.SourceCheck = 20 * time.Millisecond
	r.run()
	docs := fixtureDocs()
	r.wait(h.putAll(docs))
	r.waitVectors(h.putVectors(testModel, docs[0], chunkSpec{1, 3, "login session"}))
	if st := r.m.Status(); st.VectorDocs != 1 {
		t.Fatalf("%d documents with vectors before the buckets are replaced, want 1", st.VectorDocs)
	}
	r.waitMemories(h.putMemories(fixtureMemories()))
	rollback := map[string]any{"query": "rollback", "mode": "keyword"}
	if len(r.search(rollback)) == 0 {
		t.Fatal("the fixture is not found before the buckets are replaced")
	}
	e := r.memEdge()
	deploy := map[string]any{"query": "deploy pipeline health check", "mode": "keyword"}
	if len(searchMem(t, e, deploy)) == 0 {
		t.Fatal("the fixture memory is not found before the buckets are replaced")
	}

	recreateBuckets(t, conn, events.DocsBucket, events.MemoriesBucket, events.VectorsBucket)
	// The new buckets hold one document of the lost ones again, without
	// its vectors, and a new document with its vectors: the lost bucket's
	// vectors of the first must not come back with it.
	h.put(docs[0])
	newDoc := mdRecord("app", "docs/new.md", "# New\n\nThe only new document.\n", nil)
	rev := h.put(newDoc)
	vrev := h.putVectors(testModel, newDoc, chunkSpec{1, 3, "release rollout"})
	bustest.Eventually(t, 30*time.Second, "the edge holds the new buckets' two documents and one's vectors", func() bool {
		r.m.mu.RLock()
		startOvers := r.m.startOvers
		r.m.mu.RUnlock()
		st, feeds := r.m.Status(), r.m.Feeds()
		return startOvers == 3 && st.Docs == 2 && st.Revision == rev && feeds[0].Replayed &&
			st.VectorDocs == 1 && st.VectorRevision == vrev && feeds[2].Replayed
	})
	if hits := r.search(map[string]any{"query": "login session", "mode": "semantic"}); len(hits) != 1 || hits[0].Path != newDoc.Path {
		t.Errorf("semantic hits %v, want %s alone: the lost bucket's vectors of %s came back", paths(hits), newDoc.Path, docs[0].Path)
	}
	if hits := r.search(rollback); len(hits) != 0 {
		t.Errorf("a document of the lost bucket is still found: %v", paths(hits))
	}
	if hits := r.search(map[string]any{"query": "only new document", "mode": "keyword"}); len(hits) != 1 || hits[0].Path != "docs/new.md" {
		t.Errorf("the new bucket's document: %v, want docs/new.md alone", paths(hits))
	}
	if _, err := r.call(tools.ReadDoc, map[string]any{"path": "docs/deploy.md"}); err == nil {
		t.Error("read_doc still serves a document of the lost bucket")
	}
	bustest.Eventually(t, 30*time.Second, "the edge forgets the lost cue_memories", func() bool { return r.m.Status().Memories == 0 })
	if hits := searchMem(t, e, deploy); len(hits) != 0 {
		t.Errorf("a memory of the lost bucket is still found: %v", contents(hits))
	}
	kept := memRec("app", memory.KindFact, "Health checks run every ten seconds", "", "sess-4444dddd", "", nil, 0.7, 1, memNow)
	r.waitMemories(h.putMemory(kept))
	if hits := searchMem(t, e, map[string]any{"query": "health checks", "mode": "keyword"}); len(hits) != 1 || hits[0].Content != kept.Content {
		t.Errorf("the new bucket's memory: %v", contents(hits))
	}
	select {
	case err := <-r.done:
		t.Fatalf("the edge stopped: %v", err)
	default:
	}
	later := h.put(mdRecord("app", "docs/later.md", "# Later\n\nWritten after the replay.\n", nil))
	r.wait(later)
	r.stop()

	again := openOn(t, conn, dir, Options{Embedder: emb})
	if st := again.m.Status(); st.Docs != 3 || st.Revision != later {
		t.Fatalf("the store of the new bucket was not kept by the next start: %+v", st)
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
		if r, _ := m.checkSource(context.Background(), f); r != nil {
			t.Fatalf("a bucket that only moved on: %v", r)
		}
	}
}

// lateBucket is cue_docs as a server that announced it created answers
// for it: not found, the first few times.
type lateBucket struct {
	jetstream.KeyValue
	notYet *atomic.Int32
}

func (b lateBucket) Status(ctx context.Context) (jetstream.KeyValueStatus, error) {
	if b.notYet.Add(-1) >= 0 {
		return nil, jetstream.ErrStreamNotFound
	}
	return b.KeyValue.Status(ctx)
}

// A check the server's announcement asked for, that found the bucket not
// there yet, is made again shortly: the server announces a stream created
// before it answers for it, and that one check passing left the edge on
// the old bucket's documents until its next periodic check.
func TestAnnouncedCheckLooksAgainForABucketNotThereYet(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	h.putAll(fixtureDocs())
	st, err := bus.ReadStream(context.Background(), conn.JS, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	recreateDocs(t, conn)
	var notYet atomic.Int32
	notYet.Store(3)
	m := &Materialiser{logger: testLogger(t), srcIDs: map[string]string{events.DocsBucket: st.ID()}, recheck: make(chan struct{}, 1)}
	m.cfg.SourceCheck = time.Hour // only the announcement can bring the check on
	f := feed{bucket: events.DocsBucket, rev: func() uint64 { return 3 }, source: lateBucket{KeyValue: h.kv, notYet: &notYet}, replaced: make(chan *replaced, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.checkSourcesEvery(ctx, []feed{f})
	m.Recheck()
	select {
	case r := <-f.replaced:
		if r.bucket != events.DocsBucket {
			t.Fatalf("found %s replaced", r.bucket)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the recreated bucket was not found replaced (%d status reads still refused)", max(notYet.Load(), 0))
	}
}

// A watch goes on across its bucket deleted and created again; the
// server's announcement of it (RecheckOnReplace) has the edge compare at
// once, without waiting for its periodic check.
func TestBucketReplacedIsFoundWhenTheServerSaysSo(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	r := openOn(t, conn, filepath.Join(t.TempDir(), "badger"), Options{})
	r.m.cfg.SourceCheck = time.Hour // only the announcement can bring the check on
	stop, err := RecheckOnReplace(conn.NC, r.m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r.run()
	r.wait(h.putAll(fixtureDocs()))
	recreateDocs(t, conn)
	rev := h.put(mdRecord("app", "docs/new.md", "# New\n\nThe only document now.\n", nil))
	var st Status
	defer func() {
		if t.Failed() {
			t.Logf("the edge's state: %+v; the new document is revision %d", st, rev)
		}
	}()
	bustest.Eventually(t, 30*time.Second, "the edge holds the new cue_docs' one document", func() bool {
		st = r.m.Status()
		return st.Docs == 1 && st.Revision == rev
	})
}
