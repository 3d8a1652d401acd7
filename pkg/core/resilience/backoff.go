package resilience

import (
	"math"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// BackoffConfig shapes the retry delays of seed 003 §2:
//
//	delay(attempt) = min(Base·Multiplier^attempt, Max) + jitter
//	jitter         = floor(rng·(2·range+1)) − range   (whole milliseconds)
//
// Zero fields take the defaults of DefaultBackoffConfig.
type BackoffConfig struct {
	// Base is the delay before the first retry (attempt 0), before jitter.
	Base time.Duration
	// Multiplier grows the delay from one attempt to the next.
	Multiplier float64
	// Max caps the exponential part. Jitter is added after the cap, as the
	// seed does, so a delay can reach Max+JitterRange.
	Max time.Duration
	// JitterRange is the ± spread, counted in whole milliseconds. A negative
	// value turns jitter off.
	JitterRange time.Duration
	// MaxAttempts bounds how many times backoff.Retry runs the operation:
	// NextBackOff returns backoff.Stop once MaxAttempts−1 delays have been
	// handed out since Reset. Zero means no bound.
	MaxAttempts int
	// MaxElapsed stops the retries once the time since Reset, read from the
	// injected clock, plus the next delay would exceed it (the rule of
	// backoff.ExponentialBackOff). Zero means no bound.
	MaxElapsed time.Duration
}

// DefaultBackoffConfig is seed 003's DEFAULT_BACKOFF_CONFIG: 500 ms, ×2,
// capped at 8 s, ±200 ms, with no bound on attempts or elapsed time.
func DefaultBackoffConfig() BackoffConfig {
	return BackoffConfig{Base: 500 * time.Millisecond, Multiplier: 2, Max: 8 * time.Second, JitterRange: 200 * time.Millisecond}
}

func (c *BackoffConfig) setDefaults() {
	d := DefaultBackoffConfig()
	if c.Base <= 0 {
		c.Base = d.Base
	}
	if c.Multiplier <= 0 {
		c.Multiplier = d.Multiplier
	}
	if c.Max <= 0 {
		c.Max = d.Max
	}
	if c.JitterRange == 0 {
		c.JitterRange = d.JitterRange
	}
}

// JitterMillis is the seed's getJitter: it maps r in [0, 1) to a whole
// number of milliseconds in [−rangeMs, +rangeMs], each equally likely.
func JitterMillis(r float64, rangeMs int64) int64 {
	if rangeMs <= 0 {
		return 0
	}
	return int64(math.Floor(r*float64(2*rangeMs+1))) - rangeMs
}

// Delay is the delay before retry number attempt (0 for the first retry),
// with r the random draw that sets the jitter. A delay below zero, which only
// a Base smaller than the jitter range can produce, is returned as zero:
// backoff.Stop is negative, and a negative wait means nothing.
func (c BackoffConfig) Delay(attempt int, r float64) time.Duration {
	c.setDefaults()
	exp := float64(c.Base) * math.Pow(c.Multiplier, float64(attempt))
	capped := min(exp, float64(c.Max)) // Pow may give +Inf; min still caps it
	d := time.Duration(capped) + time.Duration(JitterMillis(r, c.JitterRange.Milliseconds()))*time.Millisecond
	return max(d, 0)
}

// Backoff is seed 003 §2's exponential backoff with jitter as a
// backoff.BackOff, so it plugs into backoff.Retry and its relatives. The
// extractor retries LLM calls with it and the Ollama embedder its requests.
// It is safe for concurrent use, though one retry loop per Backoff is the
// intended use.
type Backoff struct {
	cfg BackoffConfig
	rng clock.RNG
	clk clock.Clock

	mu      sync.Mutex
	attempt int
	start   time.Time
}

var _ backoff.BackOff = (*Backoff)(nil)

// NewBackoff returns a Backoff that draws jitter from rng and measures
// MaxElapsed on clk.
func NewBackoff(cfg BackoffConfig, rng clock.RNG, clk clock.Clock) *Backoff {
	cfg.setDefaults()
	return &Backoff{cfg: cfg, rng: rng, clk: clk, start: clk.Now()}
}

// Jitter draws one jitter value, the seed's getJitter(jitterRangeMs).
func (b *Backoff) Jitter() time.Duration {
	return time.Duration(JitterMillis(b.rng.NextFloat(), b.cfg.JitterRange.Milliseconds())) * time.Millisecond
}

// Delay is the seed's calculateDelay: the delay before retry number
// attempt, with one draw of jitter. It does not move the Backoff's own
// attempt counter.
func (b *Backoff) Delay(attempt int) time.Duration {
	return b.cfg.Delay(attempt, b.rng.NextFloat())
}

// NextBackOff implements backoff.BackOff: the delay for the next attempt, or
// backoff.Stop when MaxAttempts or MaxElapsed is reached.
func (b *Backoff) NextBackOff() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.MaxAttempts > 0 && b.attempt+1 >= b.cfg.MaxAttempts {
		return backoff.Stop
	}
	d := b.cfg.Delay(b.attempt, b.rng.NextFloat())
	if b.cfg.MaxElapsed > 0 && b.clk.Now().Sub(b.start)+d > b.cfg.MaxElapsed {
		return backoff.Stop
	}
	b.attempt++
	return d
}

// Reset implements backoff.BackOff: the next delay is attempt 0's again and
// the elapsed time counts from now. backoff.Retry calls it before its first
// attempt.
func (b *Backoff) Reset() {
	b.mu.Lock()
	b.attempt, b.start = 0, b.clk.Now()
	b.mu.Unlock()
}
