package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The replay of issue 10's point 4: 10,000 mixed tool calls against a real
// edge (embedded JetStream, Badger on disk, a task board), with writes in
// between that replace documents and tasks.
const (
	replayCalls  = 10_000
	replayFiles  = 300 // the working set of ordinary files (L2)
	replayTasks  = 60
	replayActive = 20 // tasks whose dependencies are asked for (L1)
)

// replayRules are the rules and architecture documents (L4).
var replayRules = []string{"AGENTS.md", "CLAUDE.md", "docs/ARCHITECTURE.md", "docs/adr/0001-bus.md"}

// replayEnv is an edge's materialiser and board over a fixed workspace.
type replayEnv struct {
	h     *harness
	r     *running
	board *tasks.Board
	// files and rules are the documents as first written.
	files, rules []events.DocRecord
	ids          []string // task ids; the first replayActive are worked on
	queries      []string
}

func newReplayEnv(tb testing.TB) *replayEnv {
	tb.Helper()
	conn, _ := bustest.StartDurable(tb, bus.Settings{})
	env := &replayEnv{h: harnessOn(tb, conn)}
	env.files = corpus(replayFiles)
	for i, p := range replayRules {
		env.rules = append(env.rules, mdRecord("app", p, fmt.Sprintf("# Rules %d\n\n- Keep pkg/core pure.\n- Tests use real NATS.\n\n## Why\n\n%s\n", i, strings.Repeat("Because the seed says so. ", 40)), nil))
	}
	env.r = env.h.start(tb.TempDir())
	env.board = startBoard(tb, conn)
	ctx := context.Background()
	if err := env.board.Sync(ctx); err != nil {
		tb.Fatal(err)
	}
	writer := New(env.r.m, nil, WithBoard(env.board), WithDefaultRepo("app"), WithoutCache())
	statuses := []string{"todo", "active", "done"}
	for i := range replayTasks {
		args := fmt.Sprintf(`{"title":"Task %d","priority":%q,"assignee":"dev%d","tags":["area%d"]}`, i, []string{"low", "medium", "high"}[i%3], i%5, i%4)
		if i > 0 {
			args = fmt.Sprintf(`{"title":"Task %d","priority":"high","assignee":"dev%d","tags":["area%d"],"depends_on":["%s"]}`, i, i%5, i%4, env.ids[i/2])
		}
		out, err := writer.Call(ctx, tools.CreateTask, json.RawMessage(args))
		if err != nil {
			tb.Fatal(err)
		}
		var res tools.CreateTaskResult
		if err := json.Unmarshal(out, &res); err != nil {
			tb.Fatal(err)
		}
		env.ids = append(env.ids, res.ID)
		if _, err := writer.Call(ctx, tools.UpdateTask, json.RawMessage(fmt.Sprintf(`{"id":%q,"updates":{"status":%q}}`, res.ID, statuses[i%3]))); err != nil {
			tb.Fatal(err)
		}
	}
	var rev uint64
	for _, rec := range append(env.files, env.rules...) {
		rev = env.h.put(rec)
	}
	env.r.wait(rev)
	syl := []string{"ka", "to", "ri", "men", "sol", "ve", "dan", "pu", "lor", "qui"}
	for i := range 30 {
		env.queries = append(env.queries, syl[i%10]+syl[(i*3+1)%10]+" "+syl[(i*7+2)%10]+syl[i%10])
	}
	return env
}

// replayStats is what one replay saw.
type replayStats struct {
	reads, writes int
	// took is the time of the reads alone: writes wait for JetStream.
	took time.Duration
	// byTool is the time and count of each tool's reads.
	byTool map[string]toolTime
	// peakBytes is the most the cache charged after any call, sampled.
	peakBytes int64
}

type toolTime struct {
	took  time.Duration
	calls int
}

