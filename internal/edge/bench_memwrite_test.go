package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// memoryBenchSize is how many memories BenchmarkSaveMemory writes:
// CUE_MEMORY_BENCH_SIZE, default 10,000 (the figures are at 10k
// and 100k; make test's smoke run sets a few hundred).
func memoryBenchSize() int {
	if n, err := strconv.Atoi(os.Getenv("CUE_MEMORY_BENCH_SIZE")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

// BenchmarkSaveMemory saves memories through save_memory as agents do —
// an edge over an embedded JetStream that fsyncs every write, 32 clients
// at once — until the bucket holds memoryBenchSize, then measures
// search_memories by keyword over them. It reports saves/s (from the
// first call to the edge having applied the last write) and the search's
// p50 and p99.
func BenchmarkSaveMemory(b *testing.B) {
	n := memoryBenchSize()
	recs := memoryCorpus(n)
	for b.Loop() {
		conn, _ := bustest.StartDurable(b, bus.Settings{})
		h := harnessOn(b, conn)
		r := h.start("")
		st := memstore.NewStore(h.mkv, clock.System{})
		st.SetDurable(conn.Durable)
		e := New(r.m, nil, WithDefaultRepo("app"), WithMemoryStore(st))
		ctx := context.Background()

		const clients = 32
		var next atomic.Int64
		var failed atomic.Value
		start := time.Now()
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					rec := recs[i]
					args, _ := json.Marshal(tools.SaveMemoryArgs{Kind: string(rec.Kind), Text: rec.Content, Rationale: rec.Rationale,
						Files: rec.FilesTouched, Repo: rec.Repo})
					if _, err := e.Call(ctx, tools.SaveMemory, args); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		if count, _, _ := r.m.memoryCounts(); count != n {
			b.Fatalf("%d memories on the edge, want %d", count, n)
		}
		took := time.Since(start)
		b.ReportMetric(float64(n)/took.Seconds(), "saves/s")

		var lat stats.LatencySummary
		for i := range 500 {
			ws := strings.Fields(recs[(i*97)%n].Content)
			args := json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":10,"mode":"keyword"}`, strings.Join(ws[:2+i%2], " ")))
			t0 := time.Now()
			if _, err := e.Call(ctx, tools.SearchMemories, args); err != nil {
				b.Fatal(err)
			}
			lat.RecordDuration(time.Since(t0))
		}
		b.ReportMetric(float64(n), "memories")
		b.ReportMetric(lat.Percentile(50), "search-p50-ms")
		b.ReportMetric(lat.Percentile(99), "search-p99-ms")
	}
}

// BenchmarkTranscriptToSearchable publishes memoryBenchSize transcript
// batches where the tailer publishes them, each with one decision, to an
// extractor on the rule path and an edge over a fsyncing JetStream, and
// reports memories/s from the first publish until search_memories can find
// the last one (the edge holds them all).
func BenchmarkTranscriptToSearchable(b *testing.B) {
	n := memoryBenchSize()
	for b.Loop() {
		conn, _ := bustest.StartDurable(b, bus.Settings{})
		h := harnessOn(b, conn)
		r := h.start("")
		x, err := extractor.New(conn, nil, extractor.Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		bustest.Run(b, "extractor", x.Run)
		ctx := context.Background()
		start := time.Now()
		for i := range n {
			session := fmt.Sprintf("s%03d", i%100)
			lines := []string{
				fmt.Sprintf(`{"role":"user","content":"Task %d: pick a cache for service %d."}`, i, i%37),
				fmt.Sprintf(`{"role":"assistant","content":"I decided to use cache layout %d for the service because reads stay local."}`, i),
			}
			batch := events.TranscriptBatch{Repo: "app", Session: session, Source: "/tmp/" + session + ".jsonl",
				Format: events.TranscriptChatJSONL, StartOffset: int64(i/100) * 10_000}
			off := batch.StartOffset
			for _, l := range lines {
				batch.Lines = append(batch.Lines, json.RawMessage(l))
				batch.Offsets = append(batch.Offsets, off)
				off += int64(len(l)) + 1
			}
			batch.EndOffset = off
			id := events.TranscriptBatchMsgID(batch.Repo, batch.StreamKey(), batch.StartOffset)
			if _, err := bus.PublishEvent(ctx, conn.JS, events.TranscriptSubject("app"), id, batch); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Minute)
		for {
			if count, _, _ := r.m.memoryCounts(); count >= n {
				break
			}
			if time.Now().After(deadline) {
				count, _, _ := r.m.memoryCounts()
				b.Fatalf("%d of %d memories on the edge after 10 minutes", count, n)
			}
			time.Sleep(5 * time.Millisecond) // the figure's resolution
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "memories/s")
	}
}
