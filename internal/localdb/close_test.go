package localdb

import (
	"os"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// A store whose directory is deleted while it is open cannot flush its
// memtable, which Badger retries forever: Close returns anyway, naming the
// directory, so that a daemon whose cache was deleted can still stop.
func TestCloseReturnsWhenTheDirectoryWasDeleted(t *testing.T) {
	dir := t.TempDir() + "/store"
	db, err := badger.Open(Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("unflushed")) }); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err = Close(db)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Close of a store whose directory is gone: %v, want an error naming %s", err, dir)
	}
}

func TestCloseClosesAStore(t *testing.T) {
	dir := t.TempDir()
	db, err := badger.Open(Options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := Close(db); err != nil {
		t.Fatal(err)
	}
	db, err = badger.Open(Options(dir, nil))
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	defer db.Close()
	if err := db.View(func(txn *badger.Txn) error { _, err := txn.Get([]byte("k")); return err }); err != nil {
		t.Fatalf("the write before Close: %v", err)
	}
}
