package edge

import (
	"fmt"
	"strings"
	"testing"
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
