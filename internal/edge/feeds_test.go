package edge

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Feeds reports each followed bucket's progress, and BeforeApply sees every
// entry of a replay before it is applied.
func TestFeedsReportProgressAndBeforeApplySeesBatches(t *testing.T) {
	h := newHarness(t)
	h.emb = hashEmbedder{}
	var rev uint64
	for _, rec := range fixtureDocs() {
		rev = h.put(rec)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	m, err := Open(Config{Docs: h.kv, Blobs: h.obs, Vectors: h.vkv, Memories: h.mkv, Embedder: h.emb, Logger: testLogger(t),
		BeforeApply: func(_ context.Context, bucket string, entries int) {
			mu.Lock()
			seen[bucket] += entries
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	before := m.Feeds()
	if len(before) != 3 || before[0].Bucket != events.DocsBucket || before[1].Bucket != events.MemoriesBucket || before[2].Bucket != events.VectorsBucket {
		t.Fatalf("Feeds = %+v; want cue_docs, cue_memories, cue_vectors", before)
	}
	if before[0].Replayed || !before[0].LastApplied.IsZero() || before[2].GatesReady || before[2].Keys != events.VectorKeyPrefix(h.emb.ModelID()) {
		t.Fatalf("before Run: %+v", before)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-m.Ready()
	if err := m.WaitRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	docs := m.Feeds()[0]
	if !docs.Replayed || !docs.GatesReady || docs.Keys != ">" || docs.Revision != rev || docs.LastApplied.IsZero() {
		t.Fatalf("cue_docs after its replay: %+v (revision %d)", docs, rev)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[events.DocsBucket] != len(fixtureDocs()) {
		t.Fatalf("BeforeApply saw %d cue_docs entries, want %d", seen[events.DocsBucket], len(fixtureDocs()))
	}
}

// Applying documents is foreground work the embedder waits for; applying
// the vectors the embedder wrote is not.
func TestApplyingDocumentsButNotVectorsHoldsTheGate(t *testing.T) {
	h := newHarness(t)
	h.emb = hashEmbedder{}
	gate := priority.New(time.Millisecond)
	m, err := Open(Config{Docs: h.kv, Blobs: h.obs, Vectors: h.vkv, Memories: h.mkv, Embedder: h.emb, Logger: testLogger(t), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-m.Ready()
	rec := mdRecord("app", "docs/a.md", "# A\n\nalpha\n", nil)
	rev := h.put(rec)
	if err := m.WaitRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	afterDocs, _ := gate.Quiet(0)
	if afterDocs == 0 {
		t.Fatal("applying a document did not count as foreground work")
	}
	vrev := h.putVectors(h.emb.ModelID(), rec, chunkSpec{1, 3, "alpha"})
	if err := m.WaitVectorRevision(ctx, vrev); err != nil {
		t.Fatal(err)
	}
	if n, _ := gate.Quiet(0); n != afterDocs {
		t.Fatalf("applying vectors began %d pieces of foreground work", n-afterDocs)
	}
}
