package resilience

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// ErrRateLimited is what a *RateLimitError matches with errors.Is.
var ErrRateLimited = errors.New("resilience: rate limit exceeded")

// ErrInvalidRule is returned by NewRateLimiter for a rule that cannot be
// enforced.
var ErrInvalidRule = errors.New("resilience: invalid rate rule")

// RateRule is one row of seed 002 §6's table: Limit requests per Window
// sustained, and up to Burst at once.
type RateRule struct {
	Limit  int
	Burst  int // 0 is Limit
	Window time.Duration
}

// DefaultRateRules is seed 002 §6's table. Tools not in it are not limited.
func DefaultRateRules() map[string]RateRule {
	return map[string]RateRule{
		"read_context": {Limit: 10, Burst: 15, Window: time.Minute},
		"read_doc":     {Limit: 30, Burst: 50, Window: time.Minute},
		"list_tasks":   {Limit: 20, Burst: 30, Window: time.Minute},
		"update_task":  {Limit: 10, Burst: 15, Window: time.Minute},
	}
}

// RateLimitError is a refused call, carrying the data of seed 002's 429
// error.
type RateLimitError struct {
	Tool string `json:"-"`
	// RetryAfter is when the next call would be allowed.
	RetryAfter time.Duration `json:"-"`
	// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1.
	RetryAfterSeconds int `json:"retry_after_seconds"`
	// Limit is the rule's sustained rate per window.
	Limit int `json:"limit"`
	// WindowSeconds is the rule's window, in seconds.
	WindowSeconds int `json:"window_seconds"`
	// CurrentCount is the requests the client made to the tool in its
	// current window, allowed or refused, this one included. A window is
	// WindowSeconds long and begins with the first request after the
	// previous one ended.
	CurrentCount int `json:"current_count"`
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limit exceeded for %s: %d requests in the current %d s window (limit %d); retry after %d s",
		e.Tool, e.CurrentCount, e.WindowSeconds, e.Limit, e.RetryAfterSeconds)
}

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// rule is a RateRule in the form the limiter computes with.
type rule struct {
	RateRule
	interval  time.Duration // Window / Limit: one request's worth of refill
	tolerance time.Duration // Burst · interval: the bucket's capacity
}

type rateKey struct{ tool, client string }

// rateState is one client's bucket for one tool, kept as GCRA's theoretical
// arrival time (the moment the bucket would be full again) plus the counter
// of the current window. Times are offsets from the limiter's epoch.
type rateState struct {
	tat         time.Duration
	windowStart time.Duration
	count       int
}

const rateShards = 64

type rateShard struct {
	mu        sync.Mutex
	states    map[rateKey]rateState
	nextSweep time.Duration
	_         [40]byte // keep shards on separate cache lines
}

// RateLimiter limits tool calls per tool and per client with a token
// bucket: each client holds, per tool, a bucket of Burst tokens that refills
// at Limit per Window, and a call spends one. The edge calls Allow before
// running a tool. It is safe for concurrent use.
//
// Memory is bounded by the clients active recently: a client's entry is
// dropped once its bucket is full again and its window has ended, when it is
// indistinguishable from a client never seen (at most
// max(Burst·Window/Limit, Window) after its last call, plus one sweep
// interval, the shortest rule window).
type RateLimiter struct {
	rules      map[string]rule
	clk        clock.Clock
	epoch      time.Time
	seed       maphash.Seed
	sweepEvery time.Duration
	shards     [rateShards]rateShard
}

// NewRateLimiter returns a limiter enforcing rules, timed by clk; nil rules
// are DefaultRateRules. A rule with a Limit or Window below 1, or a negative
// Burst, returns ErrInvalidRule.
func NewRateLimiter(rules map[string]RateRule, clk clock.Clock) (*RateLimiter, error) {
	if rules == nil {
		rules = DefaultRateRules()
	}
	l := &RateLimiter{rules: make(map[string]rule, len(rules)), clk: clk, epoch: clk.Now(), seed: maphash.MakeSeed()}
	for tool, r := range rules {
		if r.Limit < 1 || r.Window <= 0 || r.Burst < 0 {
			return nil, fmt.Errorf("%w: %s %+v", ErrInvalidRule, tool, r)
		}
		if r.Burst == 0 {
			r.Burst = r.Limit
		}
		iv := r.Window / time.Duration(r.Limit)
		l.rules[tool] = rule{RateRule: r, interval: iv, tolerance: time.Duration(r.Burst) * iv}
		if l.sweepEvery == 0 || r.Window < l.sweepEvery {
			l.sweepEvery = r.Window
		}
	}
	for i := range l.shards {
		l.shards[i].states = make(map[rateKey]rateState)
		l.shards[i].nextSweep = l.sweepEvery
	}
	return l, nil
}

// Allow admits or refuses one call of tool by client. It returns nil if the
// call may go ahead, and a *RateLimitError if not. Tools without a rule are
// always allowed and leave no state.
func (l *RateLimiter) Allow(tool, client string) error {
	r, ok := l.rules[tool]
	if !ok {
		return nil
	}
	now := l.clk.Now().Sub(l.epoch)
	k := rateKey{tool, client}
	sh := &l.shards[maphash.Comparable(l.seed, k)%rateShards]

	sh.mu.Lock()
	if now >= sh.nextSweep {
		sh.sweepLocked(l.rules, now)
		sh.nextSweep = now + l.sweepEvery
	}
	st, seen := sh.states[k]
	if !seen || now-st.windowStart >= r.Window {
		st.windowStart, st.count = now, 0
	}
	st.count++
	tat := max(st.tat, now) + r.interval
	refused := tat-now > r.tolerance
	if !refused {
		st.tat = tat
	}
	sh.states[k] = st
	sh.mu.Unlock()

	if !refused {
		return nil
	}
	wait := tat - r.tolerance - now
	return &RateLimitError{
		Tool:              tool,
		RetryAfter:        wait,
		RetryAfterSeconds: max(int(math.Ceil(wait.Seconds())), 1),
		Limit:             r.Limit,
		WindowSeconds:     int(math.Ceil(r.Window.Seconds())),
		CurrentCount:      st.count,
	}
}

// Tracked is the number of (tool, client) pairs the limiter holds state for.
func (l *RateLimiter) Tracked() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.states)
		sh.mu.Unlock()
	}
	return n
}

// sweepLocked drops the entries that carry no information any more: bucket
// full (tat ≤ now) and window over.
func (sh *rateShard) sweepLocked(rules map[string]rule, now time.Duration) {
	for k, st := range sh.states {
		if st.tat <= now && now-st.windowStart >= rules[k.tool].Window {
			delete(sh.states, k)
		}
	}
}
