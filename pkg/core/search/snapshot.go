package search

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"unicode/utf8"
)

// A snapshot is the index written out whole, so that a process that stops
// cleanly starts again without analysing every document anew: on a large
// repository that took most of a restart. WriteSnapshot writes one and
// ReadSnapshot reads it back into an index that answers exactly as the one
// written; the caller decides whether the snapshot still matches its
// documents (the edge stamps it with its store's revision).
//
// Layout: the magic line, then uvarints and length-prefixed strings for the
// totals, the document slots, the terms with their postings, the words and
// the fuzzy buckets, each slice with its free list; last, the CRC-32C of
// everything before it, so that a torn or garbled file is refused rather
// than loaded.

const snapshotMagic = "cuedeck keyword index v3\n"

// ErrBadSnapshot is returned by ReadSnapshot for a file that is not a
// whole, intact snapshot of this version.
var ErrBadSnapshot = errors.New("search: not an intact keyword index snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

type snapshotWriter struct {
	w   *bufio.Writer
	crc uint32
	buf [binary.MaxVarintLen64]byte
	err error
}

func (s *snapshotWriter) bytes(b []byte) {
	if s.err != nil {
		return
	}
	s.crc = crc32.Update(s.crc, castagnoli, b)
	_, s.err = s.w.Write(b)
}

func (s *snapshotWriter) uint(v uint64) { s.bytes(s.buf[:binary.PutUvarint(s.buf[:], v)]) }

func (s *snapshotWriter) string(v string) {
	s.uint(uint64(len(v)))
	s.bytes([]byte(v))
}

func (s *snapshotWriter) ids(v []uint32) {
	s.uint(uint64(len(v)))
	for _, x := range v {
		s.uint(uint64(x))
	}
}

// WriteSnapshot writes the index to w with stamp, a number the caller
// reads back to tell whether the snapshot still matches its documents.
// Searches may run meanwhile; writes wait until it is done.
func (ix *Index) WriteSnapshot(w io.Writer, stamp uint64) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := &snapshotWriter{w: bufio.NewWriterSize(w, 1<<16)}
	s.bytes([]byte(snapshotMagic))
	s.uint(stamp)
	for f := range numFields {
		s.uint(ix.totalLens[f])
		s.uint(ix.fieldDocs[f])
	}
	s.uint(uint64(len(ix.docs)))
	for i, d := range ix.docs {
		s.string(d.id)
		for _, l := range ix.lens[i] {
			s.uint(uint64(l))
		}
		s.ids(d.terms)
		s.ids(d.surfaces)
	}
	s.ids(ix.freeDocs)
	s.uint(uint64(len(ix.terms)))
	for _, t := range ix.terms {
		s.string(t.text)
		s.uint(uint64(len(t.postings)))
		prev := uint32(0)
		for _, p := range t.postings {
			s.uint(uint64(p.doc - prev)) // sorted by doc: deltas stay small
			prev = p.doc
			for _, tf := range p.tf {
				s.uint(uint64(tf))
			}
		}
	}
	s.ids(ix.freeTerms)
	s.uint(uint64(len(ix.surfaces)))
	for _, w := range ix.surfaces {
		s.string(w.text)
		s.uint(uint64(w.term))
		s.uint(uint64(w.docs))
		s.uint(uint64(w.bucketPos))
	}
	s.ids(ix.freeSurfaces)
	// Buckets in key order, so that equal indexes write equal bytes.
	keys := slices.SortedFunc(maps.Keys(ix.buckets), func(a, b fuzzyKey) int {
		return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.length, b.length))
	})
	s.uint(uint64(len(keys)))
	for _, k := range keys {
		entries := ix.buckets[k]
		s.uint(uint64(k.first))
		s.uint(uint64(k.length))
		s.uint(uint64(len(entries)))
		for _, e := range entries {
			s.uint(uint64(e.sid))
			s.uint(uint64(e.letters))
		}
	}
	if s.err != nil {
		return s.err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], s.crc)
	if _, err := s.w.Write(sum[:]); err != nil {
		return err
	}
	return s.w.Flush()
}

type snapshotReader struct {
	b   []byte
	err error
}

func (r *snapshotReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadSnapshot, what)
	}
}

func (r *snapshotReader) uint(max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated number")
		return 0
	}
	r.b = r.b[n:]
	if v > max {
		r.fail(fmt.Sprintf("number %d out of range", v))
		return 0
	}
	return v
}

// count reads a length whose items take at least one byte each, so a
// garbled length cannot ask for more memory than the file could fill.
func (r *snapshotReader) count() int {
	n := r.uint(math.MaxUint64)
	if n > uint64(len(r.b)) {
		r.fail(fmt.Sprintf("length %d exceeds the %d bytes left", n, len(r.b)))
		return 0
	}
	return int(n)
}

func (r *snapshotReader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	v := string(r.b[:n])
	r.b = r.b[n:]
	return v
}

