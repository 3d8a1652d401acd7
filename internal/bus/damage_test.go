package bus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A message block garbled on disk: the server recovers what it can read
// and says so in its log; the embedded server notes the stream as
// damaged, and RepairDamaged deletes it when the files can give its data
// again, so that Provision creates it empty.
func TestDamagedBlockIsNotedAndItsDerivedStreamRebuilt(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	settings := bus.Settings{IngestMaxBytes: 64 << 20}
	conn, srv := bustest.StartIn(t, dir, settings)
	docs, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("a document's record "), 200)
	for i := range 200 {
		if _, err := docs.Put(ctx, fmt.Sprintf("r.k%03d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.DamagedStreams()) != 0 {
		t.Fatalf("damage reported on a healthy store: %v", srv.DamagedStreams())
	}
	conn.Close()
	srv.Shutdown()
	if found, err := bus.CheckStoreFiles(dir); err != nil || len(found) != 0 {
		t.Fatalf("the check of a healthy store found %v, %v", found, err)
	}

	blk := filepath.Join(dir, "jetstream", "$G", "streams", "KV_"+events.DocsBucket, "msgs", "1.blk")
	f, err := os.OpenFile(blk, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	found, err := bus.CheckStoreFiles(dir)
	if _, ok := found["KV_"+events.DocsBucket]; err != nil || !ok || len(found) != 1 {
		t.Fatalf("the check of the garbled store found %v, %v", found, err)
	}

	conn, srv = bustest.StartIn(t, dir, settings)
	damaged := srv.DamagedStreams()
	if _, ok := damaged["KV_"+events.DocsBucket]; !ok || len(damaged) != 1 {
		t.Fatalf("damaged streams: %v; want only KV_%s", damaged, events.DocsBucket)
	}
	before, err := bus.ReadStream(ctx, conn.JS, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	reports, err := bus.RepairDamaged(ctx, conn.JS, damaged, nil)
	if err != nil || len(reports) != 1 || !reports[0].Deleted {
		t.Fatalf("repair: %+v, %v", reports, err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(settings), nil); err != nil {
		t.Fatal(err)
	}
	after, err := bus.ReadStream(ctx, conn.JS, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if after.Msgs != 0 || after.ID() == before.ID() {
		t.Fatalf("the rebuilt bucket: %+v (was %+v)", after, before)
	}
}

// A stream holding the only copy of its data is kept, and said to be.
func TestDamagedStreamOfOnlyCopyIsKept(t *testing.T) {
	conn := connectUnprovisioned(t, t.TempDir())
	ctx := context.Background()
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20}), nil); err != nil {
		t.Fatal(err)
	}
	reports, err := bus.RepairDamaged(ctx, conn.JS, map[string]string{"KV_" + events.MemoriesBucket: "indexCacheBuf corrupt record state"}, nil)
	if err != nil || len(reports) != 1 || reports[0].Deleted {
		t.Fatalf("repair: %+v, %v", reports, err)
	}
	if _, err := bus.ReadStream(ctx, conn.JS, "KV_"+events.MemoriesBucket); err != nil {
		t.Fatalf("the memories were deleted: %v", err)
	}
}

// A block cut short at its end is what a crash mid-write leaves: the
// server drops the partial record, and the check does not call it damage.
func TestStoreCheckAcceptsATornTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	conn, srv := bustest.StartIn(t, dir, bus.Settings{IngestMaxBytes: 64 << 20})
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	for i := range 20 {
		if _, err := docs.Put(ctx, fmt.Sprintf("r.k%03d", i), bytes.Repeat([]byte("x"), 500)); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	srv.Shutdown()
	blk := filepath.Join(dir, "jetstream", "$G", "streams", "KV_"+events.DocsBucket, "msgs", "1.blk")
	fi, err := os.Stat(blk)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(blk, fi.Size()-100); err != nil {
		t.Fatal(err)
	}
	if found, err := bus.CheckStoreFiles(dir); err != nil || len(found) != 0 {
		t.Fatalf("a torn tail was called damage: %v, %v", found, err)
	}
	// One flipped bit inside the first record's payload is damage.
	f, err := os.OpenFile(blk, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 200)
	b[0] ^= 1
	f.WriteAt(b, 200)
	f.Close()
	found, err := bus.CheckStoreFiles(dir)
	if why := found["KV_"+events.DocsBucket]; err != nil || !strings.Contains(why, "checksum mismatch") {
		t.Fatalf("a flipped bit: %v, %v", found, err)
	}
}

// While the write gate is closed a publish waits, without reaching the
// server; it goes through once the gate opens.
func TestPublishWaitsAtTheWriteGate(t *testing.T) {
	conn := connectUnprovisioned(t, t.TempDir())
	ctx := context.Background()
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20}), nil); err != nil {
		t.Fatal(err)
	}
	bus.Writes.Close("test: the disk is full")
	t.Cleanup(bus.Writes.Open)
	ev := events.FileDeleted{Repo: "r", Path: "a.md"}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := bus.PublishEvent(short, conn.JS, events.FileSubject("r"), "held", ev); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a publish at the closed gate: %v", err)
	}
	if st, _ := bus.ReadStream(ctx, conn.JS, events.IngestStream); st.Msgs != 0 {
		t.Fatalf("the held publish reached the stream: %+v", st)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), "released", ev)
		done <- err
	}()
	bus.Writes.Open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Restart starts the server again where clients connect: they reconnect
// by themselves and find the streams as they were.
func TestEmbeddedRestartKeepsClientsAndStreams(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	conn, srv := bustest.StartIn(t, dir, bus.Settings{IngestMaxBytes: 64 << 20})
	ev := events.FileDeleted{Repo: "r", Path: "a.md"}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), "before", ev); err != nil {
		t.Fatal(err)
	}
	url := srv.ClientURL()
	if err := srv.Restart(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if srv.ClientURL() != url {
		t.Fatalf("restarted at %s, not %s", srv.ClientURL(), url)
	}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), "after", ev); err != nil {
		t.Fatalf("a publish after the restart: %v", err)
	}
	if st, err := bus.ReadStream(ctx, conn.JS, events.IngestStream); err != nil || st.Msgs != 2 {
		t.Fatalf("after the restart: %+v, %v", st, err)
	}
}

// A compressed stream seals its full blocks S2-compressed: the check reads
// them as the server does, passes them whole and finds damage in them.
func TestStoreCheckReadsCompressedBlocks(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	conn, srv := bustest.StartIn(t, dir, bus.Settings{IngestMaxBytes: 64 << 20})
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	value := bytes.Repeat([]byte("a line of a document that compresses well\n"), 100)
	for i := range 3000 {
		if _, err := docs.Put(ctx, fmt.Sprintf("r.k%05d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	srv.Shutdown()
	first := filepath.Join(dir, "jetstream", "$G", "streams", "KV_"+events.DocsBucket, "msgs", "1.blk")
	head := make([]byte, 3)
	if f, err := os.Open(first); err == nil {
		f.Read(head)
		f.Close()
	}
	if string(head) != "cmp" {
		t.Fatalf("the first block is not a sealed compressed one (starts %q): write more", head)
	}
	if found, err := bus.CheckStoreFiles(dir); err != nil || len(found) != 0 {
		t.Fatalf("a healthy store with compressed blocks: %v, %v", found, err)
	}
	f, err := os.OpenFile(first, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.WriteAt(bytes.Repeat([]byte{0x5A}, 64), fi.Size()/2)
	f.Close()
	if found, _ := bus.CheckStoreFiles(dir); found["KV_"+events.DocsBucket] == "" {
		t.Fatalf("a garbled compressed block passed: %v", found)
	}
}
