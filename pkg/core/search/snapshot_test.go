package search

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// churned is an index with free slots in every list: documents added,
// replaced and removed, as an edge's index is after a while.
func churned(c *corpus) *Index {
	ix := NewIndex()
	for i, d := range c.docs {
		ix.Upsert(fmt.Sprintf("doc-%d", i), d)
	}
	for i := 0; i < len(c.docs); i += 3 {
		ix.Remove(fmt.Sprintf("doc-%d", i))
	}
	for i := 1; i < len(c.docs); i += 5 {
		ix.Upsert(fmt.Sprintf("doc-%d", i), c.doc(40))
	}
	ix.Upsert("code", Fields{Path: "pkg/readContext.go", Title: "readContext", Headings: []string{"func (*Index).Search"}, Body: "HTTPServer base64Encode naïve Ωmega"})
	return ix
}

func snapshotOf(t testing.TB, ix *Index) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ix.WriteSnapshot(&b, 42); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sameAnswers(t *testing.T, c *corpus, a, b *Index) {
	t.Helper()
	queries := append(typoQueries(c, 40), "readContext", "http server", "naive", "omega", "Ωmega", "search index")
	for range 60 {
		queries = append(queries, c.words(1+c.rng.IntN(3)))
	}
	for _, q := range queries {
		if got, want := a.Search(q, 20), b.Search(q, 20); !slices.Equal(got, want) {
			t.Fatalf("query %q: the loaded index answers %v, the original %v", q, got, want)
		}
	}
}

func TestSnapshotAnswersAsTheIndexItWasTakenOf(t *testing.T) {
	c := newCorpus(3, 3000, 400, 60)
	orig := churned(c)
	loaded, stamp, err := ReadSnapshot(bytes.NewReader(snapshotOf(t, orig)))
	if err != nil {
		t.Fatal(err)
	}
	if stamp != 42 {
		t.Fatalf("stamp %d, want 42", stamp)
	}
	if loaded.Len() != orig.Len() {
		t.Fatalf("loaded %d documents, the original holds %d", loaded.Len(), orig.Len())
	}
	sameAnswers(t, c, loaded, orig)
	// Both go on alike: the free lists and ids came across too.
	for i := range 50 {
		d := c.doc(30)
		orig.Upsert(fmt.Sprintf("new-%d", i), d)
		loaded.Upsert(fmt.Sprintf("new-%d", i), d)
		orig.Remove(fmt.Sprintf("doc-%d", 3*i+1))
		loaded.Remove(fmt.Sprintf("doc-%d", 3*i+1))
	}
	sameAnswers(t, c, loaded, orig)
	if !bytes.Equal(snapshotOf(t, loaded), snapshotOf(t, orig)) {
		t.Fatal("after the same changes the two indexes differ")
	}
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	snap := snapshotOf(t, churned(newCorpus(4, 500, 50, 30)))
	flipped := bytes.Clone(snap)
	flipped[len(flipped)/2] ^= 0x40
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": snap[:len(snap)/3],
		"no sum":    snap[:len(snap)-4],
		"flipped":   flipped,
		"other":     append([]byte("cuedeck keyword index v0\n"), snap[len(snapshotMagic):]...),
	} {
		if _, _, err := ReadSnapshot(bytes.NewReader(b)); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: ReadSnapshot = %v, want ErrBadSnapshot", name, err)
		}
	}
}

// FuzzReadSnapshot feeds snapshots whose checksum was made to fit, so the
// reader's own checks meet garbage: it must refuse or load, never panic,
// and a loaded index must search.
func FuzzReadSnapshot(f *testing.F) {
	f.Add(snapshotOf(f, churned(newCorpus(5, 200, 20, 10))))
	f.Add(snapshotOf(f, NewIndex()))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < len(snapshotMagic) {
			return
		}
		body := append([]byte(snapshotMagic), b[len(snapshotMagic):]...)
		var sum [4]byte
		c := crcOf(body)
		sum[0], sum[1], sum[2], sum[3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		ix, _, err := ReadSnapshot(bytes.NewReader(append(body, sum[:]...)))
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v does not wrap ErrBadSnapshot", err)
			}
			return
		}
		ix.Search("a b", 5)
		ix.Search("abcd", 5)
		ix.Upsert("x", Fields{Body: "a b abcd"})
		ix.Remove("x")
	})
}
