package localdb

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// Badger's memtables are sparse until written; Reserve gives them their
// blocks without changing their size or content.
func TestReserveAllocatesTheMemtablesOfAnOpenStore(t *testing.T) {
	dir := t.TempDir()
	db, err := badger.Open(Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	files := MappedFiles(dir)
	if len(files) == 0 {
		t.Fatal("no mapped file in an open store")
	}
	allocated := func(f string) (size, blocks int64) {
		var st syscall.Stat_t
		if err := syscall.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		return st.Size, st.Blocks * 512
	}
	sparse := false
	for _, f := range files {
		if size, blocks := allocated(f); blocks < size {
			sparse = true
		}
	}
	if !sparse {
		t.Skip("this filesystem allocates Badger's files whole; nothing to reserve")
	}
	for _, f := range files {
		size, _ := allocated(f)
		if err := Reserve(f); err != nil {
			t.Fatal(err)
		}
		if after, blocks := allocated(f); after != size || blocks < size {
			t.Errorf("%s: size %d -> %d, %d bytes allocated", filepath.Base(f), size, after, blocks)
		}
	}
	var got []byte
	if err := db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte("k"))
		if err != nil {
			return err
		}
		got, err = item.ValueCopy(nil)
		return err
	}); err != nil || string(got) != "v" {
		t.Fatalf("after reserving: %q, %v", got, err)
	}
}
