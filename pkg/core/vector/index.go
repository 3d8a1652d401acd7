package vector

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Chunk is one chunk's vector and the 1-indexed, inclusive line range it
// covers.
type Chunk struct {
	StartLine int
	EndLine   int
	Vector    []float32
	// Codes, when set, is the vector as AppendCodes writes it (the scale,
	// then one int8 code per dimension) and Vector is unused: what the
	// index keeps, taken as it is. An edge replaying records of int8
	// codes spares a float32 copy of each vector and its quantisation.
	Codes []byte
}

// Dims is the length of c's vector.
func (c Chunk) Dims() int {
	if c.Codes != nil {
		return len(c.Codes) - 4
	}
	return len(c.Vector)
}

// Hit is a document's best chunk for a query.
type Hit struct {
	ID string
	// Score is the cosine similarity of the best chunk.
	Score float64
	// Chunk is the best chunk's position in the document's chunks, and
	// StartLine and EndLine its line range.
	Chunk     int
	StartLine int
	EndLine   int
}

// ErrDimensions is returned by Upsert for a vector of the wrong length.
var ErrDimensions = errors.New("vector: wrong number of dimensions")

// doc is one document's run of rows in the slab.
type doc struct {
	id    string
	first int // first row
	n     int // rows; 0 marks a free slot
	// stamp is the caller's number for SearchStamped's keep.
	stamp uint64
}

type lineRange struct{ start, end int32 }

// Index holds chunk vectors per document id. It is safe for concurrent use;
// searches run in parallel with each other.
//
// Vectors are stored quantised to int8 with one scale per row (the row's
// largest magnitude maps to 127). A search over tens of thousands of chunks
// is bound by memory bandwidth, not arithmetic: float32 rows made a 50k×512
// scan read 100 MB and take ~25 ms here, a quarter of the bytes takes a
// fraction of the time. The cost is precision: a score is the exact dot
// product with the stored vector, which is within half a quantisation step
// per component of the one upserted — cosines to within about 1e-3 for unit
// vectors of a few hundred dimensions, below the gaps that decide a ranking.
type Index struct {
	dims int

	mu     sync.RWMutex
	codes  []int8      // rows × dims
	scales []float32   // row → scale: vector ≈ scale × codes
	owner  []int32     // row → doc slot, -1 for a dead row
	lines  []lineRange // row → line range
	docs   []doc
	free   []int32 // free doc slots
	byID   map[string]int32
	dead   int // dead rows
}

// New returns an empty index of vectors with dims dimensions.
func New(dims int) *Index {
	return &Index{dims: dims, byID: make(map[string]int32)}
}

// Dimensions is the length of the vectors the index holds.
func (ix *Index) Dimensions() int { return ix.dims }

// Upsert sets the chunks of id, replacing any it had; no chunks removes id.
// A vector whose length is not Dimensions fails with ErrDimensions and
// leaves the index unchanged.
func (ix *Index) Upsert(id string, chunks []Chunk) error {
	return ix.upsert(id, chunks, 0, false)
}

// UpsertStamped is Upsert that also sets the stamp SearchStamped's keep
// reads of id (see search.Fields.Stamp).
func (ix *Index) UpsertStamped(id string, chunks []Chunk, stamp uint64) error {
	return ix.upsert(id, chunks, stamp, true)
}

// SetStamp sets id's stamp; an unknown id is a no-op.
func (ix *Index) SetStamp(id string, stamp uint64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if slot, ok := ix.byID[id]; ok {
		ix.docs[slot].stamp = stamp
	}
}

