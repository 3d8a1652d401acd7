package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The queues (CUE_INGEST, CUE_EMBED) keep their events after workers ack
// them: a work queue removes each acked message with one more write synced
// to disk, a third of what a file cost to index. Each worker pool instead
// purges, now and then, the range of its own subjects that its consumer
// has acknowledged.

// trimEvery is how often a worker pool that settled events since its
// last trim trims again; a pool that settles none does not look.
const trimEvery = time.Second

// trimBound is the highest stream sequence at or below which every
// message on the consumer's subjects is settled (acked, or given up on):
// the consumer's ack floor. A message it nakked for a later retry is still
// pending and holds the floor below it. The consumer's counts are not
// trusted to say that nothing is left above the floor: nats-server
// v2.15.2 was seen answering NumPending 0 with nine messages on the
// consumer's subject not yet delivered (1 run in about 100 of
// TestWorkerAcksSuccess), and trimming to the stream's end then would
// have purged them unhandled.
func trimBound(ci *jetstream.ConsumerInfo) uint64 {
	return ci.AckFloor.Stream
}

// filterSubjects are the subjects a consumer takes; none means the whole
// stream.
func filterSubjects(cfg jetstream.ConsumerConfig) []string {
	if len(cfg.FilterSubjects) > 0 {
		return cfg.FilterSubjects
	}
	if cfg.FilterSubject != "" {
		return []string{cfg.FilterSubject}
	}
	return nil
}

// trim purges from the worker's stream the messages on its consumer's
// subjects that the consumer has settled. It does nothing on a work queue
// (acks remove its messages).
func (w *Worker) trim(ctx context.Context, cons jetstream.Consumer) error {
	s, err := w.js.Stream(ctx, w.cfg.Stream)
	if err != nil {
		return err
	}
	info := s.CachedInfo()
	if info.Config.Retention != jetstream.LimitsPolicy || info.State.Msgs == 0 {
		return nil
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	if !info.Created.Equal(w.trimmedIn) {
		// Another incarnation of the stream: its sequences may restart.
		w.trimmed, w.trimmedIn = 0, info.Created
	}
	bound := trimBound(ci)
	if bound < info.State.FirstSeq || bound <= w.trimmed {
		return nil
	}
	filters := filterSubjects(ci.Config)
	if len(filters) == 0 {
		if err := s.Purge(ctx, jetstream.WithPurgeSequence(bound+1)); err != nil {
			return fmt.Errorf("bus: trim %s below %d: %w", w.cfg.Stream, bound+1, err)
		}
	}
	for _, f := range filters {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(f), jetstream.WithPurgeSequence(bound+1)); err != nil {
			return fmt.Errorf("bus: trim %s of %s below %d: %w", w.cfg.Stream, f, bound+1, err)
		}
	}
	w.trimmed = bound
	return nil
}

// trimLoop trims until ctx ends: once at start (a pool stopped before it
// trimmed leaves what it acknowledged), then every trimEvery in which the
// pool settled events.
func (w *Worker) trimLoop(ctx context.Context, cons jetstream.Consumer) {
	t := time.NewTicker(trimEvery)
	defer t.Stop()
	trimmedAt := ^uint64(0) // w.settles at the last trim; none yet
	for {
		if n := w.settles.Load(); n != trimmedAt {
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := w.trim(tctx, cons)
			cancel()
			switch {
			case err == nil:
				trimmedAt = n
			case ctx.Err() == nil:
				// Untrimmed events cost disk until the next look,
				// nothing else; a cluster without a leader for the
				// moment says so.
				w.cfg.Logger.Debug("trimming acknowledged events failed; will try again", "stream", w.cfg.Stream, "consumer", w.cfg.Consumer, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// keepWorkQueue keeps, in sc, the work-queue retention of an existing
// stream declared with limits retention: JetStream cannot change a
// stream's retention, and a queue created so by an earlier release works
// as one (acks remove its events) until UpgradeEmptyQueues recreates it.
func keepWorkQueue(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.StreamConfig, bool, error) {
	if sc.Retention != jetstream.LimitsPolicy || !isQueue(sc.Name) {
		return sc, false, nil
	}
	s, err := js.Stream(ctx, sc.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return sc, false, nil
	case err != nil:
		return sc, false, fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
	}
	if s.CachedInfo().Config.Retention != jetstream.WorkQueuePolicy {
		return sc, false, nil
	}
	sc.Retention = jetstream.WorkQueuePolicy
	return sc, true, nil
}

func isQueue(name string) bool {
	for _, q := range cappedQueues {
		if q == name {
			return true
		}
	}
	return false
}

// UpgradeEmptyQueues deletes each queue that an earlier release created as
// a work queue and that holds no event, so that Provision creates it again
// trimmed by its workers. It is for an embedded server, before Provision,
// when no worker runs yet; a queue still holding events is left as it is
// (it works as before) until a start finds it empty. It returns the
// queues it deleted.
func UpgradeEmptyQueues(ctx context.Context, js jetstream.JetStream, log *slog.Logger) ([]string, error) {
	return deleteEmptyQueues(ctx, js, log, func(info *jetstream.StreamInfo) (string, []any) {
		if info.Config.Retention != jetstream.WorkQueuePolicy {
			return "", nil
		}
		return "queue created as a work queue by an earlier CueDeck is empty; creating it again, trimmed by its workers", nil
	})
}

// Settled reads how far a consumer of stream has come and returns a test
// of whether the message at a sequence is settled: acknowledged (or given
// up on), or gone from the stream. The test looks a sequence up in the
// stream only above the consumer's ack floor; it fails when that lookup
// does.
func Settled(ctx context.Context, js jetstream.JetStream, stream, consumer string) (func(seq uint64) (bool, error), error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("bus: stream %s: %w", stream, err)
	}
	c, err := s.Consumer(ctx, consumer)
	if err != nil {
		return nil, fmt.Errorf("bus: consumer %s on %s: %w", consumer, stream, err)
	}
	floor := c.CachedInfo().AckFloor.Stream
	return func(seq uint64) (bool, error) {
		if seq <= floor {
			return true, nil
		}
		_, err := s.GetMsg(ctx, seq)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return true, nil
		case err != nil:
			return false, err
		}
		return false, nil
	}, nil
}
