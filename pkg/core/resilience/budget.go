package resilience

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// ErrInvalidAmount is returned for a cost or budget that is NaN, infinite,
// negative, above the seed's safe-integer bound, or too large to count in
// micro-dollars.
var ErrInvalidAmount = errors.New("resilience: invalid amount")

// MaxSafeAmountUSD is seed 003's overflow bound, JavaScript's
// Number.MAX_SAFE_INTEGER (2^53−1). Amounts above it are rejected; so are
// amounts of 2^63 micro-dollars (about 9.22e12 USD) or more, which an int64
// cannot count, so in practice the bound is MaxAmountUSD.
const MaxSafeAmountUSD = 1<<53 - 1

// MaxAmountUSD is the largest amount the tracker accepts: the largest whole
// dollar amount whose micro-dollars fit an int64.
const MaxAmountUSD = math.MaxInt64 / 1_000_000

// Budget alert thresholds, in percent of the daily budget (seed 003 §6).
var budgetThresholds = [...]int{70, 90, 100}

// Decision texts of seed 003's handleExactBudgetRequest.
const (
	BudgetExhaustWarning = "This request will exactly exhaust the budget"
	BudgetExceeded       = "budget_exceeded"
)

// Micros converts US dollars to whole micro-dollars, the unit budgets are
// counted in, rounding to the nearest. Counting in integers is what makes
// the seed's exactly-equal case hold: 0.1 + 0.2 is 300000 µ$, equal to a
// 0.3 budget, where float64 gives 0.30000000000000004 > 0.3. If usd is NaN,
// infinite, negative or above MaxAmountUSD, ErrInvalidAmount is returned.
func Micros(usd float64) (int64, error) {
	switch {
	case math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0:
		return 0, fmt.Errorf("%w: %v", ErrInvalidAmount, usd)
	case usd > MaxSafeAmountUSD:
		return 0, fmt.Errorf("%w: %v exceeds the safe integer bound", ErrInvalidAmount, usd)
	case usd > MaxAmountUSD:
		return 0, fmt.Errorf("%w: %v USD is too large to count in micro-dollars", ErrInvalidAmount, usd)
	}
	return int64(math.Round(usd * 1e6)), nil
}

func usd(micros int64) float64 { return float64(micros) / 1e6 }

// BudgetSnapshot is a budget window's whole state. It is plain data so that
// workers can share one budget through a KV bucket: read the snapshot and its
// revision, apply Budget.Spend, write it back with compare-and-set, retry on
// conflict. The zero value is a window not yet begun.
type BudgetSnapshot struct {
	// WindowStart is the UTC midnight that began the window.
	WindowStart time.Time `json:"window_start"`
	// SpentMicros is the spend in the window, in micro-dollars.
	SpentMicros int64 `json:"spent_micros"`
	// AlertsFired lists the thresholds (70, 90, 100) already alerted in the
	// window, ascending.
	AlertsFired []int `json:"alerts_fired,omitempty"`
}

// BudgetDecision is the answer to a spending request (seed 003's
// handleExactBudgetRequest).
type BudgetDecision struct {
	Allowed bool `json:"allowed"`
	// Warning is BudgetExhaustWarning when the request equals what remains.
	Warning string `json:"warning,omitempty"`
	// Reason is BudgetExceeded when the request is refused.
	Reason string `json:"reason,omitempty"`
	// ShortfallMicros is by how much a refused request exceeds what remains.
	ShortfallMicros int64 `json:"shortfall_micros,omitempty"`
	// RemainingMicros is the budget left before the request; negative when
	// recorded spend has overrun it; 0 when the budget is disabled.
	RemainingMicros int64 `json:"remaining_micros"`
}

// ShortfallUSD is ShortfallMicros in dollars.
func (d BudgetDecision) ShortfallUSD() float64 { return usd(d.ShortfallMicros) }

// BudgetAlert reports that a window's spend reached a threshold.
type BudgetAlert struct {
	// Threshold is 70, 90 or 100 (percent).
	Threshold int
	// UtilizationPercent is spend / budget · 100 when the alert fired.
	UtilizationPercent float64
	SpentMicros        int64
	BudgetMicros       int64
	WindowStart        time.Time
}

