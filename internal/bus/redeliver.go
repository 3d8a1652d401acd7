package bus

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
)

// RedeliverHeld has the messages that consumers delivered and that still
// wait for an ack delivered again now, rather than after their AckWait
// (30 s for the indexer and embedder, 5 min for the extractor). Call it
// only where no worker of these consumers can be running: a laptop's
// daemon at start, holding the workspace lock, after a daemon that was
// killed or crashed; there every such message was held by a process that
// is gone. The consumers start again from their ack floor, so messages
// acknowledged out of order after it are delivered again too, which
// idempotent handlers take as a repeat. Their delivery counts start
// again as well: the caller must not do this after every unclean stop, or
// a message that stops the process each time would never reach
// MaxDeliver and be dead-lettered. It returns how many messages were
// awaiting an ack.
func RedeliverHeld(ctx context.Context, js jetstream.JetStream, consumers []ConsumerSpec, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	held := 0
	for _, c := range consumers {
		cons, err := js.Consumer(ctx, c.Stream, c.Config.Durable)
		if err != nil {
			return held, fmt.Errorf("bus: consumer %s on %s: %w", c.Config.Durable, c.Stream, err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			return held, fmt.Errorf("bus: consumer %s on %s: %w", c.Config.Durable, c.Stream, err)
		}
		if info.NumAckPending == 0 {
			continue
		}
		if _, err := js.ResetConsumer(ctx, c.Stream, c.Config.Durable); err != nil {
			return held, fmt.Errorf("bus: redeliver what consumer %s on %s held: %w", c.Config.Durable, c.Stream, err)
		}
		log.Debug("delivering again what a stopped process held", "consumer", c.Config.Durable, "awaiting_ack", info.NumAckPending, "ack_floor", info.AckFloor.Stream)
		held += info.NumAckPending
	}
	return held, nil
}
