package search

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// Search returns the documents that best match query, best first, at most
// limit of them; a limit of zero or less returns every match. Scores are
// BM25F: each query term's frequency is weighted per field and normalised by
// the field's length, saturated with k1, and multiplied by the term's inverse
// document frequency. Equal scores are ordered by id.
//
// The query's function words ("how", "do", "I", "what": QueryTerms) are
// not scored unless it has no other words.
//
// A query term found in no document is replaced by the indexed terms within
// one typo (terms of four or more letters) or two (eight or more), sharing
// its first letter, at half weight. A query none of whose terms match returns
// no hits.
func (ix *Index) Search(query string, limit int) []Hit {
	return ix.SearchFiltered(query, limit, nil)
}

// SearchFiltered is Search over only the documents allow accepts (all when
// allow is nil): the limit applies after filtering, so a filter never
// empties a page that other documents would have filled. allow runs with
// the index's read lock held and must not call back into the index.
func (ix *Index) SearchFiltered(query string, limit int, allow func(id string) bool) []Hit {
	if allow == nil {
		return ix.SearchWeighted(query, limit, nil)
	}
	return ix.SearchWeighted(query, limit, func(id string) float64 {
		if allow(id) {
			return 1
		}
		return 0
	})
}

// SearchWeighted is Search with each document's score multiplied by
// weight(id) before the best limit are picked (all weigh 1 when weight is
// nil): a prior on documents, such as the edge's preference for canonical
// pages over translations, that the limit then respects. A weight of zero
// or less leaves the document out. weight runs with the index's read lock
// held and must not call back into the index.
func (ix *Index) SearchWeighted(query string, limit int, weight func(id string) float64) []Hit {
	words := QueryTerms(query)
	if len(words) == 0 {
		return nil
	}
	// Query terms are scored once each, in sorted order so that float sums
	// are the same run to run; the words as written are kept for typos.
	type queryTerm struct{ term, word string }
	qterms := make([]queryTerm, len(words))
	for k, w := range words {
		qterms[k] = queryTerm{stem(w), w}
	}
	slices.SortFunc(qterms, func(x, y queryTerm) int {
		return cmp.Or(strings.Compare(x.term, y.term), strings.Compare(x.word, y.word))
	})
	qterms = slices.CompactFunc(qterms, func(x, y queryTerm) bool { return x.term == y.term })

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := len(ix.ids)
	if n == 0 {
		return nil
	}
	// A field's average length is over the documents that have it, as in
	// Lucene: most files have no headings, and counting them would make
	// every heading look long. An average of 0 is never divided by, since
	// no posting then has a frequency in that field.
	var avg [numFields]float64
	for f := range numFields {
		if ix.fieldDocs[f] > 0 {
			avg[f] = float64(ix.totalLens[f]) / float64(ix.fieldDocs[f])
		}
	}

	sc := getScratch(len(ix.docs))
	defer putScratch(sc)
	for _, q := range qterms {
		if tid, ok := ix.termIDs[q.term]; ok {
			ix.scoreTermLocked(sc, tid, 1, n, &avg)
			continue
		}
		for _, tid := range ix.expandLocked(sc, q.word) {
			ix.scoreTermLocked(sc, tid, fuzzyWeight, n, &avg)
		}
	}
	return ix.topLocked(sc, limit, weight)
}

func (ix *Index) scoreTermLocked(sc *scratch, tid uint32, weight float64, n int, avg *[numFields]float64) {
	ps := ix.terms[tid].postings
	df := float64(len(ps))
	idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	for _, p := range ps {
		lens := &ix.docs[p.doc].lens
		var tf float64
		for f := range numFields {
			if p.tf[f] != 0 {
				norm := 1 - b + b*float64(lens[f])/avg[f]
				tf += fieldWeights[f] * float64(p.tf[f]) / norm
			}
		}
		if sc.scores[p.doc] == 0 {
			sc.touched = append(sc.touched, p.doc)
		}
		// idf > 0 and tf > 0, so a touched document never scores 0.
		sc.scores[p.doc] += weight * idf * tf * (k1 + 1) / (tf + k1)
	}
}

