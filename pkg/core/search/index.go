package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Fields are the parts of a document the index scores separately. A match in
// the path or a heading says more about what a document is about than a
// match in its body.
type Fields struct {
	Path     string
	Title    string
	Headings []string
	Body     string
	// Stamp is the caller's, kept beside the document for SearchStamped's
	// keep: a few of its attributes packed in a number, say.
	Stamp uint64
}

// Hit is one ranked result: the document's id and its BM25F score.
type Hit struct {
	ID    string
	Score float64
}

const (
	fieldPath = iota
	fieldTitle
	fieldHeadings
	fieldBody
	numFields
)

// fieldWeights multiply a field's term frequency before saturation.
var fieldWeights = [numFields]float64{
	fieldPath:     3,
	fieldTitle:    2,
	fieldHeadings: 2,
	fieldBody:     1,
}

const (
	k1 = 1.2
	b  = 0.75

	// fuzzyWeight scales the score of an indexed term that stands in for a
	// query word by typo tolerance.
	fuzzyWeight = 0.5
	// maxExpansions bounds how many indexed terms one query word may widen
	// to, the closest first.
	maxExpansions = 8
)

// posting records that a document holds a term, and how often per field.
type posting struct {
	doc uint32
	tf  [numFields]uint16
}

// termEntry is an indexed term: the stem that queries match.
type termEntry struct {
	text string
	// postings are sorted by doc so a document's posting is found by binary
	// search when it is removed.
	postings []posting
	// maxTF is, per field, at least the highest frequency of any posting,
	// and minLen at most the shortest length of the field in a document
	// holding the term there (0 before one does): together they bound the
	// term's score for query pruning. A removal leaves them as they were,
	// still bounds.
	maxTF  [numFields]uint16
	minLen [numFields]uint32
}

// bound widens the term's bounds to cover a posting of frequencies tf in a
// document of field lengths lens.
func (te *termEntry) bound(tf [numFields]uint16, lens *[numFields]uint32) {
	for f, n := range tf {
		if n != 0 {
			te.maxTF[f] = max(te.maxTF[f], n)
			if te.minLen[f] == 0 || lens[f] < te.minLen[f] {
				te.minLen[f] = lens[f]
			}
		}
	}
}

// surfaceEntry is a word as written, before stemming. Typo tolerance works
// on these: "secuirty" is one transposition from "security" but far from
// its stem "secur".
type surfaceEntry struct {
	text string
	term uint32
	// docs counts the documents holding the word.
	docs int
	// bucketPos is the word's position in its fuzzy bucket.
	bucketPos int
}

type docEntry struct {
	id       string
	terms    []uint32
	surfaces []uint32
}

// bucketEntry is a word in a fuzzy bucket with its letter set, which rules
// most words out before an edit distance is computed.
type bucketEntry struct {
	sid     uint32
	letters uint32
}

// letterSet maps each rune of w to one of 32 bits: a to z their own, others
// folded into the rest. One edit adds or removes at most one letter each
// way, so words within distance d differ in at most 2d bits.
func letterSet(w string) uint32 {
	var set uint32
	for _, r := range w {
		if r >= 'a' && r <= 'z' {
			set |= 1 << (r - 'a')
		} else {
			set |= 1 << (26 + uint32(r)%6)
		}
	}
	return set
}

// fuzzyKey groups words by first rune and length in runes, so a typo search
// looks only at words that could be within reach.
type fuzzyKey struct {
	first  rune
	length int
}

