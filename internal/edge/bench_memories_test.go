package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// hashEmbedder is a deterministic bag-of-words embedder of MiniLM's width:
// each word adds ±1 at a hashed dimension. It costs next to nothing, so a
// benchmark measures the edge, not a model.
type hashEmbedder struct{}

func (hashEmbedder) ModelID() string { return "test:hash384" }
func (hashEmbedder) Dimensions() int { return 384 }

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 384)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			x := h.Sum32()
			if x&1 == 0 {
				v[x%384]++
			} else {
				v[x%384]--
			}
		}
		var n float64
		for _, f := range v {
			n += float64(f * f)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		inv := float32(1 / math.Sqrt(n))
		for k := range v {
			v[k] *= inv
		}
		out[i] = v
	}
	return out, nil
}

// memEntry of a KV watch, as a benchmark applies it without a server.
type kvEntry struct {
	key   string
	value []byte
	rev   uint64
}

func (e kvEntry) Bucket() string                  { return events.MemoriesBucket }
func (e kvEntry) Key() string                     { return e.key }
func (e kvEntry) Value() []byte                   { return e.value }
func (e kvEntry) Revision() uint64                { return e.rev }
func (e kvEntry) Created() time.Time              { return time.Time{} }
func (e kvEntry) Delta() uint64                   { return 0 }
func (e kvEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }

// memoryCorpus is n memories over a Zipf-distributed vocabulary, in two
// repos and all kinds, the same every run.
func memoryCorpus(n int) []events.MemoryRecord {
	rng := rand.New(rand.NewPCG(3, 4))
	syl := []string{"ka", "to", "ri", "men", "sol", "ve", "dan", "pu", "lor", "qui", "bes", "na", "tri", "go", "mal", "fe", "zon", "ci", "por", "lu"}
	vocab := make([]string, 4000)
	for i := range vocab {
		vocab[i] = syl[i%20] + syl[(i/20)%20] + syl[(i/400)%20]
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	kinds := []memory.Kind{memory.KindDecision, memory.KindRationale, memory.KindFact, memory.KindPreference, memory.KindOpenQuestion, memory.KindExperience}
	out := make([]events.MemoryRecord, n)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		content := fmt.Sprintf("%s %d", words(14), i)
		out[i] = events.MemoryRecord{
			Memory: memory.Memory{
				Content: content, Kind: kinds[i%len(kinds)], Rationale: words(12), Confidence: float64(i%10) / 10,
				FilesTouched: []string{fmt.Sprintf("src/area%d/file%d.go", i%50, i%400), fmt.Sprintf("docs/area%d.md", i%50)},
				Repo:         []string{"app", "lib"}[i%2], Session: fmt.Sprintf("sess-%d", i%300),
				CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base.Add(time.Duration(i) * time.Minute),
			},
			Hash: memory.Hash(content), Extractions: 1 + i%4,
		}
	}
	return out
}

// loadedMemories is a Materialiser holding recs, applied as the watch
// applies them, with every vector embedded.
func loadedMemories(tb testing.TB, recs []events.MemoryRecord) *Materialiser {
	tb.Helper()
	m, err := Open(Config{Embedder: hashEmbedder{}})
	if err != nil {
		tb.Fatal(err)
	}
	for start := 0; start < len(recs); start += maxBatch {
		var batch []jetstream.KeyValueEntry
		for i, r := range recs[start:min(start+maxBatch, len(recs))] {
			b, err := events.Encode(r)
			if err != nil {
				tb.Fatal(err)
			}
			batch = append(batch, kvEntry{events.MemoryKey(r.Repo, r.Hash), b, uint64(start + i + 1)})
		}
		if err := m.applyMemories(context.Background(), batch); err != nil {
			tb.Fatal(err)
		}
	}
	for {
		keys, texts := m.mems.takePending(memoryEmbedBatch)
		if len(keys) == 0 {
			break
		}
		vecs, _ := hashEmbedder{}.Embed(context.Background(), texts)
		m.mems.storeVectors(m, keys, texts, vecs)
	}
	if n := m.Status().MemoryVectors; n != len(recs) {
		tb.Fatalf("%d memory vectors, want %d", n, len(recs))
	}
	return m
}

