package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The large benchmark corpus: 10,000 files, about 50,000 chunks.
const (
	largeFiles = 10000
	benchDims  = builtin.Dimensions
)

// techWords make generated prose and identifiers read like a codebase's.
var techWords = strings.Fields(`auth login session token refresh cache index search query vector
embedding model stream consumer producer bucket revision watch replay store badger snapshot
config flag option default timeout retry backoff breaker budget limit quota rate request
response handler middleware router server client connection pool worker queue job task card
graph cycle dependency import export module package build test bench deploy release rollback
cluster node leader follower partition replica shard schema migration table column record
document chunk section heading anchor link path file directory repo branch commit merge diff
patch parse lexer token syntax tree visitor walker printer format encode decode json yaml
error warning panic recover signal shutdown drain close flush sync lock mutex channel context
cancel deadline metric histogram counter gauge trace span log level debug info audit security
secret key cert tls password hash salt verify sign encrypt decrypt policy role permission user
group team agent prompt memory scene budget transcript hook status doctor dashboard`)

// largeCorpus is the benchmark corpus: 70% markdown documents with five
// sections, 30% Go files with imports and four functions, parsed by
// docparse as the indexer would. The same every run.
func largeCorpus(n int) []events.DocRecord {
	rng := rand.New(rand.NewPCG(11, 12))
	zipf := rand.NewZipf(rng, 1.2, 4, uint64(len(techWords)*20-1))
	word := func() string {
		i := int(zipf.Uint64())
		if i < len(techWords) {
			return techWords[i]
		}
		// The long tail: rarer compounds, like identifiers in prose.
		return techWords[i%len(techWords)] + techWords[(i/len(techWords))%len(techWords)]
	}
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	title := func(k int) string {
		ws := strings.Fields(words(k))
		for i, w := range ws {
			ws[i] = strings.ToUpper(w[:1]) + w[1:]
		}
		return strings.Join(ws, " ")
	}
	recs := make([]events.DocRecord, n)
	for i := range recs {
		var b strings.Builder
		var p string
		area := fmt.Sprintf("area%d", i%50)
		if i%10 < 7 {
			p = fmt.Sprintf("docs/%s/%s-%d.md", area, strings.ReplaceAll(words(2), " ", "-"), i)
			fmt.Fprintf(&b, "---\ntags: [%s, %s]\npriority: %s\n---\n# %s\n\n%s\n", techWords[i%37], techWords[i%11], []string{"low", "medium", "high"}[i%3], title(3), words(30))
			for s := range 4 {
				fmt.Fprintf(&b, "\n## %s\n\n%s\n\n%s\n", title(2), words(45), words(25+s*5))
			}
		} else {
			p = fmt.Sprintf("internal/%s/%s%d.go", area, techWords[i%len(techWords)], i)
			fmt.Fprintf(&b, "// Package %s %s.\npackage %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\n\t\"github.com/example/app/internal/area%d\"\n)\n", area, words(8), area, (i+7)%50)
			for f := range 4 {
				name := strings.ToUpper(techWords[(i+f)%len(techWords)][:1]) + techWords[(i+f)%len(techWords)][1:] + techWords[(i*3+f)%len(techWords)]
				fmt.Fprintf(&b, "\n// %s %s.\nfunc %s(ctx context.Context, n int) error {\n\t// %s\n\tif n > %d {\n\t\treturn fmt.Errorf(\"%s\")\n\t}\n\treturn nil\n}\n", name, words(18), name, words(12), f, words(3))
			}
		}
		content := b.String()
		rec := docparse.Build([]string{"app", "lib"}[i%2], p, content)
		rec.SHA256, rec.Size, rec.SourceSeq, rec.Content = events.SHA256Hex([]byte(content)), int64(len(content)), 1, content
		rec.ModTime, rec.IndexedAt = testTime, testTime
		recs[i] = rec
	}
	return recs
}

// fixedEmbedder returns a query vector given in advance: the hybrid
// benchmark without the cost of embedding the query.
type fixedEmbedder struct{ v []float32 }

func (fixedEmbedder) ModelID() string { return "bench:random" }
func (fixedEmbedder) Dimensions() int { return benchDims }
func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = e.v
	}
	return out, nil
}

