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
// or less leaves the document out, and one above 1 is not allowed: the
// search skips documents whose score cannot reach the best limit even at
// weight 1. weight runs with the index's read lock held and must not call
// back into the index.
func (ix *Index) SearchWeighted(query string, limit int, weight func(id string) float64) []Hit {
	hits, _ := ix.search(query, limit, ix.byID(weight), true)
	return hits
}

// Verdicts of a SearchStamped keep.
const (
	Refuse = -1 // the document is not wanted
	Ask    = 0  // allow decides
	Admit  = 1  // the document is wanted; allow is not asked
)

// SearchStamped is SearchFiltered with keep asked first, of the stamp the
// document was indexed with (Fields.Stamp): allow is asked only of the
// documents keep answers Ask. keep reads a number the index holds beside
// its own figures, where allow looks a document up by its id in the
// caller's records, a cache miss each: a filter that most of a query's
// documents fail was most of a filtered search's time. keep must never
// Refuse a document allow accepts, nor Admit one it refuses.
func (ix *Index) SearchStamped(query string, limit int, keep func(stamp uint64) int, allow func(id string) bool) []Hit {
	weight := func(d uint32) float64 {
		switch keep(ix.stamps[d]) {
		case Refuse:
			return 0
		case Admit:
			return 1
		}
		if allow != nil && !allow(ix.docs[d].id) {
			return 0
		}
		return 1
	}
	hits, _ := ix.search(query, limit, weight, true)
	return hits
}

// docWeight is a search's weight of document d (see SearchWeighted).
type docWeight func(d uint32) float64

// byID is weight asked by document id; nil for nil.
func (ix *Index) byID(weight func(id string) float64) docWeight {
	if weight == nil {
		return nil
	}
	return func(d uint32) float64 { return weight(ix.docs[d].id) }
}

// search is SearchWeighted, which prunes lists when prune is set and says
// whether it did; the tests compare it with the whole scoring.
func (ix *Index) search(query string, limit int, weight docWeight, prune bool) (hits []Hit, pruned bool) {
	words := QueryTerms(query)
	if len(words) == 0 {
		return nil, false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.ids) == 0 {
		return nil, false
	}
	sc := getScratch(len(ix.docs))
	defer putScratch(sc)
	lists := ix.listsLocked(sc, words)
	var cands []candidate
	var threshold float64
	for i, l := range lists {
		rest, restPostings := 0.0, 0
		for _, r := range lists[i+1:] {
			rest += r.bound
			restPostings += len(ix.terms[r.tid].postings)
		}
		if pruned {
			ix.scoreCandidatesLocked(sc, cands, l)
			cands, threshold = narrow(sc, cands, limit, rest, threshold)
			continue
		}
		ix.scoreTermLocked(sc, l)
		// Finding the threshold costs two passes over the documents
		// touched so far, a few comparisons each, where scoring a posting
		// costs several times that.
		if prune && limit > 0 && len(sc.touched) > limit && len(sc.touched) < 4*restPostings {
			cands, threshold, pruned = ix.candidatesLocked(sc, lists[i+1:], limit, weight, rest, restPostings)
		}
	}
	if pruned {
		return ix.pickLocked(sc, weighCandidates(sc, cands), limit, nil), true
	}
	return ix.pickLocked(sc, sc.touched, limit, weight), false
}

// listsLocked returns the posting lists a query of words scores, in the
// order their gains are added to a document's score (the lists that can
// add the most first), and sets sc's field averages.
func (ix *Index) listsLocked(sc *scratch, words []string) []termList {
	// Query terms are scored once each, in an order fixed by the terms
	// (sorted here, then by their bounds below) so that float sums are the
	// same run to run; the words as written are kept for typos.
	type queryTerm struct{ term, word string }
	qterms := make([]queryTerm, len(words))
	for k, w := range words {
		qterms[k] = queryTerm{stem(w), w}
	}
	slices.SortFunc(qterms, func(x, y queryTerm) int {
		return cmp.Or(strings.Compare(x.term, y.term), strings.Compare(x.word, y.word))
	})
	qterms = slices.CompactFunc(qterms, func(x, y queryTerm) bool { return x.term == y.term })
	n := len(ix.ids)
	// A field's average length is over the documents that have it, as in
	// Lucene: most files have no headings, and counting them would make
	// every heading look long. An average of 0 is never divided by, since
	// no posting then has a frequency in that field.
	avg := &sc.norms.avg
	for f := range numFields {
		if ix.fieldDocs[f] > 0 {
			avg[f] = float64(ix.totalLens[f]) / float64(ix.fieldDocs[f])
		}
	}
	var lists []termList
	for _, q := range qterms {
		if tid, ok := ix.termIDs[q.term]; ok {
			lists = append(lists, ix.listLocked(tid, 1, n, avg))
			continue
		}
		for _, tid := range ix.expandLocked(sc, q.word) {
			lists = append(lists, ix.listLocked(tid, fuzzyWeight, n, avg))
		}
	}
	// The lists that can add the most go first: once they are scored, the
	// best limit documents may already score more than the remaining lists
	// can give a document they alone hold (MaxScore). Those lists are then
	// only looked up for the documents that can still make the top, by
	// search in their sorted postings, rather than scored whole.
	slices.SortStableFunc(lists, func(x, y termList) int { return cmp.Compare(y.bound, x.bound) })
	return lists
}