// replay makes n mixed calls on e, seeded by seed: read_doc of files
// (Zipf, a fifth of them a section), of rules, get_task_dependencies of
// the active tasks (Zipf),
// read_context (Zipf over 30 queries), list_tasks, and writes that
// replace a document (through cue_docs, waited for) or a task's status.
// clk moves one second per call, so idle expiry happens as it would for
// an agent calling once a second. With ref, every read is also made on
// ref and the answers must be byte for byte the same: the cache serves
// nothing a fresh computation would not.
func (env *replayEnv) replay(tb testing.TB, e, ref *Edge, clk *clock.Deterministic, n int, seed uint64) replayStats {
	tb.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	fileZipf := rand.NewZipf(rng, 1.2, 1, uint64(len(env.files)-1))
	taskZipf := rand.NewZipf(rng, 1.2, 1, replayActive-1)
	queryZipf := rand.NewZipf(rng, 1.2, 1, uint64(len(env.queries)-1))
	filters := []string{`{"status":"active"}`, `{"status":"todo"}`, `{}`, `{"assignee":"dev1"}`, `{"priority":"high","tags":["area2"]}`, `{"status":"active","assignee":"dev3"}`}
	statuses := []string{"todo", "active", "done"}
	st := replayStats{byTool: map[string]toolTime{}}
	for i := range n {
		clk.Advance(time.Second)
		var tool, args string
		switch p := rng.IntN(100); {
		case p < 45:
			f := env.files[fileZipf.Uint64()]
			tool, args = tools.ReadDoc, fmt.Sprintf(`{"path":%q}`, f.Path)
			if rng.IntN(5) == 0 {
				args = fmt.Sprintf(`{"path":%q,"anchor":"Section %d"}`, f.Path, rng.IntN(5))
			}
		case p < 55:
			tool, args = tools.ReadDoc, fmt.Sprintf(`{"path":%q}`, replayRules[rng.IntN(len(replayRules))])
		case p < 65:
			tool, args = tools.GetTaskDependencies, fmt.Sprintf(`{"id":%q,"reverse":%t}`, env.ids[taskZipf.Uint64()], rng.IntN(4) == 0)
		case p < 80:
			tool, args = tools.ReadContext, fmt.Sprintf(`{"query":%q,"limit":10,"mode":"keyword"}`, env.queries[queryZipf.Uint64()])
		case p < 93:
			tool, args = tools.ListTasks, filters[rng.IntN(len(filters))]
		case p < 97:
			// A file or a rule changes: its answers must not outlive it.
			rec := env.files[fileZipf.Uint64()]
			if rng.IntN(3) == 0 {
				rec = env.rules[rng.IntN(len(env.rules))]
			}
			rec = mdRecord(rec.Repo, rec.Path, rec.Content+fmt.Sprintf("\nEdited at call %d.\n", i), rec.Frontmatter)
			env.r.wait(env.h.put(rec))
			st.writes++
			continue
		default:
			tool, args = tools.UpdateTask, fmt.Sprintf(`{"id":%q,"updates":{"status":%q}}`, env.ids[rng.IntN(len(env.ids))], statuses[rng.IntN(3)])
			st.writes++
		}
		t0 := time.Now()
		out, err := e.Call(ctx, tool, json.RawMessage(args))
		if tool != tools.UpdateTask {
			took := time.Since(t0)
			st.took += took
			st.reads++
			tt := st.byTool[tool]
			st.byTool[tool] = toolTime{tt.took + took, tt.calls + 1}
		}
		if err != nil {
			tb.Fatalf("call %d %s %s: %v", i, tool, args, err)
		}
		if c, ok := e.CacheStats(); ok {
			st.peakBytes = max(st.peakBytes, c.Bytes)
		}
		if ref == nil || tool == tools.UpdateTask {
			continue
		}
		want, err := ref.Call(ctx, tool, json.RawMessage(args))
		if err != nil {
			tb.Fatalf("call %d %s %s on the uncached edge: %v", i, tool, args, err)
		}
		if !bytes.Equal(out, want) {
			tb.Fatalf("call %d %s %s: cached answer differs from a fresh one\n got %.300s\nwant %.300s", i, tool, args, out, want)
		}
	}
	return st
}

