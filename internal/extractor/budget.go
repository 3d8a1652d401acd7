package extractor

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// SharedBudget is seed 003 §6's daily budget shared by every extractor
// through BudgetBucket. A call reserves its estimated cost before it is
// made and settles the actual cost after, each a compare-and-set on the
// day's BudgetState, so N workers together never pass the limit: the
// reservations they hold count as spent.
type SharedBudget struct {
	kv     jetstream.KeyValue
	budget resilience.Budget
	clk    clock.Clock
	logger *slog.Logger
	// durable, if set, runs after a reservation is written and before the
	// call it pays for is allowed: spend the store lost would be spent
	// twice (bus.Conn.Durable).
	durable func(context.Context) error

	alerts [3]atomic.Uint64 // 70, 90, 100 %
}

// Reservation is an estimated cost charged to a day, to be settled with the
// actual cost.
type Reservation struct {
	// Day is the UTC midnight of the day charged: a call that straddles
	// midnight is settled against the day that reserved it.
	Day    time.Time
	Micros int64
}

// NewSharedBudget returns the budget of dailyUSD per UTC day kept in kv
// (BudgetBucket). Zero or negative disables enforcement; calls are still
// counted. An invalid amount returns resilience.ErrInvalidAmount.
func NewSharedBudget(kv jetstream.KeyValue, dailyUSD float64, clk clock.Clock, logger *slog.Logger) (*SharedBudget, error) {
	b, err := resilience.NewBudget(dailyUSD)
	if err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.System{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SharedBudget{kv: kv, budget: b, clk: clk, logger: logger}, nil
}

// LimitMicros is the daily limit; 0 when disabled.
func (b *SharedBudget) LimitMicros() int64 { return b.budget.LimitMicros() }

// Alerts returns how many 70, 90 and 100 % alerts this process fired.
func (b *SharedBudget) Alerts() [3]uint64 {
	return [3]uint64{b.alerts[0].Load(), b.alerts[1].Load(), b.alerts[2].Load()}
}

// State returns the BudgetState of the day holding t.
func (b *SharedBudget) State(ctx context.Context, t time.Time) (events.BudgetState, error) {
	e, err := b.kv.Get(ctx, events.BudgetKey(t))
	if err != nil {
		if isNotFound(err) {
			return events.BudgetState{WindowStart: resilience.WindowStart(t)}, nil
		}
		return events.BudgetState{}, fmt.Errorf("extractor: budget %s: %w", events.BudgetKey(t), err)
	}
	var st events.BudgetState
	if err := jsonUnmarshal(e.Value(), &st); err != nil {
		return st, fmt.Errorf("extractor: budget %s: %w", events.BudgetKey(t), err)
	}
	return st, nil
}

// Reserve asks for estimateMicros of today's budget. It applies the seed's
// rule to the day's spend (open reservations included): refused if and
// only if spent + estimate > limit; allowed, with
// resilience.BudgetExhaustWarning, when it is exactly equal. An allowed
// reservation is charged at once and must be settled; a refused one is
// only counted (BudgetState.Refused) and returns a zero Reservation. A
// reservation whose worker dies before Settle stays charged: the day may
// end under-used, never overspent. Errors are the bucket's (the caller
// retries the batch later rather than call without a budget).
func (b *SharedBudget) Reserve(ctx context.Context, estimateMicros int64) (Reservation, resilience.BudgetDecision, error) {
	estimateMicros = max(estimateMicros, 0)
	now := b.clk.Now()
	day := resilience.WindowStart(now)
	var (
		dec    resilience.BudgetDecision
		alerts []resilience.BudgetAlert
	)
	_, err := updateJSON(ctx, b.kv, events.BudgetKey(day), func(st *events.BudgetState) (bool, error) {
		if st.WindowStart.IsZero() {
			st.WindowStart = day
		}
		st.LimitMicros = b.budget.LimitMicros()
		snap := resilience.BudgetSnapshot{WindowStart: st.WindowStart, SpentMicros: st.SpentMicros, AlertsFired: st.AlertsFired}
		_, d, err := b.budget.Decide(snap, usd(estimateMicros), now)
		if err != nil {
			return false, err
		}
		dec, alerts = d, nil
		if !d.Allowed {
			st.Refused++
			return true, nil
		}
		next, al, err := b.budget.Spend(snap, usd(estimateMicros), now)
		if err != nil {
			return false, err
		}
		alerts = al
		st.SpentMicros, st.AlertsFired = next.SpentMicros, next.AlertsFired
		st.ReservedOpen += estimateMicros
		st.Calls++
		return true, nil
	})
	if err == nil && dec.Allowed && b.durable != nil {
		err = b.durable(ctx)
	}
	if err != nil {
		return Reservation{}, resilience.BudgetDecision{}, fmt.Errorf("extractor: reserve %d µ$: %w", estimateMicros, err)
	}
	b.fire(alerts)
	if !dec.Allowed {
		return Reservation{}, dec, nil
	}
	if dec.Warning != "" {
		b.logger.Info("budget reservation exhausts the day's budget exactly", "reserved_micros", estimateMicros, "limit_micros", b.budget.LimitMicros())
	}
	return Reservation{Day: day, Micros: estimateMicros}, dec, nil
}

// Settle replaces r by the actual cost, on r's own day. The day's spend
// never goes below zero. An actual cost above the reservation is charged
// in full, even past the limit, and logged: the estimate was not an upper
// bound. Settling a zero Reservation (a refused or disabled call) with a
// zero cost does nothing.
func (b *SharedBudget) Settle(ctx context.Context, r Reservation, actualMicros int64) error {
	actualMicros = max(actualMicros, 0)
	if r.Micros == 0 && actualMicros == 0 && r.Day.IsZero() {
		return nil
	}
	if r.Day.IsZero() {
		r.Day = resilience.WindowStart(b.clk.Now())
	}
	if actualMicros > r.Micros {
		b.logger.Warn("LLM call cost more than its estimate; charging the actual cost", "reserved_micros", r.Micros, "actual_micros", actualMicros)
	}
	var alerts []resilience.BudgetAlert
	_, err := updateJSON(ctx, b.kv, events.BudgetKey(r.Day), func(st *events.BudgetState) (bool, error) {
		alerts = nil
		if st.WindowStart.IsZero() {
			st.WindowStart = r.Day
		}
		st.ReservedOpen = max(st.ReservedOpen-r.Micros, 0)
		delta := actualMicros - r.Micros
		if delta <= 0 {
			st.SpentMicros = max(st.SpentMicros+delta, 0)
			return true, nil
		}
		snap := resilience.BudgetSnapshot{WindowStart: st.WindowStart, SpentMicros: st.SpentMicros, AlertsFired: st.AlertsFired}
		// Spend at the reservation's own day, whatever the clock says now.
		next, al, err := b.budget.Spend(snap, usd(delta), st.WindowStart)
		if err != nil {
			return false, err
		}
		alerts = al
		st.SpentMicros, st.AlertsFired = next.SpentMicros, next.AlertsFired
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("extractor: settle %d µ$ (reserved %d): %w", actualMicros, r.Micros, err)
	}
	b.fire(alerts)
	return nil
}

func (b *SharedBudget) fire(alerts []resilience.BudgetAlert) {
	for _, a := range alerts {
		switch a.Threshold {
		case 70:
			b.alerts[0].Add(1)
		case 90:
			b.alerts[1].Add(1)
		case 100:
			b.alerts[2].Add(1)
		}
		b.logger.Warn(fmt.Sprintf("LLM budget utilization reached %d%%", a.Threshold),
			"threshold", a.Threshold, "spent_micros", a.SpentMicros, "budget_micros", a.BudgetMicros,
			"window", a.WindowStart.Format(time.DateOnly))
	}
}

func usd(micros int64) float64 { return float64(micros) / 1e6 }
