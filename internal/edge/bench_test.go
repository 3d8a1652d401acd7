package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const benchDocs = 2000

// corpus is benchDocs markdown documents of about 700 words each over a
// vocabulary of 5,000 words, with five sections and frontmatter, the same
// every run.
func corpus(n int) []events.DocRecord {
	rng := rand.New(rand.NewPCG(1, 2))
	// Pronounceable words of two or three syllables, like prose rather
	// than identifiers.
	syl := []string{"ka", "to", "ri", "men", "sol", "ve", "dan", "pu", "lor", "qui", "bes", "na", "tri", "go", "mal", "fe", "zon", "ci", "por", "lu"}
	vocab := make([]string, 5000)
	for i := range vocab {
		w := syl[i%20] + syl[(i/20)%20]
		if i >= 400 {
			w += syl[(i/400)%20]
		}
		vocab[i] = w
	}
	// Zipf-like: a few words are common, most are rare.
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	recs := make([]events.DocRecord, n)
	for i := range recs {
		var b strings.Builder
		fmt.Fprintf(&b, "# Doc %d %s\n\n%s\n", i, words(3), words(40))
		for s := range 5 {
			fmt.Fprintf(&b, "\n## Section %d\n\n%s\n", s, words(130))
		}
		fm := map[string]any{"tags": []any{vocab[i%20], vocab[i%7]}, "priority": []string{"low", "medium", "high"}[i%3]}
		recs[i] = mdRecord([]string{"app", "lib"}[i%2], fmt.Sprintf("docs/area%d/doc%d.md", i%40, i), b.String(), fm)
	}
	return recs
}

// loaded is a Materialiser holding docs, applied as a watch would.
func loaded(tb testing.TB, dir string, recs []events.DocRecord) *Materialiser {
	tb.Helper()
	m, err := Open(Config{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	for start := 0; start < len(recs); start += maxBatch {
		var changes []Change
		for i, rec := range recs[start:min(start+maxBatch, len(recs))] {
			key := events.DocKey(rec.Repo, rec.Path)
			rev := uint64(start + i + 1)
			changes = append(changes, Change{Key: key, Rev: rev, Doc: &Doc{Key: key, Rev: rev, Record: rec}})
		}
		if err := m.store.Apply(changes); err != nil {
			tb.Fatal(err)
		}
		m.publish(changes, 0)
	}
	return m
}

func BenchmarkReadContext(b *testing.B) {
	m := loaded(b, "", corpus(benchDocs))
	defer m.Close()
	e := New(m, nil, WithoutCache()) // measures the computation, not the answer cache
	ctx := context.Background()
	queries := []string{"rito kamen", "section solve", "dantoka", "doc purimen lorqui besna"}
	args := make([]json.RawMessage, len(queries))
	for i, q := range queries {
		args[i] = json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":10,"mode":"keyword"}`, q))
	}
	i := 0
	for b.Loop() {
		if _, err := e.Call(ctx, tools.ReadContext, args[i%len(args)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkReadContextFiltered(b *testing.B) {
	m := loaded(b, "", corpus(benchDocs))
	defer m.Close()
	e := New(m, nil, WithoutCache()) // measures the computation, not the answer cache
	args := json.RawMessage(`{"query":"section solve","limit":10,"filters":{"tags":["menka"],"priority":"HIGH"}}`)
	for b.Loop() {
		if _, err := e.Call(context.Background(), tools.ReadContext, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDoc(b *testing.B) {
	// With a real Go file (this package's tools.go) for symbol and line
	// anchors.
	src, err := os.ReadFile("tools.go")
	if err != nil {
		b.Fatal(err)
	}
	m := loaded(b, "", append(corpus(benchDocs), codeRecord("app", "internal/edge/tools.go", string(src))))
	defer m.Close()
	e := New(m, nil, WithoutCache()) // measures the computation, not the answer cache
	for _, c := range []struct{ name, args string }{
		{"full", `{"path":"docs/area7/doc7.md"}`},
		{"anchor", `{"path":"docs/area7/doc7.md","anchor":"Section 3"}`},
		{"not-found", `{"path":"docs/area7/doc7x.md"}`},
		{"symbol", `{"path":"internal/edge/tools.go","anchor":"Edge.readDoc"}`},
		{"lines", `{"path":"internal/edge/tools.go","anchor":"L100-L160"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, err := e.Call(context.Background(), tools.ReadDoc, json.RawMessage(c.args))
				if c.name != "not-found" && err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenRebuild opens a Badger of 2,000 documents and rebuilds the
// in-memory view and keyword index from it, as an edge does at start.
func BenchmarkOpenRebuild(b *testing.B) {
	dir := b.TempDir()
	if err := loaded(b, dir, corpus(benchDocs)).Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m, err := Open(Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if n := m.Status().Docs; n != benchDocs {
			b.Fatalf("rebuilt %d docs", n)
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