// upsert is Upsert, setting the stamp when stamped and keeping the one id
// had otherwise.
func (ix *Index) upsert(id string, chunks []Chunk, stamp uint64, stamped bool) error {
	for i, c := range chunks {
		if c.Dims() != ix.dims {
			return fmt.Errorf("%w: %s chunk %d has %d, want %d", ErrDimensions, id, i, c.Dims(), ix.dims)
		}
	}
	if len(chunks) == 0 {
		ix.Delete(id)
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.byID[id]
	if ok && !stamped {
		stamp = ix.docs[slot].stamp
	}
	if ok && ix.docs[slot].n == len(chunks) {
		// Same shape: overwrite in place.
		ix.writeLocked(ix.docs[slot].first, chunks)
		ix.docs[slot].stamp = stamp
		return nil
	}
	if ok {
		ix.killLocked(slot)
	} else {
		if n := len(ix.free); n > 0 {
			slot = ix.free[n-1]
			ix.free = ix.free[:n-1]
		} else {
			slot = int32(len(ix.docs))
			ix.docs = append(ix.docs, doc{})
		}
		ix.byID[id] = slot
	}
	first := len(ix.owner)
	ix.codes = slices.Grow(ix.codes, len(chunks)*ix.dims)[:len(ix.codes)+len(chunks)*ix.dims]
	for range chunks {
		ix.owner = append(ix.owner, slot)
		ix.scales = append(ix.scales, 0)
		ix.lines = append(ix.lines, lineRange{})
	}
	ix.docs[slot] = doc{id: id, first: first, n: len(chunks), stamp: stamp}
	ix.writeLocked(first, chunks)
	ix.maybeCompactLocked()
	return nil
}

func (ix *Index) writeLocked(first int, chunks []Chunk) {
	for i, c := range chunks {
		r := first + i
		row := ix.codes[r*ix.dims : (r+1)*ix.dims]
		if c.Codes != nil {
			ix.scales[r] = CodesScale(c.Codes)
			for j, b := range c.Codes[4:] {
				row[j] = int8(b)
			}
		} else {
			ix.scales[r] = Quantize(row, c.Vector)
		}
		ix.lines[r] = lineRange{int32(c.StartLine), int32(c.EndLine)}
	}
}

// killLocked marks slot's rows dead, keeping the slot.
func (ix *Index) killLocked(slot int32) {
	d := ix.docs[slot]
	for r := d.first; r < d.first+d.n; r++ {
		ix.owner[r] = -1
	}
	ix.dead += d.n
}

// Delete removes id; an unknown id is a no-op.
func (ix *Index) Delete(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.byID[id]
	if !ok {
		return
	}
	ix.killLocked(slot)
	ix.docs[slot] = doc{}
	ix.free = append(ix.free, slot)
	delete(ix.byID, id)
	ix.maybeCompactLocked()
}

// compactMin is the fewest dead rows worth a compaction.
const compactMin = 256

// maybeCompactLocked rewrites the slab without dead rows once they are a
// quarter of it, so churn neither leaks memory nor slows scans for long.
func (ix *Index) maybeCompactLocked() {
	if ix.dead < compactMin || ix.dead*4 < len(ix.owner) {
		return
	}
	live := len(ix.owner) - ix.dead
	codes := make([]int8, 0, live*ix.dims)
	scales := make([]float32, 0, live)
	owner := make([]int32, 0, live)
	lines := make([]lineRange, 0, live)
	for slot := range ix.docs {
		d := &ix.docs[slot]
		if d.n == 0 {
			continue
		}
		first := len(owner)
		codes = append(codes, ix.codes[d.first*ix.dims:(d.first+d.n)*ix.dims]...)
		scales = append(scales, ix.scales[d.first:d.first+d.n]...)
		owner = append(owner, ix.owner[d.first:d.first+d.n]...)
		lines = append(lines, ix.lines[d.first:d.first+d.n]...)
		d.first = first
	}
	ix.codes, ix.scales, ix.owner, ix.lines, ix.dead = codes, scales, owner, lines, 0
}

// Get returns id's chunks as stored, that is quantised: each vector is
// within the quantisation step of what was upserted, and upserting it again
// stores the same codes. ok is false when id has none.
func (ix *Index) Get(id string) (chunks []Chunk, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slot, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	d := ix.docs[slot]
	flat := make([]float32, d.n*ix.dims)
	for i := range d.n {
		r := d.first + i
		s := ix.scales[r]
		for j, c := range ix.codes[r*ix.dims : (r+1)*ix.dims] {
			flat[i*ix.dims+j] = s * float32(c)
		}
	}
	chunks = make([]Chunk, d.n)
	for i := range chunks {
		l := ix.lines[d.first+i]
		chunks[i] = Chunk{StartLine: int(l.start), EndLine: int(l.end), Vector: flat[i*ix.dims : (i+1)*ix.dims : (i+1)*ix.dims]}
	}
	return chunks, true
}

// Len is the number of documents.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

// Chunks is the number of live chunk vectors.
func (ix *Index) Chunks() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.owner) - ix.dead
}

