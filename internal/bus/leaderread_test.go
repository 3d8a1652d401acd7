package bus_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// LastFromLeader answers what a key-value Get hides: a delete marker's
// revision and headers, besides a value's; a subject with no message is
// ErrMsgNotFound and a stream that does not exist an error of its own.
func TestLastFromLeaderReadsValuesAndMarkers(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	kv, err := conn.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(ctx, "k", "one"); err != nil {
		t.Fatal(err)
	}
	rev, err := kv.PutString(ctx, "k", "two")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := conn.LastFromLeader(ctx, "KV_b", "$KV.b.k")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data) != "two" || msg.Sequence != rev || msg.Subject != "$KV.b.k" {
		t.Fatalf("value: %q at %d on %s, want \"two\" at %d", msg.Data, msg.Sequence, msg.Subject, rev)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	msg, err = conn.LastFromLeader(ctx, "KV_b", "$KV.b.k")
	if err != nil {
		t.Fatal(err)
	}
	if op := msg.Header.Get("KV-Operation"); op != "DEL" || msg.Sequence != rev+1 {
		t.Fatalf("after a delete: operation %q at %d, want DEL at %d", op, msg.Sequence, rev+1)
	}
	if _, err := conn.LastFromLeader(ctx, "KV_b", "$KV.b.none"); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("a subject with no message: %v, want ErrMsgNotFound", err)
	}
	if _, err := conn.LastFromLeader(ctx, "KV_none", "$KV.none.k"); err == nil || errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("a stream that does not exist: %v", err)
	}
}