// topLocked picks the best limit touched documents, their scores weighed
// by weight, with a bounded min-heap whose root is the worst hit kept so
// far.
func (ix *Index) topLocked(sc *scratch, limit int, weight func(string) float64) []Hit {
	// Candidates go in their own slice: sc.touched must stay whole, since
	// it is what putScratch zeroes.
	cands := sc.touched
	if weight != nil {
		cands = make([]uint32, 0, len(sc.touched))
		for _, d := range sc.touched {
			if w := weight(ix.docs[d].id); w > 0 {
				sc.scores[d] *= w // putScratch zeroes it after
				cands = append(cands, d)
			}
		}
	}
	if limit <= 0 || limit > len(cands) {
		limit = len(cands)
	}
	if limit == 0 {
		return nil
	}
	hits := make([]Hit, 0, limit)
	// worse reports whether hits[i] ranks below hits[j].
	worse := func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score < hits[j].Score
		}
		return hits[i].ID > hits[j].ID
	}
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < len(hits) && worse(l, w) {
				w = l
			}
			if r < len(hits) && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			hits[i], hits[w] = hits[w], hits[i]
			i = w
		}
	}
	for _, d := range cands {
		h := Hit{ID: ix.docs[d].id, Score: sc.scores[d]}
		if len(hits) < limit {
			hits = append(hits, h)
			for i := len(hits) - 1; i > 0; {
				parent := (i - 1) / 2
				if !worse(i, parent) {
					break
				}
				hits[i], hits[parent] = hits[parent], hits[i]
				i = parent
			}
			continue
		}
		if root := hits[0]; h.Score > root.Score || (h.Score == root.Score && h.ID < root.ID) {
			hits[0] = h
			down(0)
		}
	}
	slices.SortFunc(hits, func(x, y Hit) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return hits
}

// expandLocked returns the terms of the indexed words within typo reach of
// the query word q, closest and most common first. Only words with q's first
// rune and a length within the allowed distance are examined, which keeps
// the cost to a few buckets however many words the index holds.
func (ix *Index) expandLocked(sc *scratch, q string) []uint32 {
	sc.query = appendRunes(sc.query[:0], q)
	qr := sc.query
	maxDist := 0
	switch {
	case len(qr) >= 8:
		maxDist = 2
	case len(qr) >= 4:
		maxDist = 1
	default:
		return nil
	}
	type candidate struct {
		tid  uint32
		dist int
		df   int
	}
	var cands []candidate
	letters := letterSet(q)
	for l := len(qr) - maxDist; l <= len(qr)+maxDist; l++ {
		for _, be := range ix.buckets[fuzzyKey{first: qr[0], length: l}] {
			if bits.OnesCount32(letters^be.letters) > 2*maxDist {
				continue
			}
			se := &ix.surfaces[be.sid]
			sc.word = appendRunes(sc.word[:0], se.text)
			if d := sc.distance(qr, sc.word, maxDist); d <= maxDist {
				cands = append(cands, candidate{se.term, d, len(ix.terms[se.term].postings)})
			}
		}
	}
	slices.SortFunc(cands, func(x, y candidate) int {
		return cmp.Or(
			cmp.Compare(x.dist, y.dist),
			cmp.Compare(y.df, x.df),
			strings.Compare(ix.terms[x.tid].text, ix.terms[y.tid].text),
		)
	})
	// Several words may share a term ("embeds", "embedded"); keep its
	// closest.
	seen := make(map[uint32]bool, len(cands))
	cands = slices.DeleteFunc(cands, func(c candidate) bool {
		dup := seen[c.tid]
		seen[c.tid] = true
		return dup
	})
	if len(cands) > maxExpansions {
		cands = cands[:maxExpansions]
	}
	out := make([]uint32, len(cands))
	for k, c := range cands {
		out[k] = c.tid
	}
	return out
}

func appendRunes(dst []rune, s string) []rune {
	for _, r := range s {
		dst = append(dst, r)
	}
	return dst
}

// distance returns the optimal string alignment distance between a and b
// (Levenshtein plus transposition of neighbours), or maxDist+1 as soon as it
// must exceed maxDist.
func (sc *scratch) distance(a, b []rune, maxDist int) int {
	if abs(len(a)-len(b)) > maxDist {
		return maxDist + 1
	}
	n := len(b) + 1
	sc.rows = slices.Grow(sc.rows[:0], 3*n)[:3*n]
	prev2, prev, cur := sc.rows[:n], sc.rows[n:2*n], sc.rows[2*n:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > maxDist {
			return maxDist + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], maxDist+1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// scratch holds one search's working memory, pooled so a search allocates
// little more than its result.
type scratch struct {
	scores  []float64
	touched []uint32
	query   []rune
	word    []rune
	rows    []int
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(docs int) *scratch {
	sc := scratchPool.Get().(*scratch)
	if cap(sc.scores) < docs {
		sc.scores = make([]float64, docs)
	}
	sc.scores = sc.scores[:docs]
	return sc
}

func putScratch(sc *scratch) {
	for _, d := range sc.touched {
		sc.scores[d] = 0
	}
	sc.touched = sc.touched[:0]
	scratchPool.Put(sc)
}