// replayEdge is an edge with a cache of maxBytes on env, with its own
// deterministic clock; maxBytes < 0 turns the cache off.
func (env *replayEnv) replayEdge(maxBytes int64) (*Edge, *clock.Deterministic) {
	clk := clock.NewDeterministic(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	opt := WithCache(tiercache.Config{MaxBytes: maxBytes, Clock: clk})
	if maxBytes < 0 {
		opt = WithoutCache()
	}
	return New(env.r.m, nil, WithBoard(env.board), WithDefaultRepo("app"), WithClock(clk), opt), clk
}

// BenchmarkCacheReplay replays 10,000 mixed tool calls per iteration on
// an edge with the default cap (50 MB), a small cap (256 KiB, which must
// evict) and no cache, and reports each level's hit rate (percent), the
// peak bytes the cache charged against its cap, evictions and expiries,
// and the mean time of a read, overall and by tool (writes wait for
// JetStream and are left out). peak-bytes is the most the cache charged at any time.
func BenchmarkCacheReplay(b *testing.B) {
	env := newReplayEnv(b)
	for _, c := range []struct {
		name     string
		maxBytes int64
	}{{"cap=50MB", tiercache.DefaultMaxBytes}, {"cap=256KiB", 256 << 10}, {"off", -1}} {
		b.Run(c.name, func(b *testing.B) {
			e, clk := env.replayEdge(c.maxBytes)
			st := replayStats{byTool: map[string]toolTime{}}
			seed := uint64(0)
			for b.Loop() {
				seed++
				s := env.replay(b, e, nil, clk, replayCalls, seed)
				st.reads += s.reads
				st.took += s.took
				for tool, tt := range s.byTool {
					sum := st.byTool[tool]
					st.byTool[tool] = toolTime{sum.took + tt.took, sum.calls + tt.calls}
				}
			}
			b.ReportMetric(float64(st.took.Nanoseconds())/float64(st.reads), "ns/read")
			for tool, tt := range st.byTool {
				b.ReportMetric(float64(tt.took.Nanoseconds())/float64(tt.calls), tool+"-ns")
			}
			cs, ok := e.CacheStats()
			if !ok {
				return
			}
			var hits, lookups uint64
			var evicted, expired uint64
			for _, l := range cs.Levels {
				b.ReportMetric(100*l.HitRate(), l.Level.String()+"-hit%")
				hits += l.Hits
				lookups += l.Hits + l.Misses
				evicted += l.Evicted
				expired += l.Expired
			}
			b.ReportMetric(100*float64(hits)/float64(max(lookups, 1)), "hit%")
			b.ReportMetric(float64(cs.PeakBytes), "peak-bytes")
			b.ReportMetric(float64(cs.MaxBytes), "cap-bytes")
			b.ReportMetric(float64(evicted), "evictions")
			b.ReportMetric(float64(expired), "expired")
			if cs.PeakBytes > cs.MaxBytes {
				b.Fatalf("cache peaked at %d bytes, over its cap of %d", cs.PeakBytes, cs.MaxBytes)
			}
		})
	}
}

// BenchmarkCacheHit is BenchmarkReadDoc and BenchmarkReadContext's calls
// answered from the cache: what a hit costs (validation, resolving the
// path, the lookup and a copy; for an unknown path, the cached
// suggestion).
func BenchmarkCacheHit(b *testing.B) {
	m := loaded(b, "", corpus(benchDocs))
	defer m.Close()
	e := New(m, nil)
	for _, c := range []struct{ name, tool, args string }{
		{"read_doc/full", tools.ReadDoc, `{"path":"docs/area7/doc7.md"}`},
		{"read_doc/anchor", tools.ReadDoc, `{"path":"docs/area7/doc7.md","anchor":"Section 3"}`},
		{"read_context", tools.ReadContext, `{"query":"rito kamen","limit":10,"mode":"keyword"}`},
		{"read_doc/not-found", tools.ReadDoc, `{"path":"docs/area7/doc7x.md"}`}, // its suggestion is cached
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, err := e.Call(context.Background(), c.tool, json.RawMessage(c.args))
				if (err != nil) != strings.HasSuffix(c.name, "not-found") {
					b.Fatal(err)
				}
			}
			if st, _ := e.CacheStats(); st.Bytes == 0 {
				b.Fatal("nothing cached")
			}
		})
	}
}
