package eval

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// Corpus holds a dataset indexed for every mode: the keyword index and,
// once Embed has run, the vectors of each document's chunks.
type Corpus struct {
	ds    *Dataset
	index *search.Index
	emb   embed.Embedder
	// vectors[i] embeds a chunk of document chunkDoc[i]; a document's
	// chunks are consecutive.
	vectors  [][]float32
	chunkDoc []int
}

// NewCorpus builds the keyword index of ds.
func NewCorpus(ds *Dataset, progress func(done, total int)) *Corpus {
	c := &Corpus{ds: ds, index: search.NewIndex()}
	for i, d := range ds.Docs {
		c.index.Upsert(d.ID, search.Fields{Title: d.Title, Body: d.Text})
		if progress != nil && (i%500 == 0 || i == len(ds.Docs)-1) {
			progress(i+1, len(ds.Docs))
		}
	}
	return c
}

// windowed is what Embed needs of a model to cut documents into chunks it
// sees whole; builtin.Embedder has it.
type windowed interface {
	Window() int
	CountTokens(text string) (int, error)
}

// docChunks returns the texts Embed embeds for d: the title and one passage
// of its text each (docparse.TitledPassages), cut to e's window when e
// tells it (counted with e's tokenizer), and otherwise to
// docparse.MaxChunkTokens cl100k_base tokens.
//
// A model that clips its input would otherwise see only the start of a
// long document, and the built-in model's 128 tokens hold little more than
// a title and the first sentences of an abstract.
func docChunks(e embed.Embedder, d Doc) ([]string, error) {
	window, count := docparse.MaxChunkTokens, tokens.Count
	if w, ok := e.(windowed); ok {
		if _, err := w.CountTokens(""); err != nil {
			return nil, fmt.Errorf("count tokens of %s: %w", e.ModelID(), err)
		}
		window = w.Window()
		count = func(s string) int {
			n, _ := w.CountTokens(s) // it failed above if it fails at all
			return n
		}
	}
	return docparse.TitledPassages(d.Title, d.Text, window, count), nil
}

// Embed embeds every document with e as passages of its text under its
// title, each within what e's model sees (docChunks), in batches,
// reporting progress in documents. A document's semantic score is then
// its best passage's: max-pooling, MaxP in Dai and Callan, "Deeper Text
// Understanding for IR with Contextual Neural Language Modeling" (SIGIR
// 2019), one of the three ways to score a document from its passages
// compared there (first, best, sum). It is also how a repository search
// names the section that matched. On SciFact with the built-in model,
// semantic nDCG@10 went from 0.21 (text clipped at 128 tokens) to 0.27
// with MaxP over passages side by side; their mean gave 0.23, the first
// passage alone 0.20 and the mean of the best two 0.27, a little lower.
func (c *Corpus) Embed(ctx context.Context, e embed.Embedder, progress func(done, total int)) error {
	const batch = 64
	var texts []string
	c.chunkDoc = c.chunkDoc[:0]
	for i, d := range c.ds.Docs {
		chunks, err := docChunks(e, d)
		if err != nil {
			return err
		}
		if len(chunks) == 0 {
			chunks = []string{""} // every document has a vector, so every document has a cosine
		}
		texts = append(texts, chunks...)
		for range chunks {
			c.chunkDoc = append(c.chunkDoc, i)
		}
	}
	c.emb = e
	c.vectors = make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		vecs, err := e.Embed(ctx, texts[start:end])
		if err != nil {
			return fmt.Errorf("embed chunks %d-%d of %d with %s: %w", start, end, len(texts), e.ModelID(), err)
		}
		c.vectors = append(c.vectors, vecs...)
		if progress != nil {
			done := c.chunkDoc[end-1] + 1
			if end < len(texts) && c.chunkDoc[end] == c.chunkDoc[end-1] {
				done-- // that document has chunks still to embed
			}
			progress(done, len(c.ds.Docs))
		}
	}
	return nil
}

// semanticScores returns every document's cosine with the query: the best
// of its chunks'.
func (c *Corpus) semanticScores(ctx context.Context, query string) ([]float64, error) {
	if c.emb == nil {
		return nil, fmt.Errorf("semantic mode needs the corpus embedded first")
	}
	qv, err := c.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed query with %s: %w", c.emb.ModelID(), err)
	}
	scores := make([]float64, len(c.ds.Docs))
	for i := range scores {
		scores[i] = -2 // below any cosine
	}
	for i, v := range c.vectors {
		var dot float32
		for j, x := range qv[0] {
			dot += x * v[j]
		}
		if d := c.chunkDoc[i]; float64(dot) > scores[d] {
			scores[d] = float64(dot)
		}
	}
	return scores, nil
}

