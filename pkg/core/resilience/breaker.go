package resilience

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// BreakerState is a circuit breaker's state. Its value is the gauge of seed
// 003's memory_llm_circuit_state metric: closed 0, open 1, half_open 2.
type BreakerState int32

// The states of seed 003 §4.
const (
	Closed   BreakerState = 0
	Open     BreakerState = 1
	HalfOpen BreakerState = 2
)

func (s BreakerState) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "unknown"
}

// BreakerConfig configures a CircuitBreaker. Zero fields take the defaults
// of DefaultBreakerConfig.
type BreakerConfig struct {
	// ErrorThreshold opens the circuit when failures/WindowSize reaches it;
	// values above 1 are taken as 1.
	ErrorThreshold float64
	// WindowSize is the fixed denominator of the failure rate. The seed
	// calls it "the last 20 attempts" but divides the failures in the time
	// window by it, successes not counted: with the defaults, 10 failures
	// within a minute open the circuit, however many calls succeeded.
	WindowSize int
	// Window is how long a failure counts.
	Window time.Duration
	// Cooldown is how long the circuit stays open before CanExecute lets
	// probes through (half_open).
	Cooldown time.Duration
	// ProbesRequired is the number of successes in half_open that close the
	// circuit.
	ProbesRequired int
	// OnStateChange, if set, is called on every transition, in order, with
	// the breaker's lock held (the seed's emitMetric). It may call State but
	// no other method of the breaker.
	OnStateChange func(from, to BreakerState)
}

// DefaultBreakerConfig is seed 003's DEFAULT_CIRCUIT_CONFIG: rate 0.5 over
// 20, a 60 s window, a 30 s cooldown, 3 probes.
func DefaultBreakerConfig() BreakerConfig {
	return BreakerConfig{ErrorThreshold: 0.5, WindowSize: 20, Window: time.Minute, Cooldown: 30 * time.Second, ProbesRequired: 3}
}

func (c *BreakerConfig) setDefaults() {
	d := DefaultBreakerConfig()
	if c.ErrorThreshold <= 0 {
		c.ErrorThreshold = d.ErrorThreshold
	}
	c.ErrorThreshold = min(c.ErrorThreshold, 1)
	if c.WindowSize <= 0 {
		c.WindowSize = d.WindowSize
	}
	if c.Window <= 0 {
		c.Window = d.Window
	}
	if c.Cooldown <= 0 {
		c.Cooldown = d.Cooldown
	}
	if c.ProbesRequired <= 0 {
		c.ProbesRequired = d.ProbesRequired
	}
}

// CircuitBreaker is seed 003 §4's circuit breaker. The extractor wraps its
// LLM calls in one and the Ollama embedder its requests: while the service
// fails, callers stop calling it and fall back (to rule-based extraction, to
// keyword search). It is safe for concurrent use.
type CircuitBreaker struct {
	cfg   BreakerConfig
	clk   clock.Clock
	state atomic.Int32 // written under mu; read without it by State and the closed fast path

	mu              sync.Mutex
	failures        []time.Time // ascending, younger than Window, at most WindowSize
	lastStateChange time.Time
	probes          int
}

// NewCircuitBreaker returns a closed breaker timed by clk.
func NewCircuitBreaker(cfg BreakerConfig, clk clock.Clock) *CircuitBreaker {
	cfg.setDefaults()
	return &CircuitBreaker{
		cfg:             cfg,
		clk:             clk,
		lastStateChange: clk.Now(),
	}
}

// State is the current state as last recorded. An open breaker whose
// cooldown has passed reads open until the next CanExecute moves it to
// half_open, as in the seed.
func (b *CircuitBreaker) State() BreakerState { return BreakerState(b.state.Load()) }

// CanExecute reports whether a call may go ahead: false only while open.
// It is where an open breaker whose cooldown has passed turns half_open.
// Half_open admits every caller (the seed sets no limit on concurrent
// probes); ProbesRequired successes close it.
func (b *CircuitBreaker) CanExecute() bool {
	if b.State() == Closed {
		return true
	}
	now := b.clk.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if BreakerState(b.state.Load()) == Open && now.Sub(b.lastStateChange) >= b.cfg.Cooldown {
		b.transitionLocked(HalfOpen, now)
	}
	return BreakerState(b.state.Load()) != Open
}

// RecordSuccess records a call that succeeded.
func (b *CircuitBreaker) RecordSuccess() {
	now := b.clk.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if BreakerState(b.state.Load()) == HalfOpen {
		b.probes++
		if b.probes >= b.cfg.ProbesRequired {
			b.transitionLocked(Closed, now)
		}
	}
	b.cleanFailuresLocked(now)
}

// RecordFailure records a call that failed. In half_open it reopens the
// circuit; in closed it opens it when the failure rate reaches the
// threshold.
func (b *CircuitBreaker) RecordFailure() {
	now := b.clk.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = append(b.failures, now)
	b.cleanFailuresLocked(now)
	switch BreakerState(b.state.Load()) {
	case HalfOpen:
		b.transitionLocked(Open, now)
	case Closed:
		if float64(len(b.failures))/float64(b.cfg.WindowSize) >= b.cfg.ErrorThreshold {
			b.transitionLocked(Open, now)
		}
	}
}

// FailureRate is the failures within the window divided by WindowSize.
func (b *CircuitBreaker) FailureRate() float64 {
	now := b.clk.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cleanFailuresLocked(now)
	return float64(len(b.failures)) / float64(b.cfg.WindowSize)
}

func (b *CircuitBreaker) transitionLocked(to BreakerState, now time.Time) {
	from := BreakerState(b.state.Load())
	b.state.Store(int32(to))
	b.lastStateChange = now
	b.probes = 0
	if b.cfg.OnStateChange != nil {
		b.cfg.OnStateChange(from, to)
	}
}

// cleanFailuresLocked keeps the failures younger than the window (the seed's
// t > now − windowMs), and at most WindowSize of them: the rate compares
// count/WindowSize with a threshold of at most 1, so older ones beyond that
// cannot change a decision, and memory stays bounded.
func (b *CircuitBreaker) cleanFailuresLocked(now time.Time) {
	cutoff := now.Add(-b.cfg.Window)
	i := 0
	for i < len(b.failures) && !b.failures[i].After(cutoff) {
		i++
	}
	i = max(i, len(b.failures)-b.cfg.WindowSize)
	if i > 0 {
		b.failures = append(b.failures[:0], b.failures[i:]...)
	}
}
