package bus

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// ReadEmbedCost is model's EmbedCost in kv (events.EmbedCostBucket) and
// its revision: the zero record and revision 0 when there is none. A
// record that does not decode reads as zero at its revision, so the count
// starts again rather than stopping for good.
func ReadEmbedCost(ctx context.Context, kv jetstream.KeyValue, model string) (events.EmbedCost, uint64, error) {
	e, err := kv.Get(ctx, events.ModelKey(model))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return events.EmbedCost{Model: model}, 0, nil
	}
	if err != nil {
		return events.EmbedCost{}, 0, err
	}
	var c events.EmbedCost
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return events.EmbedCost{Model: model}, e.Revision(), nil
	}
	return c, e.Revision(), nil
}

// AddEmbedCost adds d to the record of d.Model in kv with compare-and-set,
// so that workers sharing a model never lose each other's counts. A writer
// that lost the race waits a random few milliseconds before it reads
// again, so that many at once spread out.
func AddEmbedCost(ctx context.Context, kv jetstream.KeyValue, d events.EmbedCost) error {
	key := events.ModelKey(d.Model)
	for attempt := range 50 {
		if attempt > 0 {
			t := time.NewTimer(rand.N(time.Duration(min(attempt, 10)) * time.Millisecond))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		cur, rev, err := ReadEmbedCost(ctx, kv, d.Model)
		if err != nil {
			return err
		}
		b, err := json.Marshal(cur.Add(d))
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, b)
		} else {
			_, err = kv.Update(ctx, key, b, rev)
		}
		if err == nil || !errors.Is(err, jetstream.ErrKeyExists) && !WrongLastSequence(err) {
			return err
		}
	}
	return errors.New("bus: too many concurrent writers of " + events.EmbedCostBucket)
}
