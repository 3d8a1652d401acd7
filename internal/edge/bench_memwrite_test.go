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

// BenchmarkForgetSeenByTheOtherEdge forgets, through one edge, a memory
// both edges serve, and measures how long until the other edge no longer
// finds it: the forget's tombstone travels the memory bucket, as it does
// between a laptop daemon and team edges. It reports the p50 and p99 of
// that time (issue 22: within 1 s).
func BenchmarkForgetSeenByTheOtherEdge(b *testing.B) {
	conn, _ := bustest.StartDurable(b, bus.Settings{})
	h := harnessOn(b, conn)
	r1, r2 := h.start(""), h.start("")
	st := memstore.NewStore(h.mkv, clock.System{})
	st.SetDurable(conn.Durable)
	e1 := New(r1.m, nil, WithDefaultRepo("app"), WithMemoryStore(st))
	e2 := New(r2.m, nil, WithDefaultRepo("app"))
	ctx := context.Background()
	call := func(e *Edge, tool string, args map[string]any) []byte {
		a, _ := json.Marshal(args)
		out, err := e.Call(ctx, tool, a)
		if err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		return out
	}
	serves := func(e *Edge, word string) bool {
		var hits []tools.MemoryHit
		if err := json.Unmarshal(call(e, tools.SearchMemories, map[string]any{"query": word, "mode": "keyword"}), &hits); err != nil {
			b.Fatal(err)
		}
		return len(hits) > 0
	}
	waitUntil := func(what string, cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				b.Fatalf("%s: not within 10 s", what)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	var lat stats.LatencySummary
	i := 0
	for b.Loop() {
		word := fmt.Sprintf("forgetprobe%d", i)
		i++
		var saved tools.SaveMemoryResult
		if err := json.Unmarshal(call(e1, tools.SaveMemory, map[string]any{"kind": "decision", "text": "Keep " + word + " behind the feature flag"}), &saved); err != nil {
			b.Fatal(err)
		}
		waitUntil("the other edge serves the saved memory", func() bool { return serves(e2, word) })
		t0 := time.Now()
		call(e1, tools.ForgetMemory, map[string]any{"hash": saved.Hash})
		waitUntil("the other edge stops serving the forgotten memory", func() bool { return !serves(e2, word) })
		lat.RecordDuration(time.Since(t0))
	}
	b.ReportMetric(lat.Percentile(50), "p50-ms")
	b.ReportMetric(lat.Percentile(99), "p99-ms")
}
