package extractor

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Config tunes a Service. The zero value runs with a disabled budget and
// free tokens (a local Ollama).
type Config struct {
	// Concurrency is how many batches are handled at once; default 2 (an
	// LLM server answers one or two requests at a time anyway).
	Concurrency int
	// DailyUSD is the LLM budget per UTC day shared by every extractor;
	// zero or negative disables it (calls are still counted).
	DailyUSD float64
	// PriceInPerMTok and PriceOutPerMTok are the provider's prices in USD
	// per million prompt and output tokens. With both 0 nothing costs
	// anything and the budget never refuses.
	PriceInPerMTok, PriceOutPerMTok float64
	// CallTimeout bounds one LLM extraction; default 3 min. A call that
	// times out takes the rule path.
	CallTimeout time.Duration
	// ProgressEvery is how often a worker waiting on the LLM tells the
	// server it still holds the batch; default 1 min, well inside the
	// consumer's AckWait (at least 5 min).
	ProgressEvery time.Duration
	// Salience is the selection of messages shown to the LLM; the zero
	// value is memory.DefaultSalienceConfig.
	Salience memory.SalienceConfig
	// Rules are the grafting phrases of the rule path; the zero value is
	// memory.DefaultGraftRules.
	Rules memory.GraftRules
	// Breaker guards the LLM; zero fields take the seed's defaults.
	Breaker resilience.BreakerConfig
	// TokenWindow is the span of token usage the projection looks at;
	// default 1 min.
	TokenWindow time.Duration
	// TokensPerMinute is the quota per provider; nil is
	// resilience.DefaultTokensPerMinute. A provider missing from it, or
	// at 0, is unlimited and never throttled.
	TokensPerMinute map[string]int64
	// QueueDepthTTL is how long the consumer's pending count, which the
	// projection multiplies, is reused before it is asked again; default
	// 5 s.
	QueueDepthTTL time.Duration
	// Stream and Consumer are where batches come from; default
	// events.IngestStream and events.ExtractorConsumer.
	Stream, Consumer string
	// MaxDeliver must match the consumer's (bus.Settings.MaxDeliver);
	// default 5.
	MaxDeliver int
	// RetryDelay is the redelivery delay after the n-th failed delivery
	// (NATS unavailable); nil is bus.Worker's default.
	RetryDelay func(delivered uint64) time.Duration
	// Clock and RNG drive budget days, timestamps and salience tie-breaks;
	// nil is the system's.
	Clock clock.Clock
	RNG   clock.RNG
}

func (c *Config) setDefaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 3 * time.Minute
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = time.Minute
	}
	if c.Salience.TopK == 0 && c.Salience.MaxTokens == 0 {
		c.Salience = memory.DefaultSalienceConfig()
	}
	if len(c.Rules.Decision) == 0 {
		c.Rules = memory.DefaultGraftRules()
	}
	if c.TokenWindow <= 0 {
		c.TokenWindow = time.Minute
	}
	if c.TokensPerMinute == nil {
		c.TokensPerMinute = resilience.DefaultTokensPerMinute()
	}
	if c.QueueDepthTTL <= 0 {
		c.QueueDepthTTL = 5 * time.Second
	}
	if c.Stream == "" {
		c.Stream = events.IngestStream
	}
	if c.Consumer == "" {
		c.Consumer = events.ExtractorConsumer
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 5
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	if c.RNG == nil {
		c.RNG = clock.SystemRNG{}
	}
}

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("extractor: invalid config")

// Validate reports a config the service cannot run with.
func (c Config) Validate() error {
	c.setDefaults()
	for name, v := range map[string]float64{"daily budget": c.DailyUSD, "price in": c.PriceInPerMTok, "price out": c.PriceOutPerMTok} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s is %v: give a finite number of USD", ErrInvalidConfig, name, v)
		}
	}
	if c.PriceInPerMTok < 0 || c.PriceOutPerMTok < 0 {
		return fmt.Errorf("%w: negative price per million tokens (in %v, out %v): use 0 for a free model", ErrInvalidConfig, c.PriceInPerMTok, c.PriceOutPerMTok)
	}
	if _, err := resilience.NewBudget(c.DailyUSD); err != nil {
		return fmt.Errorf("%w: daily budget: %w", ErrInvalidConfig, err)
	}
	if err := c.Salience.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// CostMicros is what a call of promptTokens in and outputTokens out costs,
// in micro-dollars, rounded up so that the budget errs on the side of
// refusing. A price in USD per million tokens is a price in micro-dollars
// per token.
func (c Config) CostMicros(promptTokens, outputTokens int) int64 {
	cost := float64(max(promptTokens, 0))*c.PriceInPerMTok + float64(max(outputTokens, 0))*c.PriceOutPerMTok
	if cost <= 0 {
		return 0
	}
	// Whole prices give exact integers; only the fractional part of a
	// fractional price is rounded up.
	return int64(math.Ceil(cost - 1e-9))
}