// Index is an in-memory BM25F keyword index. It is safe for concurrent use:
// searches run in parallel with each other and wait only for the short
// critical section of an Upsert or Remove.
//
// Removal is eager: a removed document's postings leave their lists and its
// slot is reused, and a term or word no document holds is forgotten, so the
// index stays the size of its live content under any churn.
type Index struct {
	mu sync.RWMutex

	ids      map[string]uint32
	docs     []docEntry
	freeDocs []uint32
	// lens are each document's field lengths, by document like docs but
	// apart: a search reads them for every posting it scores, and packed
	// they share cache lines.
	lens [][numFields]uint32
	// stamps holds each document's Fields.Stamp, by document.
	stamps []uint64
	// termPos is Upsert's: by term id, the term's place among the
	// document's terms, -1 between documents.
	termPos []int32

	termIDs   map[string]uint32
	terms     []termEntry
	freeTerms []uint32

	surfaceIDs   map[string]uint32
	surfaces     []surfaceEntry
	freeSurfaces []uint32
	buckets      map[fuzzyKey][]bucketEntry

	// totalLens sums each field's length over live documents, and
	// fieldDocs counts the documents where the field is not empty.
	totalLens [numFields]uint64
	fieldDocs [numFields]uint64
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{
		ids:        make(map[string]uint32),
		termIDs:    make(map[string]uint32),
		surfaceIDs: make(map[string]uint32),
		buckets:    make(map[fuzzyKey][]bucketEntry),
	}
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids)
}

// analyzed is a document reduced to per-word field frequencies, computed
// before the index lock is taken. Words become terms under the lock,
// where the index knows most of them already (Upsert): stemming each
// document's words here, most of them known, was a fifth of indexing.
type analyzed struct {
	lens [numFields]uint32
	// words maps each word as written to its place in wordList, -1 for a
	// stopword: a word's first sight decides, and every later one is one
	// lookup. wordList holds the indexed words in the order they first
	// appear, wordTF their frequencies by field. joinedStops are stopwords
	// a compound spells ("i-t"), which Tokenize keeps.
	words       map[string]int32
	wordList    []string
	wordTF      [][numFields]uint16
	joinedStops map[string]int32
	// scratch is eachToken's buffer for the tokens it lowers or joins.
	scratch []byte
	// sids, tids and terms are Upsert's, kept for the next document.
	sids, tids []uint32
	terms      []docTerm
}

// docTerm is one of a document's terms with its frequencies by field.
type docTerm struct {
	tid uint32
	tf  [numFields]uint16
}

// spareAnalyses holds analyses Upsert is done with: their maps, grown
// afresh for every document, were a tenth of the garbage of indexing a
// repository.
var spareAnalyses = sync.Pool{New: func() any {
	return &analyzed{words: make(map[string]int32)}
}}

// release empties a, which shares its words with the document it was made
// from, and keeps it for the next.
func (a *analyzed) release() {
	// Clearing a map costs what it once held: maps a large document grew
	// are dropped rather than cleared for every small one after it.
	if len(a.words) > maxKeptWords {
		a.words = make(map[string]int32)
	} else {
		clear(a.words)
	}
	clear(a.wordList)
	clear(a.joinedStops)
	a.wordList, a.wordTF, a.lens = a.wordList[:0], a.wordTF[:0], [numFields]uint32{}
	a.sids, a.tids, a.terms = a.sids[:0], a.tids[:0], a.terms[:0]
	spareAnalyses.Put(a)
}

// maxKeptWords is the most distinct words an analysis keeps its maps for.
const maxKeptWords = 8192

// analyzeFields analyses doc; the caller releases the analysis.
func analyzeFields(doc Fields) *analyzed {
	a := spareAnalyses.Get().(*analyzed)
	f := 0
	add := func(w string, scratch []byte, joined bool) {
		var i int32
		var ok bool
		if scratch != nil {
			i, ok = a.words[string(scratch)]
		} else {
			i, ok = a.words[w]
		}
		if !ok {
			if scratch != nil {
				w = string(scratch)
			}
			if stopwords[w] {
				i = -1
				a.words[w] = i
			} else {
				i = a.addWord(w)
				a.words[w] = i
			}
		} else if i < 0 && joined && scratch != nil {
			w = string(scratch)
		}
		if i < 0 {
			if !joined {
				return
			}
			// Tokenize keeps the parts of a compound joined even when they
			// spell a stopword ("i-t"); the word stays one in the map.
			i = a.joinedStopword(w)
		}
		if tf := &a.wordTF[i][f]; *tf < math.MaxUint16 {
			*tf++
		}
		a.lens[f]++
	}
	f = fieldPath
	eachToken(doc.Path, &a.scratch, add)
	f = fieldTitle
	eachToken(doc.Title, &a.scratch, add)
	f = fieldHeadings
	for _, h := range doc.Headings {
		eachToken(h, &a.scratch, add)
	}
	f = fieldBody
	eachToken(doc.Body, &a.scratch, add)
	return a
}

