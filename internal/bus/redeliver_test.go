package bus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A worker took messages and died before acking them: RedeliverHeld hands
// them out again at once, where the consumer would wait out its AckWait
// (30 s here) first; a consumer holding nothing is left as it was.
func TestRedeliverHeldHandsOutWhatAGoneWorkerHeld(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	for i := range 3 {
		publish(t, conn, i)
	}
	indexer, err := conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	type taken struct {
		seqs []uint64
		msgs []jetstream.Msg
	}
	take := func(n int) taken {
		t.Helper()
		batch, err := indexer.Fetch(n, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var got taken
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			got.seqs = append(got.seqs, meta.Sequence.Stream)
			got.msgs = append(got.msgs, m)
		}
		return got
	}
	// The gone worker acked the first and held the other two.
	first := take(1)
	if len(first.msgs) != 1 {
		t.Fatalf("took %v, want one message", first.seqs)
	}
	if err := first.msgs[0].DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	held := take(2)
	if len(held.seqs) != 2 {
		t.Fatalf("took %v, want two messages", held.seqs)
	}
	if again := take(2); len(again.seqs) != 0 {
		t.Fatalf("%v handed out again before RedeliverHeld: the test's premise fails", again.seqs)
	}

	consumers := bus.DeclaredTopology(bus.Settings{}).Consumers
	n, err := bus.RedeliverHeld(ctx, conn.JS, consumers, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("RedeliverHeld counted %d messages held, want 2", n)
	}
	again := take(3)
	if !slices.Equal(again.seqs, held.seqs) {
		t.Fatalf("after RedeliverHeld the indexer handed out %v, want the held %v", again.seqs, held.seqs)
	}
	for _, m := range again.msgs {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing held: nothing is reset, and nothing handed out again.
	if n, err := bus.RedeliverHeld(ctx, conn.JS, consumers, nil); err != nil || n != 0 {
		t.Fatalf("RedeliverHeld with nothing held: %d, %v", n, err)
	}
	if extra := take(1); len(extra.seqs) != 0 {
		t.Errorf("%v handed out again with nothing held", extra.seqs)
	}
}
