package static

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// synonyms is a toy task no keyword search can solve: each query is made
// of words of one topic's query vocabulary and its document of the same
// topic's document vocabulary, which share no word.
func synonyms(n, topics int, seed uint64) []Pair {
	rng := rand.New(rand.NewPCG(seed, 1))
	word := func(side string, topic, k int) string { return fmt.Sprintf("%s%dw%d", side, topic, k) }
	pairs := make([]Pair, n)
	for i := range pairs {
		t := rng.IntN(topics)
		var q, d []string
		for range 3 {
			q = append(q, word("ask", t, rng.IntN(4)))
		}
		for range 8 {
			d = append(d, word("doc", t, rng.IntN(6)))
		}
		pairs[i] = Pair{Query: strings.Join(q, " "), Doc: strings.Join(d, " ")}
	}
	return pairs
}

func cosine(a, b []float32) float64 {
	var s float64
	for k := range a {
		s += float64(a[k]) * float64(b[k])
	}
	return s
}

func TestTrainLearnsWhatKeywordsCannot(t *testing.T) {
	m, err := Train(context.Background(), synonyms(4000, 20, 1), TrainOptions{Name: "toy", Dims: 32, MinCount: 2, Epochs: 3, Batch: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	test := synonyms(200, 20, 2)
	var docs, queries []string
	for _, p := range test {
		docs, queries = append(docs, p.Doc), append(queries, p.Query)
	}
	dv, _ := m.Embed(context.Background(), docs)
	qv, _ := m.Embed(context.Background(), queries)
	// The document of the query's own topic must be nearer than those of
	// the other topics: with 20 topics, chance is 5 %.
	right := 0
	for i := range test {
		best, at := math.Inf(-1), -1
		for j := range test {
			if s := cosine(qv[i], dv[j]); s > best {
				best, at = s, j
			}
		}
		if strings.HasPrefix(strings.Fields(test[at].Doc)[0], "doc"+topicOf(test[i].Query)+"w") {
			right++
		}
	}
	if right < 180 {
		t.Fatalf("the nearest document is of the query's topic for %d of 200 queries, want ≥ 180", right)
	}
}

func topicOf(query string) string {
	w := strings.Fields(query)[0]
	return w[len("ask"):strings.Index(w, "w")]
}

func TestSaveLoadEmbedsAlike(t *testing.T) {
	m, err := Train(context.Background(), synonyms(512, 4, 3), TrainOptions{Name: "round", Dims: 16, MinCount: 1, Epochs: 1, Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.static")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.ModelID() != "static:round" || back.Dimensions() != 16 {
		t.Fatalf("loaded %s × %d", back.ModelID(), back.Dimensions())
	}
	texts := []string{"ask0w1 ask0w2", "doc3w0 doc3w5 unknownword", "nothing known here"}
	a, _ := m.Embed(context.Background(), texts)
	b, _ := back.Embed(context.Background(), texts)
	for i := range texts {
		if d := cosine(a[i], b[i]); i < 2 && math.Abs(d-1) > 1e-5 {
			t.Errorf("%q: cosine %f between the saved and the loaded model's vectors", texts[i], d)
		}
		if n := cosine(a[i], a[i]); i < 2 && math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm² %f, want 1", texts[i], n)
		}
	}
	if n := cosine(a[2], a[2]); n != 0 {
		t.Errorf("a text of no known token: norm² %f, want the zero vector", n)
	}
}

func TestLoadRefusesWhatIsNoModel(t *testing.T) {
	dir := t.TempDir()
	m := &Model{Name: "x", Dims: 4, Vocab: map[string]int32{"a": 0}, Weight: []float32{1}, Vec: []float32{1, 0, 0, 0}}
	good := filepath.Join(dir, "good.static")
	if err := m.Save(good); err != nil {
		t.Fatal(err)
	}
	if id, err := IDOf(good); err != nil || id != "static:x" {
		t.Fatalf("IDOf = %q, %v", id, err)
	}
	whole, _ := os.ReadFile(good)
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("not a model at all"),
		"truncated": whole[:len(whole)-3],
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), "train it again") {
			t.Errorf("%s: %v, want an error naming the remedy", name, err)
		}
		if _, err := IDOf(p); name != "truncated" && (err == nil || !strings.Contains(err.Error(), "train it again")) {
			t.Errorf("IDOf %s: %v, want an error naming the remedy", name, err)
		}
	}
	missing := filepath.Join(dir, "missing.static")
	for _, open := range []func(string) error{
		func(p string) error { _, err := Load(p); return err },
		func(p string) error { _, err := IDOf(p); return err },
	} {
		if err := open(missing); err == nil || !strings.Contains(err.Error(), "cue eval train --out "+missing) {
			t.Errorf("a missing file: %v, want an error naming the remedy", err)
		}
	}
}

func TestTrainRefusesTooFewPairs(t *testing.T) {
	if _, err := Train(context.Background(), synonyms(10, 2, 1), TrainOptions{}); err == nil {
		t.Fatal("10 pairs trained a model with batches of 128")
	}
}

// BenchmarkEmbedChunks embeds chunks of about 128 tokens (a function of
// this package's source, cut to 600 bytes, as a code chunk is) with a
// model of 20,000 tokens × 128: the cost of embedding with a static
// model, to set beside the built-in model's Embed128.
func BenchmarkEmbedChunks(b *testing.B) {
	src, err := os.ReadFile("train.go")
	if err != nil {
		b.Fatal(err)
	}
	var chunks []string
	for start := 0; start+600 <= len(src); start += 300 {
		chunks = append(chunks, string(src[start:start+600]))
	}
	m := &Model{Name: "bench", Dims: 128, Vocab: map[string]int32{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range chunks {
		for _, tok := range distinct(search.Tokenize(c)) {
			if _, ok := m.Vocab[tok]; !ok {
				m.Vocab[tok] = int32(len(m.Vocab))
			}
		}
	}
	for len(m.Vocab) < 20000 {
		m.Vocab[fmt.Sprintf("filler%d", len(m.Vocab))] = int32(len(m.Vocab))
	}
	m.Weight = make([]float32, len(m.Vocab))
	m.Vec = make([]float32, len(m.Vocab)*m.Dims)
	for i := range m.Weight {
		m.Weight[i] = 1
	}
	for i := range m.Vec {
		m.Vec[i] = float32(rng.NormFloat64())
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := m.Embed(ctx, chunks[i%len(chunks):i%len(chunks)+1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}