// keywordScores returns the BM25F score of every document that matches the
// query; the others score 0.
func (c *Corpus) keywordScores(query string) map[string]float64 {
	hits := c.index.Search(query, c.index.Len())
	scores := make(map[string]float64, len(hits))
	for _, h := range hits {
		scores[h.ID] = h.Score
	}
	return scores
}

// top returns the k best hits, best first, ties by id.
func top(hits []search.Hit, k int) []search.Hit {
	hits = slices.Clone(hits)
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))]
}

func ids(hits []search.Hit, k int) []string {
	out := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.ID)
	}
	return out
}

// pool is how many candidates fusion draws from each side.
const pool = 100

// docHits pairs every document with its score in scores, in corpus order.
func (c *Corpus) docHits(scores []float64) []search.Hit {
	hits := make([]search.Hit, len(scores))
	for i, s := range scores {
		hits[i] = search.Hit{ID: c.ds.Docs[i].ID, Score: s}
	}
	return hits
}

// candidates returns the fusion candidates of a query, the union of each
// side's top pool, twice over in the same order: with their semantic and
// with their keyword scores. Every candidate has both, since every
// document has a cosine and BM25 scores any document (0 when no query
// term matches), so fusion never has to guess a score for a document that
// one side ranked just below its cut. Counting such a document as 0 on
// that side, as fusing the two top lists does, cost hybrid nDCG@10 on
// SciFact 0.28 (0.32 against 0.60 with the same min-max normalisation).
func (c *Corpus) candidates(sem []float64, kw map[string]float64) (semantic, keyword []search.Hit) {
	semAll := c.docHits(sem)
	kwAll := make([]search.Hit, 0, len(kw))
	for id, s := range kw {
		kwAll = append(kwAll, search.Hit{ID: id, Score: s})
	}
	semScore := make(map[string]float64, len(semAll))
	for _, h := range semAll {
		semScore[h.ID] = h.Score
	}
	seen := make(map[string]bool, 2*pool)
	for _, h := range append(top(semAll, pool), top(kwAll, pool)...) {
		if seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		semantic = append(semantic, search.Hit{ID: h.ID, Score: semScore[h.ID]})
		keyword = append(keyword, search.Hit{ID: h.ID, Score: kw[h.ID]})
	}
	return semantic, keyword
}

// Ranker returns the ranker of a mode: keyword, semantic, hybrid (seed
// 002's 70% semantic + 30% keyword after per-query normalisation,
// search.FuseWeighted) or rrf (seed 004's reciprocal rank fusion, k = 60).
// Fusion modes rank the candidates of both sides' top 100, each with both
// of its scores; rrf ranks each candidate on both sides too, where fusing
// the two top-100 lists gave a document missing from one list nothing
// from it (SciFact nDCG@10 0.49 against 0.45 before passages).
func (c *Corpus) Ranker(mode string) (Ranker, error) {
	switch mode {
	case "keyword":
		return RankerFunc(func(_ context.Context, q string, k int) ([]string, error) {
			return ids(c.index.Search(q, k), k), nil
		}), nil
	case "semantic", "hybrid", "rrf":
		if c.emb == nil {
			return nil, fmt.Errorf("mode %s needs an embedder", mode)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q (keyword, semantic, hybrid, rrf)", mode)
	}
	return RankerFunc(func(ctx context.Context, q string, k int) ([]string, error) {
		sem, err := c.semanticScores(ctx, q)
		if err != nil {
			return nil, err
		}
		if mode == "semantic" {
			return ids(top(c.docHits(sem), k), k), nil
		}
		semHits, kwHits := c.candidates(sem, c.keywordScores(q))
		if mode == "hybrid" {
			return ids(search.FuseWeighted(semHits, kwHits, search.HybridSemanticWeight, search.HybridKeywordWeight), k), nil
		}
		// Reciprocal rank fusion ranks each candidate on both sides, but
		// among documents no query term matches BM25 has no order to give.
		matched := slices.DeleteFunc(slices.Clone(kwHits), func(h search.Hit) bool { return h.Score <= search.KeywordFloor })
		return ids(search.FuseRRF(search.RRFK, top(semHits, len(semHits)), top(matched, len(matched))), k), nil
	}), nil
}
