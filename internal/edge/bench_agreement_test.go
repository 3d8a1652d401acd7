package edge

import (
	"context"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// BenchmarkStartComparison measures what a start adds to compare the
// store with cue_docs (OpenOnWith's disagreement check) for 10,000
// documents, and checks that a replayed store agrees.
func BenchmarkStartComparison(b *testing.B) {
	conn, _ := bustest.Start(b, bus.Settings{})
	ctx := context.Background()
	kv, head := fillDocsBucket(b, conn, 10_000)
	m, err := OpenOnWith(ctx, conn.JS, b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- m.Run(runCtx) }()
	if err := m.WaitRevision(ctx, head); err != nil {
		b.Fatal(err)
	}
	stop()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		entries, err := bucketEntries(ctx, kv)
		sample, n, err := m.disagreement(ctx, kv, entries, err)
		if err != nil || n != 0 {
			b.Fatalf("%d documents disagree (%v), %v", n, sample, err)
		}
	}
}
