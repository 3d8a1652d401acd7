package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// BenchmarkClusterSteadyIngest measures the team topology (three NATS
// nodes, two indexers, two edges) under a steady ingest load: files are
// published at a fixed rate while agents query both edges at a fixed rate.
// It reports
//
//   - files/s: files published divided by the time from the first publish
//     until both edges serve every one of them (ingested to searchable);
//   - fresh-p50/p99-ms: for a sample of files, publish to first read_doc
//     answer with the new content at an edge (resolution: one polling
//     round, tens of ms);
//   - query-p50/p99-ms: read_context round trips at the edges over NATS,
//     as `cue mcp` on a laptop reaches them, while the load runs.
//
// The cluster starts once per run: use -benchtime 1x. CUE_BENCH_RATE
// (files/s, default 150, about half of what scenario 1 measures in a
// burst) and CUE_BENCH_SECONDS (default 20) shape the load.
func BenchmarkClusterSteadyIngest(b *testing.B) {
	rate := envInt("CUE_BENCH_RATE", 150)
	seconds := envInt("CUE_BENCH_SECONDS", 20)
	const queriesPerSecond = 20
	s := StartScenario(b, 10*time.Minute, ClusterOptions{Indexers: 2, Edges: 2})
	ctx, c, nc, js := s.Ctx, s.C, s.NC, s.JS

	// Something to find before the load starts, so that queries do work
	// from the first second.
	warm := Corpus(20, "warm", scenarioRepos, 150)
	s.Ingest(warm, 2*time.Minute)

	files := Corpus(21, "load", scenarioRepos, rate*seconds)
	published := make([]time.Time, len(files))
	var pubMu sync.Mutex
	var fresh, queries stats.LatencySummary
	var freshMu, queryMu sync.Mutex
	var queryErrors int
	done := make(chan struct{})
	var wg sync.WaitGroup

	// Agents: a fixed query rate over both edges, each call on its own
	// goroutine so that a slow answer does not slow the rate.
	wg.Go(func() {
		tick := time.NewTicker(time.Second / queriesPerSecond)
		defer tick.Stop()
		var calls sync.WaitGroup
		defer calls.Wait()
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			q := words[k%len(words)] + " " + words[(k*7+3)%len(words)]
			calls.Go(func() {
				t0 := time.Now()
				rep, err := c.EdgeCall(ctx, nc, k%2, "read_context", map[string]any{"query": q, "limit": 10})
				d := time.Since(t0)
				queryMu.Lock()
				defer queryMu.Unlock()
				if err != nil || rep.Error != nil {
					queryErrors++
					return
				}
				queries.RecordDuration(d)
			})
		}
	})

	// Freshness: every fifth markdown file is polled at one edge, the
	// edges taking turns, until it answers with the new content.
	sample := make(chan int, len(files))
	wg.Go(func() {
		var pending []int
		closed := false
		for round := 0; !closed || len(pending) > 0; round++ {
			for drained := false; !drained; {
				select {
				case j, ok := <-sample:
					if !ok {
						closed, drained = true, true
						break
					}
					pending = append(pending, j)
				default:
					drained = true
				}
			}
			if len(pending) == 0 {
				if !closed {
					time.Sleep(10 * time.Millisecond)
				}
				continue
			}
			asked := make([]File, len(pending))
			for k, j := range pending {
				asked[k] = files[j]
			}
			got, err := readDocs(ctx, c, nc, round%2, asked)
			now := time.Now()
			if err != nil && ctx.Err() != nil {
				return
			}
			still := pending[:0]
			for k, j := range pending {
				if got[k] != files[j].Version() {
					still = append(still, j)
					continue
				}
				pubMu.Lock()
				d := now.Sub(published[j])
				pubMu.Unlock()
				freshMu.Lock()
				fresh.RecordDuration(d)
				freshMu.Unlock()
			}
			pending = still
		}
	})

	b.ResetTimer()
	start := time.Now()
	const ticksPerSecond = 10
	perTick := max(1, rate/ticksPerSecond)
	tick := time.NewTicker(time.Second / ticksPerSecond)
	for lo := 0; lo < len(files); lo += perTick {
		<-tick.C
		hi := min(lo+perTick, len(files))
		now := time.Now()
		pubMu.Lock()
		for j := lo; j < hi; j++ {
			published[j] = now
		}
		pubMu.Unlock()
		Publish(ctx, b, js, files[lo:hi], s.Acked)
		for j := lo; j < hi; j++ {
			if j%5 == 0 && strings.HasSuffix(files[j].Path, ".md") {
				sample <- j
			}
		}
	}
	tick.Stop()
	publishedIn := time.Since(start)
	close(sample)
	waitWrites(ctx, b, s.Writes, len(warm)+len(files), 3*time.Minute)
	for i := range c.Edges {
		waitEdgeServes(ctx, b, c, nc, i, markdown(files), 3*time.Minute)
	}
	searchable := time.Since(start)
	close(done)
	wg.Wait()
	b.StopTimer()

	s.CheckWrites()
	for i := range c.Edges {
		checkEdge(ctx, b, c, nc, i, s.Acked, markdown(append(append([]File(nil), warm...), files...)))
	}
	freshSum, querySum := fresh.Summary(), queries.Summary()
	b.Logf("steady load: %d files at %d files/s, published in %s, searchable at both edges after %s",
		len(files), rate, publishedIn.Round(time.Millisecond), searchable.Round(time.Millisecond))
	b.Logf("publish to served at an edge (ms): %s", freshSum)
	b.Logf("read_context at the edges under load (ms): %s; %d errors", querySum, queryErrors)
	if queryErrors > 0 {
		b.Errorf("%d read_context calls failed under load", queryErrors)
	}
	if freshSum.Count == 0 || querySum.Count == 0 {
		b.Fatalf("no samples: freshness %d, queries %d", freshSum.Count, querySum.Count)
	}
	b.ReportMetric(float64(len(files))/searchable.Seconds(), "files/s")
	b.ReportMetric(freshSum.P50, "fresh-p50-ms")
	b.ReportMetric(freshSum.P99, "fresh-p99-ms")
	b.ReportMetric(querySum.P50, "query-p50-ms")
	b.ReportMetric(querySum.P99, "query-p99-ms")
	b.ReportMetric(0, "ns/op")
	s.Done()
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	if v := os.Getenv(key); v != "" {
		panic(fmt.Sprintf("%s=%q: want a positive whole number", key, v))
	}
	return def
}