func unitVector(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

type largeBench struct {
	m        *Materialiser
	chunks   int
	kwBytes  uint64 // keyword index and document view, measured on the heap
	setup    time.Duration
	queryVec []float32
}

// large builds the corpus, the keyword index and synthetic vectors once
// per process: every benchmark here shares them.
var large = sync.OnceValue(func() *largeBench {
	start := time.Now()
	recs := largeCorpus(largeFiles)
	rng := rand.New(rand.NewPCG(21, 22))
	lb := &largeBench{queryVec: unitVector(rng, benchDims)}

	before := heapInUse()
	m, err := Open(Config{Embedder: fixedEmbedder{lb.queryVec}})
	if err != nil {
		panic(err)
	}
	for start := 0; start < len(recs); start += maxBatch {
		var changes []Change
		for i, rec := range recs[start:min(start+maxBatch, len(recs))] {
			key := events.DocKey(rec.Repo, rec.Path)
			rev := uint64(start + i + 1)
			changes = append(changes, Change{Key: key, Rev: rev, Doc: &Doc{Key: key, Rev: rev, Record: rec}})
		}
		// Memory only: the store is not what is measured here.
		m.publish(changes, 0)
	}
	lb.kwBytes = heapInUse() - before

	// Synthetic normalised vectors, one per chunk, applied as a watch
	// would (without the store): search costs the same as with real ones.
	var changes []VectorChange
	for i, rec := range recs {
		v := &Vectors{Key: events.DocKey(rec.Repo, rec.Path), SHA256: rec.SHA256}
		for _, c := range rec.Chunks {
			v.Chunks = append(v.Chunks, vector.Chunk{StartLine: c.StartLine, EndLine: c.EndLine, Vector: unitVector(rng, benchDims)})
		}
		lb.chunks += len(v.Chunks)
		changes = append(changes, VectorChange{Key: v.Key, Rev: uint64(i + 1), Vectors: v})
	}
	m.advanceVectors(changes, uint64(len(changes)))
	lb.m = m
	lb.setup = time.Since(start)
	return lb
})

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// benchQueries are keyword-style and question-style queries over the
// corpus's vocabulary.
var benchQueries = []string{
	"auth session token refresh",
	"how does the consumer replay the stream",
	"retry backoff breaker",
	"schema migration rollback",
	"where is the cache index built",
	"lock mutex deadline cancel",
	"dashboard metric histogram",
	"verify sign password hash",
}

// runLatency calls read_context b.N times over benchQueries and reports
// nearest-rank p50 and p99 in milliseconds.
func runLatency(b *testing.B, e *Edge, mode string) {
	args := make([]json.RawMessage, len(benchQueries))
	for i, q := range benchQueries {
		args[i] = json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":10,"mode":%q}`, q, mode))
	}
	var lat stats.LatencySummary
	ctx := context.Background()
	i := 0
	for b.Loop() {
		t0 := time.Now()
		out, err := e.Call(ctx, tools.ReadContext, args[i%len(args)])
		lat.RecordDuration(time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 && mode != tools.ModeKeyword && strings.Contains(string(out), `"fallback"`) {
			b.Fatalf("%s fell back to keyword: %s", mode, out)
		}
		i++
	}
	s := lat.Summary()
	b.ReportMetric(s.P50, "p50-ms")
	b.ReportMetric(s.P99, "p99-ms")
}

// BenchmarkReadContextLarge measures read_context over 10,000 files
// (about 50,000 chunks of 512-dimensional vectors): keyword; hybrid and
// rrf with the query vector given (search cost only); hybrid embedding the
// query with the builtin model. It reports p50 and p99 latency, and the
// memory of the indexes per 10,000 chunks. The answer cache is off: the
// benchmark measures the search.
func BenchmarkReadContextLarge(b *testing.B) {
	lb := large()
	b.Logf("corpus: %d files, %d chunks, built in %v", largeFiles, lb.chunks, lb.setup.Round(time.Millisecond))
	b.ReportMetric(float64(lb.chunks), "chunks")
	per10k := float64(lb.chunks) / 10000
	b.Run("keyword", func(b *testing.B) {
		runLatency(b, New(lb.m, nil, WithoutCache()), tools.ModeKeyword)
		// Reported after the loop, which clears metrics when it starts.
		// The heap the documents take once materialised: the keyword
		// index and the in-memory view (records with their content).
		b.ReportMetric(float64(lb.kwBytes)/per10k/(1<<20), "docs+keyword-MiB/10k-chunks")
	})
	b.Run("semantic-no-embed", func(b *testing.B) {
		runLatency(b, New(lb.m, nil, WithoutCache()), tools.ModeSemantic)
	})
	b.Run("hybrid-no-embed", func(b *testing.B) {
		runLatency(b, New(lb.m, nil, WithoutCache()), tools.ModeHybrid)
		b.ReportMetric(float64(lb.m.vindex.Bytes())/per10k/(1<<20), "vector-MiB/10k-chunks")
	})
	b.Run("rrf-no-embed", func(b *testing.B) {
		runLatency(b, New(lb.m, nil, WithoutCache()), tools.ModeRRF)
	})
	b.Run("hybrid-builtin-embed", func(b *testing.B) {
		e := New(lb.m, nil, WithoutCache())
		e.emb = builtin.New()
		// Load the model outside the measurement, as a running edge has.
		if _, err := e.emb.Embed(context.Background(), []string{"warm up"}); err != nil {
			b.Fatal(err)
		}
		runLatency(b, e, tools.ModeHybrid)
	})
	b.Run("structural", func(b *testing.B) {
		e := New(lb.m, nil, WithoutCache())
		args := json.RawMessage(`{"query":"who imports internal/area14","limit":10}`)
		var lat stats.LatencySummary
		for b.Loop() {
			t0 := time.Now()
			out, err := e.Call(context.Background(), tools.ReadContext, args)
			lat.RecordDuration(time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(string(out), `"graph"`) {
				b.Fatalf("not answered by the graph: %s", out)
			}
		}
		b.ReportMetric(lat.Summary().P50, "p50-ms")
		b.ReportMetric(lat.Summary().P99, "p99-ms")
	})
}

// BenchmarkVectorIndexLarge is the vector search alone at the same scale.
func BenchmarkVectorIndexLarge(b *testing.B) {
	lb := large()
	for b.Loop() {
		lb.m.mu.RLock()
		lb.m.vindex.Search(lb.queryVec, search.RRFK, nil)
		lb.m.mu.RUnlock()
	}
}