// Budget is a daily spending limit. Its methods are pure: they take a
// snapshot and the time and return the next snapshot, so the same rules
// serve one process (BudgetTracker) and many sharing a KV bucket.
type Budget struct {
	limit int64 // micro-dollars; 0 disables
}

// NewBudget returns a daily budget of dailyUSD. Zero or negative disables
// enforcement, as in the seed. NaN, an infinity or an amount above
// MaxAmountUSD returns ErrInvalidAmount.
func NewBudget(dailyUSD float64) (Budget, error) {
	if !math.IsNaN(dailyUSD) && !math.IsInf(dailyUSD, 0) && dailyUSD <= 0 {
		return Budget{}, nil
	}
	m, err := Micros(dailyUSD)
	if err != nil {
		return Budget{}, err
	}
	return Budget{limit: m}, nil
}

// Enabled reports whether the budget is enforced.
func (b Budget) Enabled() bool { return b.limit > 0 }

// LimitMicros is the daily budget in micro-dollars; 0 when disabled.
func (b Budget) LimitMicros() int64 { return b.limit }

// WindowStart is the UTC midnight at or before now.
func WindowStart(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Roll begins a new window if now is past the snapshot's day: spend and
// alerts start again from zero. A clock that moves back does not reopen an
// earlier day.
func (b Budget) Roll(s BudgetSnapshot, now time.Time) BudgetSnapshot {
	if start := WindowStart(now); start.After(s.WindowStart) {
		return BudgetSnapshot{WindowStart: start}
	}
	return s
}

// Decide answers a request estimated to cost estimateUSD, in the window
// that holds now, and returns the snapshot rolled to that window. It
// refuses the request if and only if spent + estimate > budget: a request
// that exactly exhausts the budget is allowed, with BudgetExhaustWarning.
// A disabled budget allows everything. An invalid estimate returns
// ErrInvalidAmount.
func (b Budget) Decide(s BudgetSnapshot, estimateUSD float64, now time.Time) (BudgetSnapshot, BudgetDecision, error) {
	est, err := Micros(estimateUSD)
	if err != nil {
		return s, BudgetDecision{}, err
	}
	s = b.Roll(s, now)
	if !b.Enabled() {
		return s, BudgetDecision{Allowed: true}, nil
	}
	remaining := b.limit - s.SpentMicros // both ≥ 0: cannot overflow
	d := BudgetDecision{RemainingMicros: remaining}
	switch {
	case est > remaining:
		d.Reason, d.ShortfallMicros = BudgetExceeded, est-remaining
	case est == remaining:
		d.Allowed, d.Warning = true, BudgetExhaustWarning
	default:
		d.Allowed = true
	}
	return s, d, nil
}

// Spend records actualUSD spent at now and returns the new snapshot and the
// alerts it crossed: each of 70, 90 and 100 % fires once per window, when
// spend·100 ≥ threshold·budget (exact). Recorded spend is never refused,
// even past the budget; a disabled budget alerts nothing. An invalid amount
// returns ErrInvalidAmount and leaves the snapshot as it was.
func (b Budget) Spend(s BudgetSnapshot, actualUSD float64, now time.Time) (BudgetSnapshot, []BudgetAlert, error) {
	amount, err := Micros(actualUSD)
	if err != nil {
		return s, nil, err
	}
	s = b.Roll(s, now)
	s.AlertsFired = slices.Clone(s.AlertsFired) // never write the caller's array
	if s.SpentMicros > math.MaxInt64-amount {
		s.SpentMicros = math.MaxInt64
	} else {
		s.SpentMicros += amount
	}
	if !b.Enabled() {
		return s, nil, nil
	}
	var alerts []BudgetAlert
	for _, th := range budgetThresholds {
		if reached(s.SpentMicros, b.limit, th) && !slices.Contains(s.AlertsFired, th) {
			s.AlertsFired = append(s.AlertsFired, th)
			alerts = append(alerts, BudgetAlert{
				Threshold:          th,
				UtilizationPercent: b.utilization(s.SpentMicros),
				SpentMicros:        s.SpentMicros,
				BudgetMicros:       b.limit,
				WindowStart:        s.WindowStart,
			})
		}
	}
	slices.Sort(s.AlertsFired)
	return s, alerts, nil
}

func (b Budget) utilization(spent int64) float64 {
	if !b.Enabled() {
		return 0
	}
	return float64(spent) / float64(b.limit) * 100
}

// reached reports spent·100 ≥ pct·limit in 128-bit arithmetic.
func reached(spent, limit int64, pct int) bool {
	h1, l1 := bits.Mul64(uint64(spent), 100)
	h2, l2 := bits.Mul64(uint64(limit), uint64(pct))
	return h1 > h2 || h1 == h2 && l1 >= l2
}

// BudgetConfig configures a BudgetTracker.
type BudgetConfig struct {
	// DailyUSD is the budget per UTC day; zero or negative disables it.
	DailyUSD float64
	// OnAlert, if set, is called for each threshold a RecordSpend crosses,
	// after the tracker's lock is released (so it may call the tracker).
	// Alerts of concurrent RecordSpends may therefore arrive out of
	// threshold order.
	OnAlert func(BudgetAlert)
}

// BudgetTracker is seed 003 §6's budget tracker for one process: the
// extractor asks it before each LLM call and tells it the actual cost
// after. It is safe for concurrent use.
type BudgetTracker struct {
	budget  Budget
	onAlert func(BudgetAlert)
	clk     clock.Clock

	mu   sync.Mutex
	snap BudgetSnapshot
}

// NewBudgetTracker returns a tracker whose windows follow clk. An invalid
// DailyUSD returns ErrInvalidAmount.
func NewBudgetTracker(cfg BudgetConfig, clk clock.Clock) (*BudgetTracker, error) {
	b, err := NewBudget(cfg.DailyUSD)
	if err != nil {
		return nil, err
	}
	return &BudgetTracker{budget: b, onAlert: cfg.OnAlert, clk: clk, snap: BudgetSnapshot{WindowStart: WindowStart(clk.Now())}}, nil
}

// Budget returns the tracker's budget, for use with the pure functions.
func (t *BudgetTracker) Budget() Budget { return t.budget }

// CanSpend reports whether a request estimated at estimateUSD fits: false
// if and only if spent + estimate > budget. An invalid estimate returns
// ErrInvalidAmount.
func (t *BudgetTracker) CanSpend(estimateUSD float64) (bool, error) {
	d, err := t.Decide(estimateUSD)
	return d.Allowed, err
}

// Decide is CanSpend with the reasons: a warning when the request exactly
// exhausts the budget, the shortfall when it does not fit.
func (t *BudgetTracker) Decide(estimateUSD float64) (BudgetDecision, error) {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s, d, err := t.budget.Decide(t.snap, estimateUSD, now)
	if err == nil {
		t.snap = s
	}
	return d, err
}

// RecordSpend adds actualUSD to the window's spend and reports each
// threshold crossed to OnAlert. An invalid amount returns ErrInvalidAmount
// and records nothing.
func (t *BudgetTracker) RecordSpend(actualUSD float64) error {
	now := t.clk.Now()
	t.mu.Lock()
	s, alerts, err := t.budget.Spend(t.snap, actualUSD, now)
	if err == nil {
		t.snap = s
	}
	t.mu.Unlock()
	if t.onAlert != nil {
		for _, a := range alerts {
			t.onAlert(a)
		}
	}
	return err
}

// Utilization is the current window's spend in percent of the budget (the
// seed's memory_llm_budget_utilization_percent); 0 when disabled.
func (t *BudgetTracker) Utilization() float64 {
	s := t.Snapshot()
	return t.budget.utilization(s.SpentMicros)
}

// Snapshot returns the state of the current window.
func (t *BudgetTracker) Snapshot() BudgetSnapshot {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.snap = t.budget.Roll(t.snap, now)
	s := t.snap
	s.AlertsFired = slices.Clone(s.AlertsFired)
	return s
}

// Restore replaces the tracker's state with s, for instance one read from
// the shared KV bucket. A snapshot of an earlier day rolls over on next use.
// A negative spend returns ErrInvalidAmount.
func (t *BudgetTracker) Restore(s BudgetSnapshot) error {
	if s.SpentMicros < 0 {
		return fmt.Errorf("%w: spent %d micro-dollars", ErrInvalidAmount, s.SpentMicros)
	}
	s.AlertsFired = slices.Clone(s.AlertsFired)
	slices.Sort(s.AlertsFired)
	t.mu.Lock()
	t.snap = s
	t.mu.Unlock()
	return nil
}
