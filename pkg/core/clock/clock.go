// Package clock is the only source of time and randomness for pkg/core
// (seed 003 §10): components take a Clock and an RNG, production passes
// System and SystemRNG, tests pass Deterministic and DeterministicRNG and
// get the same result on every run.
package clock

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Clock tells the time in milliseconds since the Unix epoch.
type Clock interface {
	Now() time.Time
}

// RNG returns uniform floats in [0, 1).
type RNG interface {
	NextFloat() float64
}

// System is the wall clock.
type System struct{}

// Now implements Clock.
func (System) Now() time.Time { return time.Now() }

// SystemRNG is math/rand/v2's global source.
type SystemRNG struct{}

// NextFloat implements RNG.
func (SystemRNG) NextFloat() float64 { return rand.Float64() }

// Deterministic is a clock that moves only when told. It is safe for
// concurrent use.
type Deterministic struct {
	mu  sync.Mutex
	now time.Time
}

// NewDeterministic returns a clock reading start.
func NewDeterministic(start time.Time) *Deterministic { return &Deterministic{now: start} }

// NewDeterministicMillis returns a clock reading ms since the epoch (UTC).
func NewDeterministicMillis(ms int64) *Deterministic {
	return NewDeterministic(time.UnixMilli(ms).UTC())
}

// Now implements Clock.
func (c *Deterministic) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Reset sets the time.
func (c *Deterministic) Reset(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *Deterministic) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// DeterministicRNG is seed 003's test RNG: a linear congruential generator
// (seed = (seed·1103515245 + 12345) & 0x7fffffff, value = seed / 0x7fffffff)
// or, after SetSequence, a fixed sequence repeated. It is safe for
// concurrent use.
//
// The seed's LCG can return exactly 1.0 (when the state reaches 0x7fffffff),
// which breaks the [0, 1) contract; such a value is returned as the largest
// float below 1 instead.
type DeterministicRNG struct {
	mu   sync.Mutex
	seed int64
	seq  []float64
	idx  int
}

// NewDeterministicRNG returns an LCG RNG starting from seed.
func NewDeterministicRNG(seed int64) *DeterministicRNG { return &DeterministicRNG{seed: seed} }

// NextFloat implements RNG.
func (r *DeterministicRNG) NextFloat() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seq != nil {
		v := r.seq[r.idx%len(r.seq)]
		r.idx++
		return v
	}
	r.seed = (r.seed*1103515245 + 12345) & 0x7fffffff
	v := float64(r.seed) / 0x7fffffff
	if v >= 1 {
		v = 0.9999999999999999
	}
	return v
}

// Reset restarts the LCG from seed and rewinds any sequence.
func (r *DeterministicRNG) Reset(seed int64) {
	r.mu.Lock()
	r.seed, r.idx = seed, 0
	r.mu.Unlock()
}

// SetSequence makes NextFloat return values in order, repeating; nil
// returns to the LCG.
func (r *DeterministicRNG) SetSequence(values []float64) {
	r.mu.Lock()
	r.seq, r.idx = append([]float64(nil), values...), 0
	if len(values) == 0 {
		r.seq = nil
	}
	r.mu.Unlock()
}