// Scores returns the score Search gives each of ids for query, 0 for one
// that holds no query term or is not indexed: the keyword side of a fused
// ranking, asked for the candidates the other side found, where scoring
// every document that holds a query term to have them all was most of a
// hybrid search's time. Each score is summed in Search's order, so it is
// the very float Search computes.
func (ix *Index) Scores(query string, ids []string) []float64 {
	out := make([]float64, len(ids))
	words := QueryTerms(query)
	if len(words) == 0 || len(ids) == 0 {
		return out
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.ids) == 0 {
		return out
	}
	sc := getScratch(len(ix.docs))
	defer putScratch(sc)
	lists := ix.listsLocked(sc, words)
	for i, id := range ids {
		d, ok := ix.ids[id]
		if !ok {
			continue
		}
		var s float64
		for _, l := range lists {
			ps := ix.terms[l.tid].postings
			if k, found := slices.BinarySearchFunc(ps, d, cmpPosting); found {
				s += ix.gain(sc, l, &ps[k])
			}
		}
		out[i] = s
	}
	return out
}

// termList is one posting list a query scores: a query word's term, or one
// its typo tolerance widened to at fuzzyWeight.
type termList struct {
	tid uint32
	// scale is the list's weight times its idf times k1 + 1.
	scale float64
	// bound is at least the most any document gains from the list.
	bound float64
	// fields are the first nf of numFields: those the term may have a
	// frequency in (maxTF not 0). A field no posting has the term in adds
	// exactly 0 to every gain; not adding those zeros made a keyword
	// search of 100,000 memories 12-15 % faster on average.
	fields [numFields]uint8
	nf     int
}

func (ix *Index) listLocked(tid uint32, weight float64, n int, avg *[numFields]float64) termList {
	t := &ix.terms[tid]
	df := float64(len(t.postings))
	idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	l := termList{tid: tid, scale: weight * idf * (k1 + 1)}
	// A field's part grows with the frequency and shrinks with the length,
	// which is at least the frequency: the highest frequency over the
	// shortest length it can have bounds it, and saturation only grows
	// with the sum.
	var tf float64
	for f := range numFields {
		if m := t.maxTF[f]; m != 0 {
			length := max(t.minLen[f], uint32(m))
			tf += fieldWeights[f] * float64(m) / (1 - b + b*float64(length)/avg[f])
			l.fields[l.nf] = uint8(f)
			l.nf++
		}
	}
	// The margin covers the rounding of the sums the bound is compared
	// with: a bound a few ulps low could drop a document that ties.
	l.bound = l.scale * tf / (tf + k1) * (1 + 1e-9)
	return l
}

// gain is what document p.doc's posting in list l adds to its score.
func (ix *Index) gain(sc *scratch, l termList, p *posting) float64 {
	lens := &ix.lens[p.doc]
	// Every field the term may be in is summed, those this posting lacks
	// as 0, which adds nothing: a branch per field mispredicts more than
	// the arithmetic costs.
	var tf float64
	for _, f := range l.fields[:l.nf] {
		tf += fieldWeights[f] * float64(p.tf[f]) * sc.norms.of(int(f), lens[f])
	}
	return l.scale * tf / (tf + k1)
}

// gainFilled is gain once sc.norms.fill has run: the normalisation of a
// length below normCache is read, not computed on first use, which spares
// a posting two branches per field on the long lists a query of common
// words scores. The floats are gain's.
func (ix *Index) gainFilled(sc *scratch, l termList, p *posting) float64 {
	lens := &ix.lens[p.doc]
	var tf float64
	for _, f := range l.fields[:l.nf] {
		var nm float64
		if n := lens[f]; n < normCache {
			nm = sc.norms.inv[f][n]
		} else {
			nm = sc.norms.of(int(f), n)
		}
		tf += fieldWeights[f] * float64(p.tf[f]) * nm
	}
	return l.scale * tf / (tf + k1)
}

