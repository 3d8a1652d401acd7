package eval

// KeywordRanker indexes the corpus in the same BM25F index edges use for
// read_context (title as the title field, text as the body) and ranks with it.
func KeywordRanker(ds *Dataset, progress func(done, total int)) Ranker {
	r, _ := NewCorpus(ds, progress).Ranker("keyword")
	return r
}
