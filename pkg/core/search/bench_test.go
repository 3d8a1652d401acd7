package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// corpus is a synthetic set of documents whose words follow a Zipf law over
// a fixed vocabulary, like prose and code do.
type corpus struct {
	vocab []string
	docs  []Fields
	rng   *rand.Rand
	zipf  *rand.Zipf
}

func newCorpus(seed uint64, vocabSize, docs, words int) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed))
	c := &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.1, 1, uint64(vocabSize-1))}
	seen := make(map[string]bool, vocabSize)
	for len(c.vocab) < vocabSize {
		b := make([]byte, 3+rng.IntN(8))
		for k := range b {
			b[k] = byte('a' + rng.IntN(26))
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	for range docs {
		c.docs = append(c.docs, c.doc(words))
	}
	return c
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

func (c *corpus) words(n int) string {
	ws := make([]string, n)
	for k := range ws {
		ws[k] = c.word()
	}
	return strings.Join(ws, " ")
}

func (c *corpus) doc(words int) Fields {
	return Fields{
		Path:     fmt.Sprintf("pkg/%s/%s_%s.go", c.word(), c.word(), c.word()),
		Title:    c.words(4),
		Headings: []string{c.words(3), c.words(3), c.words(3)},
		Body:     c.words(words),
	}
}

func (c *corpus) index() *Index {
	ix := NewIndex()
	for k, d := range c.docs {
		ix.Upsert(fmt.Sprintf("doc%05d", k), d)
	}
	return ix
}

var (
	benchOnce   sync.Once
	benchCorpus *corpus
	benchIndex  *Index
)

// benchSetup builds the 5,000-document index once for all benchmarks.
func benchSetup(b *testing.B) (*corpus, *Index) {
	b.Helper()
	benchOnce.Do(func() {
		benchCorpus = newCorpus(1, 20000, 5000, 300)
		benchIndex = benchCorpus.index()
	})
	return benchCorpus, benchIndex
}

// runQueries searches each query in turn and reports the median and 99th
// percentile latency next to the mean.
func runQueries(b *testing.B, ix *Index, queries []string) {
	b.Helper()
	var lat stats.LatencySummary
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; b.Loop(); k++ {
		start := time.Now()
		ix.Search(queries[k%len(queries)], 10)
		lat.RecordDuration(time.Since(start))
	}
	b.ReportMetric(lat.Percentile(50)*1e6, "p50-ns")
	b.ReportMetric(lat.Percentile(99)*1e6, "p99-ns")
}

// BenchmarkSearch runs two- and three-word queries against 5,000 documents
// of about 300 words each.
func BenchmarkSearch(b *testing.B) {
	c, ix := benchSetup(b)
	queries := make([]string, 256)
	for k := range queries {
		queries[k] = c.words(2 + k%2)
	}
	runQueries(b, ix, queries)
}

// BenchmarkSearchTypo runs queries whose every word is misspelt, so each
// one goes through typo expansion.
func BenchmarkSearchTypo(b *testing.B) {
	c, ix := benchSetup(b)
	runQueries(b, ix, typoQueries(c, 256))
}

// BenchmarkSearchTypo100kWords measures typo expansion against a vocabulary
// of 100,000 distinct words.
func BenchmarkSearchTypo100kWords(b *testing.B) {
	c := newCorpus(2, 100000, 2000, 300)
	// Zipf sampling leaves the tail unused; one document of every word
	// makes all of them indexed.
	ix := c.index()
	for k := 0; k < len(c.vocab); k += 500 {
		ix.Upsert(fmt.Sprintf("vocab%d", k), Fields{Body: strings.Join(c.vocab[k:min(k+500, len(c.vocab))], " ")})
	}
	b.ReportMetric(float64(len(ix.surfaceIDs)), "words")
	runQueries(b, ix, typoQueries(c, 256))
}

func typoQueries(c *corpus, n int) []string {
	qs := make([]string, n)
	for k := range qs {
		ws := make([]string, 2)
		for w := range ws {
			word := c.word()
			for len(word) < 5 {
				word = c.word()
			}
			// Swap two letters after the first.
			r := []byte(word)
			r[1], r[2] = r[2], r[1]
			ws[w] = string(r)
		}
		qs[k] = strings.Join(ws, " ")
	}
	return qs
}

// BenchmarkUpsert replaces documents of a 5,000-document index.
func BenchmarkUpsert(b *testing.B) {
	c := newCorpus(3, 20000, 5000, 300)
	ix := c.index()
	fresh := make([]Fields, 256)
	for k := range fresh {
		fresh[k] = c.doc(300)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; b.Loop(); k++ {
		ix.Upsert(fmt.Sprintf("doc%05d", (k*7919)%5000), fresh[k%len(fresh)])
	}
}

// BenchmarkUpsertGoroot indexes the Go standard library's first 2,000
// .go files (walk order) into an empty index, whole files as the edge
// indexes them: real identifiers and comments rather than a generated
// vocabulary.
func BenchmarkUpsertGoroot(b *testing.B) {
	docs, total := gorootDocs(b, 2000, func(path, _ string) bool { return strings.HasSuffix(path, ".go") })
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		ix := NewIndex()
		for _, d := range docs {
			ix.Upsert(d.Path, d)
		}
	}
}

// BenchmarkSearch100kShort runs two- and three-word queries against
// 100,000 short documents (about 26 words, like memories) over a small
// vocabulary, where the common words' lists hold most documents.
func BenchmarkSearch100kShort(b *testing.B) {
	c := newCorpus(2, 4000, 100_000, 26)
	ix := c.index()
	queries := make([]string, 500)
	for k := range queries {
		queries[k] = c.words(2 + k%2)
	}
	runQueries(b, ix, queries)
}