// addWord adds word w, first seen, and returns its place in a.wordList.
func (a *analyzed) addWord(w string) int32 {
	a.wordList = append(a.wordList, w)
	a.wordTF = append(a.wordTF, [numFields]uint16{})
	return int32(len(a.wordList) - 1)
}

// joinedStopword is addWord for a compound's joined parts that spell a
// stopword: kept apart from words, where the stopword stands dropped.
func (a *analyzed) joinedStopword(w string) int32 {
	if a.joinedStops == nil {
		a.joinedStops = make(map[string]int32)
	}
	if i, ok := a.joinedStops[w]; ok {
		return i
	}
	i := a.addWord(w)
	a.joinedStops[w] = i
	return i
}

// unresolved marks a word Upsert has not found in the index.
const unresolved = math.MaxUint32

// Upsert indexes doc under id, replacing whatever id held before.
func (ix *Index) Upsert(id string, doc Fields) {
	// Terms and words go in in the order they first appear in the
	// document, so ids do not depend on map order. They may share the
	// document's memory (eachToken); the index keeps copies of those it
	// adds, so as not to hold whole texts.
	a := analyzeFields(doc)
	defer a.release()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if d, ok := ix.ids[id]; ok {
		ix.removeLocked(d)
	}
	d := alloc(&ix.docs, &ix.freeDocs)
	if int(d) == len(ix.lens) {
		ix.lens = append(ix.lens, a.lens)
		ix.stamps = append(ix.stamps, doc.Stamp)
	} else {
		ix.lens[d] = a.lens
		ix.stamps[d] = doc.Stamp
	}
	e := &ix.docs[d]
	e.id = id
	// A word the index holds names its term; only the others are stemmed
	// and their terms looked up by text. New terms get their ids in the
	// order their first words appear.
	for _, w := range a.wordList {
		if sid, ok := ix.surfaceIDs[w]; ok {
			a.sids = append(a.sids, sid)
			a.tids = append(a.tids, ix.surfaces[sid].term)
		} else {
			a.sids = append(a.sids, unresolved)
			a.tids = append(a.tids, ix.termLocked(stem(w)))
		}
	}
	// The words' frequencies gathered by term, in the order the terms
	// first appear; termPos finds a term's place, and is reset after.
	for len(ix.termPos) < len(ix.terms) {
		ix.termPos = append(ix.termPos, -1)
	}
	for k, tid := range a.tids {
		if at := ix.termPos[tid]; at >= 0 {
			tf := &a.terms[at].tf
			for f, n := range a.wordTF[k] {
				tf[f] = uint16(min(int(tf[f])+int(n), math.MaxUint16))
			}
			continue
		}
		ix.termPos[tid] = int32(len(a.terms))
		a.terms = append(a.terms, docTerm{tid: tid, tf: a.wordTF[k]})
	}
	e.terms = make([]uint32, 0, len(a.terms))
	for _, t := range a.terms {
		ix.termPos[t.tid] = -1
		e.terms = append(e.terms, t.tid)
		ps := ix.terms[t.tid].postings
		p := posting{doc: d, tf: t.tf}
		if n := len(ps); n == 0 || ps[n-1].doc < d {
			ps = append(ps, p)
		} else {
			at, _ := slices.BinarySearchFunc(ps, d, cmpPosting)
			ps = slices.Insert(ps, at, p)
		}
		te := &ix.terms[t.tid]
		te.postings = ps
		te.bound(t.tf, &a.lens)
	}
	e.surfaces = make([]uint32, 0, len(a.wordList))
	for k, w := range a.wordList {
		sid := a.sids[k]
		if sid == unresolved {
			sid = ix.newSurfaceLocked(w, a.tids[k])
		} else {
			ix.surfaces[sid].docs++
		}
		e.surfaces = append(e.surfaces, sid)
	}
	for f, l := range a.lens {
		ix.totalLens[f] += uint64(l)
		if l > 0 {
			ix.fieldDocs[f]++
		}
	}
	ix.ids[id] = d
}