// norms are a query's length normalisations, 1 / (1 - b + b·len/avg), per
// field: a division a posting need not pay again for a length seen before.
type norms struct {
	avg [numFields]float64
	// inv holds those of lengths below normCache, 0 until computed.
	inv [numFields][normCache]float64
}

const normCache = 256

// fill computes every normalisation below normCache (those of a field no
// document has are 0, as of returns them).
func (nm *norms) fill() {
	for f := range numFields {
		if nm.avg[f] == 0 {
			continue
		}
		for length := range uint32(normCache) {
			nm.inv[f][length] = 1 / (1 - b + b*float64(length)/nm.avg[f])
		}
	}
}

func (nm *norms) of(f int, length uint32) float64 {
	if nm.avg[f] == 0 {
		return 0 // no document has the field, so no posting a frequency in it
	}
	if length < normCache {
		if v := nm.inv[f][length]; v != 0 {
			return v
		}
		v := 1 / (1 - b + b*float64(length)/nm.avg[f])
		nm.inv[f][length] = v
		return v
	}
	return 1 / (1 - b + b*float64(length)/nm.avg[f])
}

func (ix *Index) scoreTermLocked(sc *scratch, l termList) {
	ps := ix.terms[l.tid].postings
	// Filling the normalisations costs about what a thousand postings do.
	if !sc.filled && len(ps) >= 1024 {
		sc.norms.fill()
		sc.filled = true
	}
	if !sc.filled {
		for k := range ps {
			p := &ps[k]
			if sc.scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.scores[p.doc] += ix.gain(sc, l, p)
		}
		return
	}
	for k := range ps {
		p := &ps[k]
		if sc.scores[p.doc] == 0 {
			sc.touched = append(sc.touched, p.doc)
		}
		// idf > 0 and tf > 0, so a touched document never scores 0.
		sc.scores[p.doc] += ix.gainFilled(sc, l, p)
	}
}

// candidate is a document that may still make the best limit once the
// query's lists are pruned, with its weight.
type candidate struct {
	doc    uint32
	weight float64
}

// candidatesLocked decides whether the lists left, which can add at most
// rest to a document, can be pruned. The best limit documents so far are
// scored whole, the lists left looked up for each: the least of those,
// weighed, is a score the final best limit reach. When it is more than
// rest, the most an untouched document could reach (a weight is at most
// 1), the lists left need only be looked up for the touched documents
// that can still reach it. candidatesLocked returns those, sorted by
// document, with the threshold, and true; or false when nothing can be
// pruned yet, or when so many documents remain that looking each up in
// the lists left, which hold restPostings, would cost about as much as
// scoring them whole. weight is asked only of documents whose score
// alone could decide.
func (ix *Index) candidatesLocked(sc *scratch, left []termList, limit int, weight docWeight, rest float64, restPostings int) ([]candidate, float64, bool) {
	weigh := func(d uint32) float64 {
		if weight == nil {
			return 1
		}
		return weight(d)
	}
	touched := sc.touched
	top := bestOf(len(touched), limit, func(i int) float64 {
		if weight == nil {
			return sc.scores[touched[i]]
		}
		return weigh(touched[i]) * sc.scores[touched[i]]
	}, func(i int) float64 { return sc.scores[touched[i]] })
	if len(top) < limit {
		return nil, 0, false
	}
	threshold := math.Inf(1)
	for _, r := range top {
		d := touched[r.i]
		whole := sc.scores[d]
		for _, l := range left {
			ps := ix.terms[l.tid].postings
			if at, ok := slices.BinarySearchFunc(ps, d, cmpPosting); ok {
				whole += ix.gain(sc, l, &ps[at])
			}
		}
		threshold = min(threshold, weigh(d)*whole)
	}
	if threshold <= rest {
		return nil, 0, false
	}
	cands := sc.cands[:0]
	defer func() { sc.cands = cands[:0] }() // kept for the next search's
	for _, d := range sc.touched {
		s := sc.scores[d]
		if s+rest < threshold {
			continue
		}
		if len(cands) > restPostings/2 {
			return nil, 0, false
		}
		if w := weigh(d); w > 0 && w*(s+rest) >= threshold {
			cands = append(cands, candidate{d, w})
		}
	}
	slices.SortFunc(cands, func(x, y candidate) int { return cmp.Compare(x.doc, y.doc) })
	return cands, threshold, true
}

// ranked is the i-th of the documents bestOf ranks, with its score.
type ranked struct {
	i     int
	score float64
}

