package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/cuedeck/cuedeck/internal/localdb"
)

func TestStoreAppliesAcrossTransactions(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 40 documents of 40 KiB are more than one transaction of this small
	// Badger holds; Apply must split them and keep every revision.
	body := strings.Repeat("y", 40<<10)
	var changes []Change
	for i := range 40 {
		rec := mdRecord("app", fmt.Sprintf("d%02d.md", i), "# D\n"+body, nil)
		changes = append(changes, Change{Key: fmt.Sprintf("app.d%02d", i), Rev: uint64(i + 1), Doc: &Doc{Key: fmt.Sprintf("app.d%02d", i), Rev: uint64(i + 1), Record: rec}})
	}
	changes = append(changes, Change{Key: "app.d00", Rev: 41})
	if err := s.Apply(changes); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rev, err := s.LastRevision()
	if err != nil || rev != 41 {
		t.Fatalf("last revision %d, %v; want 41", rev, err)
	}
	n := 0
	if err := s.ForEach(func(d Doc) error {
		n++
		if len(d.Record.Content) != len(body)+4 {
			return fmt.Errorf("%s: content of %d bytes", d.Key, len(d.Record.Content))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 39 {
		t.Fatalf("%d documents, want 39", n)
	}
	if _, ok, err := s.Get("app.d00"); ok || err != nil {
		t.Fatalf("removed doc: ok=%v err=%v", ok, err)
	}
}

// Documents are stored compressed, and stores written before (plain JSON,
// S2) still read.
func TestStoredDocumentsAreCompressedAndPlainOnesStillRead(t *testing.T) {
	body := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 200)
	doc := &Doc{Key: "app.big.go", Rev: 1, Record: mdRecord("app", "big.go", body, nil)}
	enc, err := encodeDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(doc)
	if enc[0] != zstdDoc || len(enc) > len(plain)/2 {
		t.Fatalf("encoded %d bytes of %d, first byte %#x: want it compressed", len(enc), len(plain), enc[0])
	}
	small, _ := encodeDoc(&Doc{Key: "app.a.md", Rev: 2, Record: mdRecord("app", "a.md", "# A\n", nil)})
	if small[0] != '{' {
		t.Fatalf("a small document is stored as %q, want plain JSON", small)
	}

	dir := t.TempDir()
	s, err := OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]Change{{Key: doc.Key, Rev: 1, Doc: doc}}); err != nil {
		t.Fatal(err)
	}
	// What earlier releases wrote: plain JSON, then S2.
	old := &Doc{Key: "app.old.md", Rev: 2, Record: mdRecord("app", "old.md", "# Old\n"+body, nil)}
	older := &Doc{Key: "app.s2.md", Rev: 3, Record: mdRecord("app", "s2.md", "# S2\n"+body, nil)}
	err = s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(append(docPrefix[:len(docPrefix):len(docPrefix)], old.Key...), must(json.Marshal(old))); err != nil {
			return err
		}
		return txn.Set(append(docPrefix[:len(docPrefix):len(docPrefix)], older.Key...), append([]byte{s2Doc}, s2.Encode(nil, must(json.Marshal(older)))...))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*Doc{doc, old, older} {
		got, ok, err := s.Get(want.Key)
		if err != nil || !ok || got.Record.Content != want.Record.Content {
			t.Fatalf("Get(%s) = %v %v, content %d bytes of %d", want.Key, ok, err, len(got.Record.Content), len(want.Record.Content))
		}
	}
	n := 0
	if err := s.ForEach(func(d Doc) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("ForEach saw %d documents, %v", n, err)
	}
	s.Close()
}

// forEachPrepared hands every stored document to fn once, however many
// goroutines decode them; an error from fn, or a document that cannot be
// decoded, stops the read and is returned.
func TestForEachPreparedReadsEveryDocumentOnce(t *testing.T) {
	s, err := OpenStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 1200
	var changes []Change
	for i := range n {
		key := fmt.Sprintf("app.d%04d", i)
		rec := mdRecord("app", fmt.Sprintf("d%04d.md", i), fmt.Sprintf("# D%d\nbody", i), nil)
		changes = append(changes, Change{Key: key, Rev: uint64(i + 1), Doc: &Doc{Key: key, Rev: uint64(i + 1), Record: rec}})
	}
	if err := s.Apply(changes); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	err = forEachPrepared(s, func(d Doc) string { return d.Key + "@" + d.Record.Path }, func(v string) error {
		seen[v]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("%d documents seen, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 || !strings.HasPrefix(v, "app.d") {
			t.Fatalf("%s seen %d times", v, c)
		}
	}

	calls := 0
	err = forEachPrepared(s, func(d Doc) string { return d.Key }, func(string) error {
		if calls++; calls == 10 {
			return fmt.Errorf("enough")
		}
		return nil
	})
	if err == nil || err.Error() != "enough" || calls != 10 {
		t.Fatalf("after fn failed: err %v, %d calls; want fn's error after 10", err, calls)
	}

	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(append(docPrefix[:len(docPrefix):len(docPrefix)], "app.broken"...), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	err = forEachPrepared(s, func(d Doc) string { return d.Key }, func(string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "app.broken") || !strings.Contains(err.Error(), "rebuild its store") || !errors.Is(err, localdb.ErrDamaged) {
		t.Fatalf("an undecodable document: %v; want the store's damage, naming the remedy", err)
	}
}