// Bytes estimates the memory the index holds: its slab, row tables,
// document table and ids.
func (ix *Index) Bytes() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := cap(ix.codes) + cap(ix.scales)*4 + cap(ix.owner)*4 + cap(ix.lines)*8 + cap(ix.docs)*40 + cap(ix.free)*4
	for id := range ix.byID {
		n += len(id) + 48 // the map entry and the id's bytes
	}
	return n
}

// parallelRows is the slab size from which a search is split across CPUs:
// below it, starting goroutines costs more than it saves.
const parallelRows = 4096

// Search returns the k documents whose best chunk is most similar to query,
// best first, with that chunk's score and line range; ties go to the
// smaller id. allow, when not nil, limits the search to the ids it accepts,
// so k hits are returned whenever k allowed documents have vectors; it is
// asked only of documents that score well enough to make the best k, with
// the index's read lock held, and must not call back into the index. A
// query of the wrong length returns nil.
func (ix *Index) Search(query []float32, k int, allow func(id string) bool) []Hit {
	if allow == nil {
		return ix.search(query, k, nil)
	}
	return ix.search(query, k, func(slot int) bool { return allow(ix.docs[slot].id) })
}

// Verdicts of a SearchStamped keep, as search's.
const (
	Refuse = -1
	Ask    = 0
	Admit  = 1
)

// SearchStamped is Search with keep asked first, of the stamp each
// document was stored with (UpsertStamped, SetStamp): allow is asked only
// of the documents keep answers Ask. keep must never Refuse a document
// allow accepts, nor Admit one it refuses.
func (ix *Index) SearchStamped(query []float32, k int, keep func(stamp uint64) int, allow func(id string) bool) []Hit {
	return ix.search(query, k, func(slot int) bool {
		switch keep(ix.docs[slot].stamp) {
		case Refuse:
			return false
		case Admit:
			return true
		}
		return allow == nil || allow(ix.docs[slot].id)
	})
}

// search is Search with the filter asked by document slot.
func (ix *Index) search(query []float32, k int, allow func(slot int) bool) []Hit {
	if len(query) != ix.dims || k <= 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	rows := len(ix.owner)
	if rows == 0 {
		return nil
	}
	// Per document slot, the best row; pooled, since a search is
	// otherwise allocation-free up to its result.
	bp := bestPool.Get().(*[]bestRow)
	defer bestPool.Put(bp)
	best := slices.Grow((*bp)[:0], len(ix.docs))[:len(ix.docs)]
	*bp = best
	for i := range best {
		best[i] = bestRow{row: -1}
	}
	workers := 1
	if rows >= parallelRows {
		workers = min(runtime.GOMAXPROCS(0), rows/(parallelRows/2))
	}
	if workers <= 1 {
		ix.scan(query, 0, len(ix.docs), best)
	} else {
		// Split by document slots, so each worker owns its docs' best
		// entries and no merge is needed.
		var wg sync.WaitGroup
		per := (len(ix.docs) + workers - 1) / workers
		for lo := 0; lo < len(ix.docs); lo += per {
			hi := min(lo+per, len(ix.docs))
			wg.Go(func() { ix.scan(query, lo, hi, best) })
		}
		wg.Wait()
	}
	return ix.topLocked(best, k, allow)
}

var bestPool = sync.Pool{New: func() any { return new([]bestRow) }}

type bestRow struct {
	score float32
	row   int32
}

// scan scores the rows of document slots [lo, hi).
func (ix *Index) scan(query []float32, lo, hi int, best []bestRow) {
	dims := ix.dims
	for slot := lo; slot < hi; slot++ {
		d := ix.docs[slot]
		if d.n == 0 {
			continue
		}
		b := bestRow{row: -1}
		for r := d.first; r < d.first+d.n; r++ {
			s := ix.scales[r] * dotRow(query, ix.codes[r*dims:(r+1)*dims])
			if b.row < 0 || s > b.score {
				b = bestRow{s, int32(r)}
			}
		}
		best[slot] = b
	}
}

