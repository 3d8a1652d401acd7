package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// Corpus holds a dataset indexed for every mode: the keyword index and,
// once Embed has run, one vector per document.
type Corpus struct {
	ds      *Dataset
	index   *search.Index
	emb     embed.Embedder
	vectors [][]float32
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

// Embed embeds every document (title and text; the model clips what it
// cannot see) with e, in batches, reporting progress.
func (c *Corpus) Embed(ctx context.Context, e embed.Embedder, progress func(done, total int)) error {
	const batch = 64
	c.emb = e
	c.vectors = make([][]float32, 0, len(c.ds.Docs))
	for start := 0; start < len(c.ds.Docs); start += batch {
		end := min(start+batch, len(c.ds.Docs))
		texts := make([]string, 0, end-start)
		for _, d := range c.ds.Docs[start:end] {
			texts = append(texts, d.Title+"\n"+d.Text)
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed documents %d-%d with %s: %w", start, end, e.ModelID(), err)
		}
		c.vectors = append(c.vectors, vecs...)
		if progress != nil {
			progress(end, len(c.ds.Docs))
		}
	}
	return nil
}

func (c *Corpus) keyword(query string, k int) []search.Hit { return c.index.Search(query, k) }

func (c *Corpus) semantic(ctx context.Context, query string, k int) ([]search.Hit, error) {
	if c.emb == nil {
		return nil, fmt.Errorf("semantic mode needs the corpus embedded first")
	}
	qv, err := c.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	hits := make([]search.Hit, len(c.vectors))
	for i, v := range c.vectors {
		var dot float32
		for j, x := range qv[0] {
			dot += x * v[j]
		}
		hits[i] = search.Hit{ID: c.ds.Docs[i].ID, Score: float64(dot)}
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return hits[:min(k, len(hits))], nil
}

func ids(hits []search.Hit, k int) []string {
	out := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.ID)
	}
	return out
}

// Ranker returns the ranker of a mode: keyword, semantic, hybrid (seed
// 002's 70% semantic + 30% keyword after per-query normalisation) or rrf
// (seed 004's reciprocal rank fusion, k = 60). Fusion modes draw 100
// candidates from each side.
func (c *Corpus) Ranker(mode string) (Ranker, error) {
	const pool = 100
	switch mode {
	case "keyword":
		return RankerFunc(func(_ context.Context, q string, k int) ([]string, error) {
			return ids(c.keyword(q, k), k), nil
		}), nil
	case "semantic", "hybrid", "rrf":
		if c.emb == nil {
			return nil, fmt.Errorf("mode %s needs an embedder", mode)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q (keyword, semantic, hybrid, rrf)", mode)
	}
	return RankerFunc(func(ctx context.Context, q string, k int) ([]string, error) {
		sem, err := c.semantic(ctx, q, max(k, pool))
		if err != nil {
			return nil, err
		}
		switch mode {
		case "semantic":
			return ids(sem, k), nil
		case "hybrid":
			return ids(search.FuseWeighted(sem, c.keyword(q, max(k, pool)), search.HybridSemanticWeight, search.HybridKeywordWeight), k), nil
		default:
			return ids(search.FuseRRF(search.RRFK, sem, c.keyword(q, max(k, pool))), k), nil
		}
	}), nil
}
