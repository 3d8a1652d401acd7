package edge

import (
	"context"
	"fmt"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// BenchmarkStartComparison measures what a start adds to compare the
// store with cue_docs (OpenOnWith's disagreement check) for 10,000
// documents, and checks that a replayed store agrees.
func BenchmarkStartComparison(b *testing.B) {
	const docs = 10_000
	conn, _ := bustest.Start(b, bus.Settings{})
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		b.Fatal(err)
	}
	var head uint64
	for i := range docs {
		path := fmt.Sprintf("pkg/p%03d/f%d.go", i%300, i)
		content := fmt.Sprintf("package p\n\n// F%d does its part.\nfunc F%d() int { return %d }\n", i, i, i)
		data, err := events.Encode(events.DocRecord{Repo: "r", Path: path, SHA256: events.SHA256Hex([]byte(content)), SourceSeq: uint64(i + 1), Content: content, Kind: "code"})
		if err != nil {
			b.Fatal(err)
		}
		if head, err = kv.Put(ctx, events.DocKey("r", path), data); err != nil {
			b.Fatal(err)
		}
	}
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
		sample, n, err := m.disagreement(ctx, kv)
		if err != nil || n != 0 {
			b.Fatalf("%d documents disagree (%v), %v", n, sample, err)
		}
	}
}