// Remove drops id from the index. Removing an absent id does nothing.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if d, ok := ix.ids[id]; ok {
		ix.removeLocked(d)
	}
}

func cmpPosting(p posting, d uint32) int { return cmp.Compare(p.doc, d) }

func (ix *Index) removeLocked(d uint32) {
	e := &ix.docs[d]
	for _, tid := range e.terms {
		te := &ix.terms[tid]
		if at, ok := slices.BinarySearchFunc(te.postings, d, cmpPosting); ok {
			te.postings = slices.Delete(te.postings, at, at+1)
		}
		if len(te.postings) == 0 {
			delete(ix.termIDs, te.text)
			*te = termEntry{}
			ix.freeTerms = append(ix.freeTerms, tid)
		}
	}
	for _, sid := range e.surfaces {
		se := &ix.surfaces[sid]
		if se.docs--; se.docs == 0 {
			ix.dropSurfaceLocked(sid)
		}
	}
	for f, l := range ix.lens[d] {
		ix.totalLens[f] -= uint64(l)
		if l > 0 {
			ix.fieldDocs[f]--
		}
	}
	ix.lens[d] = [numFields]uint32{}
	ix.stamps[d] = 0
	delete(ix.ids, e.id)
	*e = docEntry{}
	ix.freeDocs = append(ix.freeDocs, d)
}

// termLocked returns the id of term t, adding it if it is new.
func (ix *Index) termLocked(t string) uint32 {
	if tid, ok := ix.termIDs[t]; ok {
		return tid
	}
	tid := alloc(&ix.terms, &ix.freeTerms)
	t = strings.Clone(t)
	ix.terms[tid] = termEntry{text: t}
	ix.termIDs[t] = tid
	return tid
}

// newSurfaceLocked adds word w, whose term is tid, held by one document,
// and returns its id.
func (ix *Index) newSurfaceLocked(w string, tid uint32) uint32 {
	sid := alloc(&ix.surfaces, &ix.freeSurfaces)
	w = strings.Clone(w)
	k := keyOf(w)
	ix.surfaces[sid] = surfaceEntry{text: w, term: tid, docs: 1, bucketPos: len(ix.buckets[k])}
	ix.buckets[k] = append(ix.buckets[k], bucketEntry{sid: sid, letters: letterSet(w)})
	ix.surfaceIDs[w] = sid
	return sid
}

func (ix *Index) dropSurfaceLocked(sid uint32) {
	se := &ix.surfaces[sid]
	k := keyOf(se.text)
	bk := ix.buckets[k]
	last := bk[len(bk)-1]
	bk[se.bucketPos] = last
	ix.surfaces[last.sid].bucketPos = se.bucketPos
	bk = bk[:len(bk)-1]
	if len(bk) == 0 {
		delete(ix.buckets, k)
	} else {
		ix.buckets[k] = bk
	}
	delete(ix.surfaceIDs, se.text)
	*se = surfaceEntry{}
	ix.freeSurfaces = append(ix.freeSurfaces, sid)
}

// alloc returns a free slot of *s, reusing one from *free if it can.
func alloc[T any](s *[]T, free *[]uint32) uint32 {
	if n := len(*free); n > 0 {
		id := (*free)[n-1]
		*free = (*free)[:n-1]
		return id
	}
	var zero T
	*s = append(*s, zero)
	return uint32(len(*s) - 1)
}

func keyOf(w string) fuzzyKey {
	r, _ := utf8.DecodeRuneInString(w)
	return fuzzyKey{first: r, length: utf8.RuneCountInString(w)}
}
