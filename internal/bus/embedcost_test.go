package bus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestEmbedCostAddsEveryWritersCounts(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.EmbedCostBucket)
	if err != nil {
		t.Fatal(err)
	}
	const model, writers, adds = "builtin:use-lite", 8, 20
	start := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, writers*adds)
	for w := range writers {
		wg.Go(func() {
			for a := range adds {
				at := start.Add(time.Duration(w*adds+a) * time.Second)
				errs <- bus.AddEmbedCost(ctx, kv, events.EmbedCost{Model: model, Chunks: 3, Texts: 4,
					CPUSeconds: 0.5, MeteredChunks: 3, CallSeconds: 0.25, Since: at, Updated: at})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, rev, err := bus.ReadEmbedCost(ctx, kv, model)
	if err != nil || rev == 0 {
		t.Fatalf("read: rev %d, %v", rev, err)
	}
	n := uint64(writers * adds)
	if got.Chunks != 3*n || got.Texts != 4*n || got.MeteredChunks != 3*n || got.CPUSeconds != 0.5*float64(n) || got.CallSeconds != 0.25*float64(n) {
		t.Fatalf("after %d adds: %+v", n, got)
	}
	if !got.Since.Equal(start) || !got.Updated.Equal(start.Add(time.Duration(n-1)*time.Second)) {
		t.Fatalf("since %v, updated %v", got.Since, got.Updated)
	}
	if per, ok := got.CPUPer10kChunks(); !ok || per < 1666.6 || per > 1666.7 {
		t.Fatalf("per 10,000 chunks: %v %v", per, ok)
	}
}

func TestEmbedCostStartsAgainFromADamagedRecord(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.EmbedCostBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, events.ModelKey("m"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if err := bus.AddEmbedCost(ctx, kv, events.EmbedCost{Model: "m", Chunks: 2}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := bus.ReadEmbedCost(ctx, kv, "m"); err != nil || got.Chunks != 2 || got.Model != "m" {
		t.Fatalf("%+v %v", got, err)
	}
}