// bestOf returns the limit of i in [0, n) with the highest positive
// score(i), in no order; fewer when fewer are positive. ceiling(i) is at
// least score(i) and cheaper: score is not asked when the ceiling cannot
// enter the best.
func bestOf(n, limit int, score, ceiling func(i int) float64) []ranked {
	// A min-heap: its root is the one to beat.
	best := make([]ranked, 0, limit)
	for i := range n {
		if len(best) == limit && ceiling(i) <= best[0].score {
			continue
		}
		s := score(i)
		switch {
		case s <= 0:
		case len(best) < limit:
			best = append(best, ranked{i, s})
			for k := len(best) - 1; k > 0 && best[k].score < best[(k-1)/2].score; k = (k - 1) / 2 {
				best[k], best[(k-1)/2] = best[(k-1)/2], best[k]
			}
		case s > best[0].score:
			best[0] = ranked{i, s}
			for k := 0; ; {
				m, l, r := k, 2*k+1, 2*k+2
				if l < len(best) && best[l].score < best[m].score {
					m = l
				}
				if r < len(best) && best[r].score < best[m].score {
					m = r
				}
				if m == k {
					break
				}
				best[k], best[m] = best[m], best[k]
				k = m
			}
		}
	}
	return best
}

// scoreCandidatesLocked adds list l's gains to the candidates it holds.
// Both are sorted by document: a list much longer than the candidates is
// galloped through, a shorter one merged.
func (ix *Index) scoreCandidatesLocked(sc *scratch, cands []candidate, l termList) {
	ps := ix.terms[l.tid].postings
	lo := 0
	if len(ps) < 8*len(cands) {
		for _, c := range cands {
			for lo < len(ps) && ps[lo].doc < c.doc {
				lo++
			}
			if lo == len(ps) {
				return
			}
			if ps[lo].doc == c.doc {
				sc.scores[c.doc] += ix.gain(sc, l, &ps[lo])
			}
		}
		return
	}
	for _, c := range cands {
		step := 1
		for lo+step < len(ps) && ps[lo+step].doc < c.doc {
			lo += step
			step *= 2
		}
		hi := min(lo+step+1, len(ps))
		at, found := slices.BinarySearchFunc(ps[lo:hi], c.doc, cmpPosting)
		lo += at
		if found {
			sc.scores[c.doc] += ix.gain(sc, l, &ps[lo])
		}
		if lo >= len(ps) {
			return
		}
	}
}

// narrow drops the candidates that can no longer reach the best limit
// when the lists left add at most rest, and returns them with the
// threshold raised to what the best limit have reached so far.
func narrow(sc *scratch, cands []candidate, limit int, rest, threshold float64) ([]candidate, float64) {
	if len(cands) <= limit {
		return cands, threshold
	}
	weighed := func(i int) float64 { return cands[i].weight * sc.scores[cands[i].doc] }
	if top := bestOf(len(cands), limit, weighed, weighed); len(top) == limit {
		kth := top[0].score // the heap's root
		threshold = max(threshold, kth)
	}
	return slices.DeleteFunc(cands, func(c candidate) bool { return c.weight*(sc.scores[c.doc]+rest) < threshold }), threshold
}

// weighCandidates multiplies the candidates' scores by their weights
// (putScratch zeroes them after) and returns their documents.
func weighCandidates(sc *scratch, cands []candidate) []uint32 {
	docs := make([]uint32, len(cands))
	for i, c := range cands {
		sc.scores[c.doc] *= c.weight
		docs[i] = c.doc
	}
	return docs
}

// pickLocked returns the best limit of cands by their scores in sc weighed
// by weight (when not nil), best first, equal scores by id, with a bounded
// min-heap whose root is the worst hit kept so far.
func (ix *Index) pickLocked(sc *scratch, cands []uint32, limit int, weight docWeight) []Hit {
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
		s := sc.scores[d]
		if len(hits) == limit && s < hits[0].Score {
			// Most documents: decided without reading the id or asking
			// the weight, which is at most 1.
			continue
		}
		if weight != nil {
			w := weight(d)
			if w <= 0 {
				continue
			}
			s *= w
		}
		id := ix.docs[d].id
		h := Hit{ID: id, Score: s}
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
	norms   norms
	filled  bool // norms.fill has run
	scores  []float64
	touched []uint32
	// cands are the documents still in the running once a query prunes.
	cands []candidate
	query []rune
	word  []rune
	rows  []int
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
	sc.norms, sc.filled = norms{}, false
	scratchPool.Put(sc)
}
