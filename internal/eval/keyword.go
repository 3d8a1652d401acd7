package eval

import (
	"context"

	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// KeywordRanker indexes the corpus in the same BM25F index edges use for
// read_context (title as the title field, text as the body) and ranks with it.
func KeywordRanker(ds *Dataset, progress func(done, total int)) Ranker {
	ix := search.NewIndex()
	for i, d := range ds.Docs {
		ix.Upsert(d.ID, search.Fields{Title: d.Title, Body: d.Text})
		if progress != nil && (i%500 == 0 || i == len(ds.Docs)-1) {
			progress(i+1, len(ds.Docs))
		}
	}
	return RankerFunc(func(_ context.Context, q string, k int) ([]string, error) {
		hits := ix.Search(q, k)
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids, nil
	})
}