// ids reads a list of ids below limit.
func (r *snapshotReader) ids(limit uint64) []uint32 {
	n := r.count()
	if n == 0 {
		return nil
	}
	if limit == 0 {
		r.fail("id in an empty range")
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(r.uint(limit - 1))
	}
	return out
}

// ReadSnapshot reads an index written by WriteSnapshot, and its stamp. A
// file that is torn, garbled or of another version returns an error
// wrapping ErrBadSnapshot.
func ReadSnapshot(rd io.Reader) (ix *Index, stamp uint64, err error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, 0, err
	}
	if len(data) < len(snapshotMagic)+4 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, 0, fmt.Errorf("%w: wrong header", ErrBadSnapshot)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crcOf(body) != sum {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", ErrBadSnapshot)
	}
	r := &snapshotReader{b: body[len(snapshotMagic):]}
	stamp = r.uint(math.MaxUint64)
	ix = NewIndex()
	for f := range numFields {
		ix.totalLens[f] = r.uint(math.MaxUint64)
		ix.fieldDocs[f] = r.uint(math.MaxUint64)
	}
	ix.docs = make([]docEntry, r.count())
	ix.lens = make([][numFields]uint32, len(ix.docs))
	// Stamps are not kept: an index read back holds none (SearchStamped
	// is for indexes built in the process).
	ix.stamps = make([]uint64, len(ix.docs))
	for i := range ix.docs {
		d := &ix.docs[i]
		d.id = r.string()
		for f := range ix.lens[i] {
			ix.lens[i][f] = uint32(r.uint(math.MaxUint32))
		}
		d.terms = r.ids(math.MaxUint32)
		d.surfaces = r.ids(math.MaxUint32)
		if d.id != "" {
			ix.ids[d.id] = uint32(i)
		}
	}
	ix.freeDocs = r.ids(uint64(len(ix.docs)))
	ix.terms = make([]termEntry, r.count())
	for i := range ix.terms {
		t := &ix.terms[i]
		t.text = r.string()
		if n := r.count(); n > 0 {
			t.postings = make([]posting, n)
			prev := uint64(0)
			for k := range t.postings {
				prev += r.uint(uint64(len(ix.docs)))
				t.postings[k].doc = uint32(prev)
				for f := range t.postings[k].tf {
					t.postings[k].tf[f] = uint16(r.uint(math.MaxUint16))
				}
				if int(prev) < len(ix.lens) { // else check refuses it
					t.bound(t.postings[k].tf, &ix.lens[prev])
				}
			}
		}
		if t.text != "" {
			ix.termIDs[t.text] = uint32(i)
		}
	}
	ix.freeTerms = r.ids(uint64(len(ix.terms)))
	ix.surfaces = make([]surfaceEntry, r.count())
	for i := range ix.surfaces {
		w := &ix.surfaces[i]
		w.text = r.string()
		w.term = uint32(r.uint(uint64(max(len(ix.terms), 1) - 1)))
		w.docs = int(r.uint(uint64(len(ix.docs))))
		w.bucketPos = int(r.uint(math.MaxInt32))
		if w.text != "" {
			ix.surfaceIDs[w.text] = uint32(i)
		}
	}
	ix.freeSurfaces = r.ids(uint64(len(ix.surfaces)))
	for range r.count() {
		k := fuzzyKey{first: rune(r.uint(utf8.MaxRune)), length: int(r.uint(math.MaxInt32))}
		entries := make([]bucketEntry, r.count())
		for i := range entries {
			entries[i] = bucketEntry{sid: uint32(r.uint(math.MaxUint32)), letters: uint32(r.uint(math.MaxUint32))}
		}
		if r.err == nil {
			ix.buckets[k] = entries
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	if err := ix.check(); err != nil {
		return nil, 0, err
	}
	return ix, stamp, nil
}

// Has reports whether id is indexed.
func (ix *Index) Has(id string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.ids[id]
	return ok
}

// check verifies that the references inside a read index hold, so that a
// snapshot of a buggy or foreign writer cannot make searches panic.
func (ix *Index) check() error {
	bad := func(what string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadSnapshot, fmt.Sprintf(what, args...))
	}
	for i, d := range ix.docs {
		for _, t := range d.terms {
			if int(t) >= len(ix.terms) {
				return bad("document %d names term %d of %d", i, t, len(ix.terms))
			}
		}
		for _, w := range d.surfaces {
			if int(w) >= len(ix.surfaces) {
				return bad("document %d names word %d of %d", i, w, len(ix.surfaces))
			}
		}
	}
	for i, t := range ix.terms {
		for k, p := range t.postings {
			if int(p.doc) >= len(ix.docs) || k > 0 && p.doc <= t.postings[k-1].doc {
				return bad("term %d has postings out of order or range", i)
			}
		}
	}
	for k, entries := range ix.buckets {
		for pos, e := range entries {
			if int(e.sid) >= len(ix.surfaces) || ix.surfaces[e.sid].bucketPos != pos || keyOf(ix.surfaces[e.sid].text) != k {
				return bad("fuzzy bucket %v entry %d does not match its word", k, pos)
			}
		}
	}
	return nil
}
