package extractor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// SharedProjector is seed 003 §3's token projection over the usage of
// every extractor calling one provider, kept as a TokenWindow under
// TokensKey(provider) in BudgetBucket.
type SharedProjector struct {
	kv       jetstream.KeyValue
	provider string
	tpm      int64
	window   time.Duration
	clk      clock.Clock
}

// NewSharedProjector returns the projector of provider, whose quota is
// tokensPerMinute (0 or less: unlimited, and the projector touches no
// bucket).
func NewSharedProjector(kv jetstream.KeyValue, provider string, tokensPerMinute int64, window time.Duration, clk clock.Clock) *SharedProjector {
	if window <= 0 {
		window = time.Minute
	}
	if clk == nil {
		clk = clock.System{}
	}
	return &SharedProjector{kv: kv, provider: provider, tpm: tokensPerMinute, window: window, clk: clk}
}

// Limited reports whether the provider has a quota to project against.
func (p *SharedProjector) Limited() bool { return p.tpm > 0 }

// Record appends one call's tokens to the shared window, dropping what has
// left it.
func (p *SharedProjector) Record(ctx context.Context, tokens int64) error {
	if !p.Limited() {
		return nil
	}
	now := p.clk.Now()
	_, err := updateJSON(ctx, p.kv, events.TokensKey(p.provider), func(w *events.TokenWindow) (bool, error) {
		w.Usage = append(p.trim(w.Usage, now), events.TokenUse{At: now, Tokens: max(tokens, 0)})
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("extractor: record %d tokens of %s: %w", tokens, p.provider, err)
	}
	return nil
}

// Project projects queueDepth more calls onto the shared window.
func (p *SharedProjector) Project(ctx context.Context, queueDepth int) (resilience.Projection, error) {
	now := p.clk.Now()
	if !p.Limited() {
		return resilience.ProjectTokenUsage(nil, queueDepth, p.window, p.tpm, now), nil
	}
	e, err := p.kv.Get(ctx, events.TokensKey(p.provider))
	var w events.TokenWindow
	switch {
	case isNotFound(err):
	case err != nil:
		return resilience.Projection{}, fmt.Errorf("extractor: tokens of %s: %w", p.provider, err)
	default:
		if err := jsonUnmarshal(e.Value(), &w); err != nil {
			return resilience.Projection{}, fmt.Errorf("extractor: tokens of %s: %w", p.provider, err)
		}
	}
	hist := make([]resilience.TokenUsage, len(w.Usage))
	for i, u := range w.Usage {
		hist[i] = resilience.TokenUsage{At: u.At, TotalTokens: u.Tokens}
	}
	return resilience.ProjectTokenUsage(hist, queueDepth, p.window, p.tpm, now), nil
}

func (p *SharedProjector) trim(usage []events.TokenUse, now time.Time) []events.TokenUse {
	start := now.Add(-p.window)
	i := 0
	for i < len(usage) && usage[i].At.Before(start) {
		i++
	}
	return usage[i:]
}

// depthCache caches the consumer's backlog, so a projection costs no
// request to the server per batch.
type depthCache struct {
	ttl   time.Duration
	clk   clock.Clock
	fetch func(context.Context) (int, error)

	mu    sync.Mutex
	at    time.Time
	depth int
	valid bool
}

func (c *depthCache) get(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clk.Now()
	if c.valid && now.Sub(c.at) < c.ttl && !now.Before(c.at) {
		return c.depth, nil
	}
	d, err := c.fetch(ctx)
	if err != nil {
		return 0, err
	}
	c.at, c.depth, c.valid = now, d, true
	return d, nil
}
