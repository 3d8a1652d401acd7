package bus_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// A bucket's handle outlives the bucket being deleted and created again (as
// self-healing does), and a lookup that failed is tried again rather than
// kept.
func TestBucketHandlesAreKeptAndSurviveRecreation(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	if _, err := conn.KV(ctx, "later"); err == nil {
		t.Fatal("KV of a bucket that does not exist succeeded")
	}
	cfg := jetstream.KeyValueConfig{Bucket: "later"}
	if _, err := conn.JS.CreateKeyValue(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	kv, err := conn.KV(ctx, "later")
	if err != nil {
		t.Fatalf("KV after the bucket was created: %v", err)
	}
	if _, err := kv.PutString(ctx, "k", "one"); err != nil {
		t.Fatal(err)
	}
	if err := conn.JS.DeleteKeyValue(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	// Kept: no lookup is made, so the deleted bucket does not fail it.
	if _, err := conn.KV(ctx, "later"); err != nil {
		t.Fatalf("KV looked the bucket up again instead of keeping its handle: %v", err)
	}
	if _, err := conn.JS.CreateKeyValue(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	again, err := conn.KV(ctx, "later")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.PutString(ctx, "k", "two"); err != nil {
		t.Fatalf("the kept handle cannot write to the re-created bucket: %v", err)
	}
	e, err := kv.Get(ctx, "k")
	if err != nil || string(e.Value()) != "two" || e.Revision() != 1 {
		t.Fatalf("the re-created bucket holds %v, %v; want two at revision 1", e, err)
	}
	if _, err := conn.Objects(ctx, "blobs-later"); err == nil {
		t.Fatal("Objects of a store that does not exist succeeded")
	}
}