// BenchmarkSearchMemories asks search_memories in every mode over
// memoryBenchSize memories (CUE_MEMORY_BENCH_SIZE), applied as the watch
// applies them, and reports each mode's latency percentiles beside the
// mean.
func BenchmarkSearchMemories(b *testing.B) {
	recs := memoryCorpus(memoryBenchSize())
	m := loadedMemories(b, recs)
	defer m.Close()
	e := New(m, nil)
	// Queries of two and three words drawn from the memories themselves,
	// as BenchmarkSaveMemory asks them.
	queries := make([]json.RawMessage, 500)
	for i := range queries {
		ws := strings.Fields(recs[(i*97)%len(recs)].Content)
		queries[i] = json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":10,"mode":"%%s"%%s}`, strings.Join(ws[:2+i%2], " ")))
	}
	for _, c := range []struct{ name, mode, filters string }{
		{"keyword", "keyword", ""},
		{"hybrid", "hybrid", ""},
		{"semantic", "semantic", ""},
		{"keyword-filtered", "keyword", `,"filters":{"repo":"app","kind":"decision","since":"30d"}`},
		{"hybrid-filtered", "hybrid", `,"filters":{"repo":"app","kind":"decision","since":"30d"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := make([]json.RawMessage, len(queries))
			for i, q := range queries {
				args[i] = json.RawMessage(fmt.Sprintf(string(q), c.mode, c.filters))
			}
			ctx := context.Background()
			var lat stats.LatencySummary
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if _, err := e.Call(ctx, tools.SearchMemories, args[i%len(args)]); err != nil {
					b.Fatal(err)
				}
				lat.RecordDuration(time.Since(t0))
				i++
			}
			b.ReportMetric(lat.Percentile(50), "p50-ms")
			b.ReportMetric(lat.Percentile(99), "p99-ms")
		})
	}
}

// conversation is n tool calls of a coding session: reads, greps and
// edits over 60 files, a todo write every 20 calls, about 3 calls a turn.
func conversation(n int) []map[string]any {
	calls := make([]map[string]any, n)
	for i := range calls {
		file := fmt.Sprintf("/src/pkg%d/file%d.go", i%12, i%60)
		c := map[string]any{"id": fmt.Sprintf("toolu_%05d", i), "turn": i/3 + 1, "status": "completed",
			"output": fmt.Sprintf("%s// call %d\n", strings.Repeat("line of code output\n", 20+i%40), i)}
		switch {
		case i%20 == 0:
			c["tool"], c["params"] = "TodoWrite", map[string]any{"todos": []any{map[string]any{"content": fmt.Sprintf("step %d", i/20), "status": "in_progress"}}}
		case i%7 == 0:
			c["tool"], c["params"] = "Edit", map[string]any{"file_path": file, "old_string": "a", "new_string": fmt.Sprint(i)}
		case i%5 == 0:
			c["tool"], c["params"] = "Grep", map[string]any{"pattern": fmt.Sprintf("func%d", i%9), "path": "src"}
		default:
			c["tool"], c["params"] = "Read", map[string]any{"file_path": file}
		}
		calls[i] = c
	}
	return calls
}

// BenchmarkPruneConversation prunes 1,000 calls: with output_tokens given
// (as a hook that has the counts sends them), with the outputs counted by
// the edge (most of the cost), and as Claude-style messages.
func BenchmarkPruneConversation(b *testing.B) {
	calls := conversation(1000)
	withTokens := make([]map[string]any, len(calls))
	for i, c := range calls {
		w := maps.Clone(c)
		w["output_tokens"] = 40 + i%80
		withTokens[i] = w
	}
	var msgs []map[string]any
	turn := 0
	for _, c := range calls {
		if t := c["turn"].(int); t != turn {
			turn = t
			msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("step %d", t)})
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": c["id"], "name": c["tool"], "input": c["params"]}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": c["id"], "content": c["output"]}}})
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"calls-with-output-tokens", map[string]any{"tool_calls": withTokens}},
		{"calls-counted", map[string]any{"tool_calls": calls}},
		{"messages-counted", map[string]any{"messages": msgs}},
	} {
		b.Run(c.name, func(b *testing.B) {
			args, err := json.Marshal(c.args)
			if err != nil {
				b.Fatal(err)
			}
			e := New(nil, nil)
			ctx := context.Background()
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				if _, err := e.Call(ctx, tools.PruneConversation, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