// topLocked picks the k best documents that allow accepts (all when it
// is nil). allow is asked only of a document that would enter the best
// k, not of every one: with 100,000 memories and a filter, asking each
// up front took 50 of a search's 52 ms, while scoring them all takes 2.
func (ix *Index) topLocked(best []bestRow, k int, allow func(slot int) bool) []Hit {
	hits := make([]Hit, 0, min(k, len(ix.byID)))
	less := func(a, b Hit) int { // best first
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.ID, b.ID)
	}
	hit := func(slot int, b bestRow) Hit {
		d := ix.docs[slot]
		return Hit{ID: d.id, Score: float64(b.score), Chunk: int(b.row) - d.first, StartLine: int(ix.lines[b.row].start), EndLine: int(ix.lines[b.row].end)}
	}
	for slot, b := range best {
		if b.row < 0 {
			continue
		}
		if len(hits) < k {
			if allow != nil && !allow(slot) {
				continue
			}
			hits = append(hits, hit(slot, b))
			if len(hits) == k {
				slices.SortFunc(hits, less)
			}
			continue
		}
		// Most rows lose on the score alone: the id is read, and the hit
		// built, only for a row that ties the worst kept or beats it,
		// where reading every id was most of a search of 100,000.
		worst := hits[k-1]
		if s := float64(b.score); s < worst.Score || s == worst.Score && ix.docs[slot].id > worst.ID {
			continue
		}
		if allow != nil && !allow(slot) {
			continue
		}
		h := hit(slot, b)
		// Insert in order; k is small.
		i, _ := slices.BinarySearchFunc(hits, h, less)
		copy(hits[i+1:], hits[i:k-1])
		hits[i] = h
	}
	if len(hits) < k {
		slices.SortFunc(hits, less)
	}
	return hits
}

// Dot is the dot product of a and b over the length of a; b must be at
// least as long. The loop is unrolled by eight with four accumulators so
// the CPU can overlap the multiplies.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a8, b8 := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += a8[0]*b8[0] + a8[4]*b8[4]
		s1 += a8[1]*b8[1] + a8[5]*b8[5]
		s2 += a8[2]*b8[2] + a8[6]*b8[6]
		s3 += a8[3]*b8[3] + a8[7]*b8[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Quantize writes v's int8 codes into dst (as long as v) and returns the
// scale that maps them back: v[i] ≈ scale × dst[i]. The largest magnitude
// maps to ±127, so the rounding error of each component is at most
// scale/2, and quantising the vector the codes map back to gives the same
// codes and scale: stores that keep codes lose nothing the index keeps.
func Quantize(dst []int8, v []float32) float32 {
	var peak float32
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	if peak == 0 || math.IsNaN(float64(peak)) || math.IsInf(float64(peak), 0) {
		clear(dst)
		return 0
	}
	scale := peak / 127
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x / scale)))
	}
	return scale
}

// dotRow scores a row: dotF8, or an assembly version where the CPU allows.
var dotRow = dotF8

// dotF8 is the dot product of a float32 query and a row of int8 codes; the
// caller multiplies by the row's scale. Keeping the query in float32 makes
// a score exactly the dot product with the stored (dequantised) vector. It
// is unrolled like Dot.
func dotF8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a8, b8 := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += a8[0]*float32(b8[0]) + a8[4]*float32(b8[4])
		s1 += a8[1]*float32(b8[1]) + a8[5]*float32(b8[5])
		s2 += a8[2]*float32(b8[2]) + a8[6]*float32(b8[6])
		s3 += a8[3]*float32(b8[3]) + a8[7]*float32(b8[7])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// Score returns id's best chunk for query, as Search would rank it; ok is
// false when id has no vectors or the query's length is not Dimensions.
// Fusion uses it for documents keyword search found and Search did not.
func (ix *Index) Score(query []float32, id string) (hit Hit, ok bool) {
	if len(query) != ix.dims {
		return Hit{}, false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slot, ok := ix.byID[id]
	if !ok {
		return Hit{}, false
	}
	d := ix.docs[slot]
	b := bestRow{row: -1}
	for r := d.first; r < d.first+d.n; r++ {
		s := ix.scales[r] * dotRow(query, ix.codes[r*ix.dims:(r+1)*ix.dims])
		if b.row < 0 || s > b.score {
			b = bestRow{s, int32(r)}
		}
	}
	l := ix.lines[b.row]
	return Hit{ID: id, Score: float64(b.score), Chunk: int(b.row) - d.first, StartLine: int(l.start), EndLine: int(l.end)}, true
}

// Dequantize writes scale × codes into dst (as long as codes).
func Dequantize(dst []float32, codes []int8, scale float32) {
	for i, c := range codes {
		dst[i] = scale * float32(c)
	}
}
