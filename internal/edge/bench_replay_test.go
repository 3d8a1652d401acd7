package edge

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// BenchmarkReplayFromBucket times what an edge whose store was discarded
// (lost, damaged, or built from another bucket) does: open an empty store
// on cue_docs holding 10,000 documents and replay them until ready.
func BenchmarkReplayFromBucket(b *testing.B) {
	const docs = 10000
	conn, _ := bustest.Start(b, bus.Settings{})
	ctx := context.Background()
	fillDocsBucket(b, conn, docs)
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		m, err := OpenOnWith(ctx, conn.JS, filepath.Join(b.TempDir(), "badger"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(rctx) }()
		<-m.Ready()
		took += time.Since(start)
		if n := m.Status().Docs; n != docs {
			b.Fatalf("replayed %d docs", n)
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docs)*float64(b.N)/took.Seconds(), "docs/s")
}

// fillDocsBucket puts n markdown documents of repo "app" into cue_docs
// and returns the bucket and its last revision.
func fillDocsBucket(b *testing.B, conn *bus.Conn, n int) (jetstream.KeyValue, uint64) {
	b.Helper()
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		b.Fatal(err)
	}
	var head uint64
	for i := range n {
		rec := mdRecord("app", fmt.Sprintf("docs/area%d/doc%d.md", i%40, i),
			fmt.Sprintf("# Doc %d\n\nThe harrier%d flies over area %d.\n\n## Notes\n\nNothing more about %d.\n", i, i, i%40, i), nil)
		data, err := events.Encode(rec)
		if err != nil {
			b.Fatal(err)
		}
		if head, err = kv.Put(ctx, events.DocKey(rec.Repo, rec.Path), data); err != nil {
			b.Fatal(err)
		}
	}
	return kv, head
}
