package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// After the first unclean stop in a row, what the stopped daemon held is
// handed out again at start; after the second, it is left to the
// consumer's AckWait, so the delivery count of a message that stops the
// daemon each time keeps growing to MaxDeliver.
func TestWhatAStoppedDaemonHeldIsHandedOutOnceInARow(t *testing.T) {
	for _, tc := range []struct {
		unclean  int
		wantHeld int // awaiting an ack after the start
	}{
		{0, 2},
		{1, 0},
		{2, 2},
	} {
		t.Run(fmt.Sprintf("unclean=%d", tc.unclean), func(t *testing.T) {
			conn, _ := bustest.Start(t, bus.Settings{})
			ctx := context.Background()
			for i := range 2 {
				ev := events.FileDeleted{Repo: "r", Path: fmt.Sprintf("f%d.md", i), PrevMod: time.Unix(int64(i), 0)}
				if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), events.FileDeletedMsgID(ev.Repo, ev.Path, "", ev.PrevMod), ev); err != nil {
					t.Fatal(err)
				}
			}
			indexer, err := conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := indexer.Fetch(2, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			taken := 0
			for range batch.Messages() {
				taken++
			}
			if taken != 2 {
				t.Fatalf("the stopped daemon took %d messages, want 2", taken)
			}

			if err := redeliverAfterUncleanStop(ctx, conn.JS, bus.Settings{}, tc.unclean, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			info, err := indexer.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.NumAckPending != tc.wantHeld {
				t.Errorf("%d messages still awaiting the stopped daemon's ack, want %d", info.NumAckPending, tc.wantHeld)
			}
		})
	}
}
