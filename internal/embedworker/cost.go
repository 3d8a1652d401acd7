package embedworker

import (
	"context"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/cpumeter"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// costFlushEvery is how often a worker adds what it spent to the model's
// EmbedCost: often enough that `cue status` follows a repository being
// embedded, rarely enough to cost nothing beside it.
const costFlushEvery = 5 * time.Second

// costs is what a Service spent embedding and has not yet added to the
// model's EmbedCost record, and all it spent since New.
type costs struct {
	mu      sync.Mutex
	pending events.EmbedCost
	total   events.EmbedCost
}

func (c *costs) add(d events.EmbedCost) {
	c.mu.Lock()
	c.pending = c.pending.Add(d)
	c.total = c.total.Add(d)
	c.mu.Unlock()
}

// take returns the pending costs and forgets them; put gives back what a
// failed flush took, to be added next time.
func (c *costs) take() events.EmbedCost {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.pending
	c.pending = events.EmbedCost{}
	return d
}

func (c *costs) put(d events.EmbedCost) {
	c.mu.Lock()
	c.pending = c.pending.Add(d)
	c.mu.Unlock()
}

// embedMetered embeds texts for chunks chunks with embed, and counts what
// it cost: the model's CPU time where the model computes on this
// process's cores, and the time the call took.
func (s *Service) embedMetered(ctx context.Context, texts []string, chunks int, embed func(context.Context) ([][]float32, error)) ([][]float32, error) {
	meter := new(cpumeter.Meter)
	start := time.Now()
	vecs, err := embed(cpumeter.With(ctx, meter))
	now := time.Now()
	d := events.EmbedCost{Model: s.model, CPUSeconds: meter.Total().Seconds(),
		CallSeconds: now.Sub(start).Seconds(), Since: start, Updated: now}
	if err == nil {
		d.Chunks, d.Texts = uint64(chunks), uint64(len(texts))
		if meter.Measured() {
			d.MeteredChunks = d.Chunks
		}
	}
	s.costs.add(d)
	return vecs, err
}

// flushCostsLoop adds what the worker spent to the model's EmbedCost every
// costFlushEvery until ctx ends.
func (s *Service) flushCostsLoop(ctx context.Context) {
	t := time.NewTicker(costFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.flushCosts(ctx)
		}
	}
}

// flushCosts adds the pending costs to the model's record with
// compare-and-set, so workers sharing a model never lose each other's.
// A failure is logged and the costs kept for the next flush.
func (s *Service) flushCosts(ctx context.Context) {
	d := s.costs.take()
	if d.Since.IsZero() {
		return
	}
	kv, err := s.conn.KV(ctx, events.EmbedCostBucket)
	if err == nil {
		err = bus.AddEmbedCost(ctx, kv, d)
	}
	if err != nil {
		s.costs.put(d)
		if ctx.Err() == nil {
			s.logger.Warn("cannot record what embedding cost; will try again", "bucket", events.EmbedCostBucket, "err", err)
		}
	}
}
