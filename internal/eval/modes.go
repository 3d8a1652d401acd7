package eval

import (
	"context"
	"fmt"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// Corpus holds a dataset indexed for every mode: the keyword index and,
// once Embed has run, the vectors of each document's chunks.
type Corpus struct {
	ds    *Dataset
	index *search.Index
	emb   embed.Embedder
	// vectors is the index edges search, int8 rows and all, so the
	// figures are the product's.
	vectors *vector.Index
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
	if w, ok := unwrap(e).(windowed); ok {
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
	var chunkDoc []int // texts[i] is a chunk of document chunkDoc[i]
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
			chunkDoc = append(chunkDoc, i)
		}
	}
	// Queries go to the model itself: a cached query would make the
	// latency figures of the later modes meaningless.
	c.emb = unwrap(e)
	c.vectors = vector.New(e.Dimensions())
	var pending []vector.Chunk
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		vecs, err := e.Embed(ctx, texts[start:end])
		if err != nil {
			return fmt.Errorf("embed chunks %d-%d of %d with %s: %w", start, end, len(texts), e.ModelID(), err)
		}
		for i, v := range vecs {
			n := start + i
			pending = append(pending, vector.Chunk{StartLine: len(pending) + 1, EndLine: len(pending) + 1, Vector: v})
			if n+1 == len(texts) || chunkDoc[n+1] != chunkDoc[n] {
				if err := c.vectors.Upsert(c.ds.Docs[chunkDoc[n]].ID, pending); err != nil {
					return err
				}
				pending = nil
			}
		}
		if progress != nil {
			done := chunkDoc[end-1] + 1
			if end < len(texts) && chunkDoc[end] == chunkDoc[end-1] {
				done-- // that document has chunks still to embed
			}
			progress(done, len(c.ds.Docs))
		}
	}
	return nil
}

// unwrap returns the model behind a cache.
func unwrap(e embed.Embedder) embed.Embedder {
	if u, ok := e.(interface{ Unwrap() embed.Embedder }); ok {
		return u.Unwrap()
	}
	return e
}

// queryVector embeds the query.
func (c *Corpus) queryVector(ctx context.Context, query string) ([]float32, error) {
	if c.emb == nil {
		return nil, fmt.Errorf("semantic mode needs the corpus embedded first")
	}
	qv, err := c.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed query with %s: %w", c.emb.ModelID(), err)
	}
	return qv[0], nil
}

// keywordScores ranks every document that matches the query, best first,
// and returns the same scores by id; the others score 0.
func (c *Corpus) keywordScores(query string) ([]search.Hit, map[string]float64) {
	hits := c.index.Search(query, c.index.Len())
	scores := make(map[string]float64, len(hits))
	for _, h := range hits {
		scores[h.ID] = h.Score
	}
	return hits, scores
}

func ids(hits []search.Hit, k int) []string {
	out := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.ID)
	}
	return out
}

// Ranker returns the ranker of a mode: keyword, semantic, hybrid (seed
// 002's 70% semantic + 30% keyword after per-query normalisation,
// search.FuseWeighted) or rrf (seed 004's reciprocal rank fusion, k = 60).
// Semantic search runs on the edges' vector index (pkg/core/vector, int8
// rows); fusion modes rank, as the edges do, the candidates of both sides'
// top search.FusionPool, each with both of its scores (search.Candidates);
// rrf ranks each candidate on both sides too, where fusing the two top-100
// lists gave a document missing from one list nothing from it (SciFact
// nDCG@10 0.49 against 0.45 before passages).
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
		qv, err := c.queryVector(ctx, q)
		if err != nil {
			return nil, err
		}
		var semTop []search.Hit
		for _, h := range c.vectors.Search(qv, max(k, search.FusionPool), nil) {
			semTop = append(semTop, search.Hit{ID: h.ID, Score: h.Score})
		}
		if mode == "semantic" {
			return ids(semTop, k), nil
		}
		// Both scores of every candidate, as the edges fuse them.
		all, kw := c.keywordScores(q)
		kwTop := all[:min(len(all), max(k, search.FusionPool))]
		semanticOf := func(id string) (float64, bool) {
			h, ok := c.vectors.Score(qv, id)
			return h.Score, ok
		}
		keywordOf := func(id string) (float64, bool) {
			s, ok := kw[id]
			return s, ok
		}
		if mode == "hybrid" {
			return ids(search.FuseHybrid(semTop, kwTop, semanticOf, keywordOf), k), nil
		}
		return ids(search.FuseCandidatesRRF(semTop, kwTop, semanticOf, keywordOf), k), nil
	}), nil
}
