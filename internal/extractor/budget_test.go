package extractor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

var day1 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func budgetKV(t testing.TB) jetstream.KeyValue {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	kv, err := conn.JS.KeyValue(context.Background(), events.BudgetBucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func newBudget(t testing.TB, kv jetstream.KeyValue, dailyUSD float64, clk clock.Clock) *SharedBudget {
	t.Helper()
	b, err := NewSharedBudget(kv, dailyUSD, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reserve(t testing.TB, b *SharedBudget, micros int64) (Reservation, resilience.BudgetDecision) {
	t.Helper()
	r, d, err := b.Reserve(context.Background(), micros)
	if err != nil {
		t.Fatal(err)
	}
	return r, d
}

func state(t testing.TB, b *SharedBudget, at time.Time) events.BudgetState {
	t.Helper()
	st, err := b.State(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestReserveExactRemainderIsAllowedWithWarning(t *testing.T) {
	kv := budgetKV(t)
	b := newBudget(t, kv, 1, clock.NewDeterministic(day1))
	if _, d := reserve(t, b, 600_000); !d.Allowed || d.Warning != "" {
		t.Fatalf("first reservation: %+v", d)
	}
	r, d := reserve(t, b, 400_000)
	if !d.Allowed || d.Warning != resilience.BudgetExhaustWarning || d.RemainingMicros != 400_000 {
		t.Fatalf("exact remainder: %+v, want allowed with %q", d, resilience.BudgetExhaustWarning)
	}
	if r.Micros != 400_000 || !r.Day.Equal(resilience.WindowStart(day1)) {
		t.Fatalf("reservation %+v", r)
	}
	if _, d := reserve(t, b, 1); d.Allowed || d.Reason != resilience.BudgetExceeded || d.ShortfallMicros != 1 {
		t.Fatalf("one micro-dollar past the limit: %+v, want refused with shortfall 1", d)
	}
	st := state(t, b, day1)
	want := events.BudgetState{WindowStart: resilience.WindowStart(day1), SpentMicros: 1_000_000, ReservedOpen: 1_000_000, LimitMicros: 1_000_000, Calls: 2, Refused: 1, AlertsFired: []int{70, 90, 100}}
	if !st.WindowStart.Equal(want.WindowStart) || st.SpentMicros != want.SpentMicros || st.ReservedOpen != want.ReservedOpen || st.LimitMicros != want.LimitMicros ||
		st.Calls != want.Calls || st.Refused != want.Refused || !slices.Equal(st.AlertsFired, want.AlertsFired) {
		t.Fatalf("state %+v, want %+v", st, want)
	}
	if got := b.Alerts(); got != [3]uint64{1, 1, 1} {
		t.Fatalf("alerts %v, want one of each", got)
	}
}

func TestReserveOneMicroDollarMoreThanRemainsIsRefused(t *testing.T) {
	b := newBudget(t, budgetKV(t), 0.25, clock.NewDeterministic(day1))
	if _, d := reserve(t, b, 250_001); d.Allowed || d.ShortfallMicros != 1 {
		t.Fatalf("limit+1: %+v", d)
	}
	if _, d := reserve(t, b, 250_000); !d.Allowed || d.Warning != resilience.BudgetExhaustWarning {
		t.Fatalf("limit: %+v", d)
	}
	if st := state(t, b, day1); st.SpentMicros != 250_000 || st.Refused != 1 || st.Calls != 1 {
		t.Fatalf("state %+v", st)
	}
}

func TestDisabledBudgetAllowsAndCounts(t *testing.T) {
	for _, daily := range []float64{0, -5} {
		b := newBudget(t, budgetKV(t), daily, clock.NewDeterministic(day1))
		for range 3 {
			if _, d := reserve(t, b, 1<<40); !d.Allowed || d.Warning != "" {
				t.Fatalf("daily %v: %+v", daily, d)
			}
		}
		st := state(t, b, day1)
		if st.Calls != 3 || st.SpentMicros != 3<<40 || len(st.AlertsFired) != 0 {
			t.Fatalf("daily %v: state %+v: calls and spend are counted, no alerts", daily, st)
		}
	}
}

func TestBudgetRollsOverAtUTCMidnight(t *testing.T) {
	clk := clock.NewDeterministic(time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC))
	kv := budgetKV(t)
	b := newBudget(t, kv, 0.001, clk) // 1000 µ$
	late, d := reserve(t, b, 1000)
	if !d.Allowed {
		t.Fatalf("%+v", d)
	}
	if _, d := reserve(t, b, 1); d.Allowed {
		t.Fatalf("exhausted day still allows: %+v", d)
	}
	clk.Advance(time.Second) // 00:00:00 the next day
	if _, d := reserve(t, b, 1000); !d.Allowed || d.Warning != resilience.BudgetExhaustWarning {
		t.Fatalf("new day: %+v", d)
	}
	// The call reserved before midnight settles on its own day.
	if err := b.Settle(context.Background(), late, 300); err != nil {
		t.Fatal(err)
	}
	prev := state(t, b, late.Day)
	today := state(t, b, clk.Now())
	if prev.SpentMicros != 300 || prev.ReservedOpen != 0 {
		t.Fatalf("previous day %+v, want 300 spent, nothing open", prev)
	}
	if today.SpentMicros != 1000 || today.ReservedOpen != 1000 || !today.WindowStart.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("today %+v", today)
	}
	if got, err := kv.Keys(context.Background()); err != nil || !slices.Equal(got, []string{"spend.2026-11-21", "spend.2026-11-22"}) {
		t.Fatalf("keys %v %v", got, err)
	}
}

func TestSettleReplacesTheReservation(t *testing.T) {
	b := newBudget(t, budgetKV(t), 0.01, clock.NewDeterministic(day1)) // 10000 µ$
	ctx := context.Background()

	r, _ := reserve(t, b, 4000)
	if err := b.Settle(ctx, r, 1500); err != nil {
		t.Fatal(err)
	}
	if st := state(t, b, day1); st.SpentMicros != 1500 || st.ReservedOpen != 0 {
		t.Fatalf("settled lower: %+v", st)
	}
	// Higher than reserved: the actual cost is charged, past the limit if
	// need be, and the alerts it crosses fire.
	r, _ = reserve(t, b, 8500)
	if err := b.Settle(ctx, r, 9000); err != nil {
		t.Fatal(err)
	}
	st := state(t, b, day1)
	if st.SpentMicros != 10500 || st.ReservedOpen != 0 || !slices.Equal(st.AlertsFired, []int{70, 90, 100}) {
		t.Fatalf("settled higher: %+v", st)
	}
	if _, d := reserve(t, b, 0); d.Allowed {
		t.Fatalf("overrun budget allows a free call? %+v", d)
	}
	// Never below zero, even for a reservation the day no longer holds.
	b2 := newBudget(t, budgetKV(t), 0.01, clock.NewDeterministic(day1))
	if err := b2.Settle(ctx, Reservation{Day: resilience.WindowStart(day1), Micros: 700}, 0); err != nil {
		t.Fatal(err)
	}
	if st := state(t, b2, day1); st.SpentMicros != 0 || st.ReservedOpen != 0 {
		t.Fatalf("below zero: %+v", st)
	}
}

// TestConcurrentReserversNeverExceedTheLimit runs N workers, each with its
// own SharedBudget over the one bucket, making M reservations each.
func TestConcurrentReserversNeverExceedTheLimit(t *testing.T) {
	const n, m = 8, 40
	for _, tc := range []struct {
		name        string
		limitMicros int64
		cost        int64
		wantAllowed int
	}{
		{"divides", 100 * 250, 250, 100},
		{"remainder", 1000, 300, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv := budgetKV(t)
			clk := clock.NewDeterministic(day1)
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				allowed int
				alerts  [3]uint64
			)
			for range n {
				b := newBudget(t, kv, float64(tc.limitMicros)/1e6, clk)
				wg.Go(func() {
					for range m {
						_, d, err := b.Reserve(context.Background(), tc.cost)
						if err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							mu.Lock()
							allowed++
							mu.Unlock()
						}
					}
					mu.Lock()
					for i, a := range b.Alerts() {
						alerts[i] += a
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			st := state(t, newBudget(t, kv, 0, clk), day1)
			if allowed != tc.wantAllowed || st.Calls != tc.wantAllowed || st.SpentMicros != int64(tc.wantAllowed)*tc.cost {
				t.Fatalf("allowed %d, state %+v; want %d calls spending %d", allowed, st, tc.wantAllowed, int64(tc.wantAllowed)*tc.cost)
			}
			if st.SpentMicros > tc.limitMicros || st.Refused != n*m-tc.wantAllowed {
				t.Fatalf("state %+v past the limit %d or refusals miscounted", st, tc.limitMicros)
			}
			if tc.name == "divides" && alerts != [3]uint64{1, 1, 1} {
				t.Fatalf("alerts across workers %v, want each once", alerts)
			}
		})
	}
}

func TestSharedProjectorThrottlesOnTheWindow(t *testing.T) {
	kv := budgetKV(t)
	clk := clock.NewDeterministic(day1)
	ctx := context.Background()
	p := NewSharedProjector(kv, "claude", 1000, time.Minute, clk)
	q := NewSharedProjector(kv, "claude", 1000, time.Minute, clk) // another worker
	if err := p.Record(ctx, 300); err != nil {
		t.Fatal(err)
	}
	if err := q.Record(ctx, 300); err != nil {
		t.Fatal(err)
	}
	// 600 used, 300 per call: one queued call projects 900 of 1000.
	if pr, err := q.Project(ctx, 1); err != nil || !pr.ShouldThrottle || pr.WindowTokensUsed != 600 {
		t.Fatalf("%+v %v", pr, err)
	}
	if pr, _ := p.Project(ctx, 0); pr.ShouldThrottle {
		t.Fatalf("60%% throttles: %+v", pr)
	}
	clk.Advance(61 * time.Second)
	if err := p.Record(ctx, 100); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, events.TokensKey("claude"))
	if err != nil {
		t.Fatal(err)
	}
	var w events.TokenWindow
	if err := jsonUnmarshal(e.Value(), &w); err != nil || len(w.Usage) != 1 || w.Usage[0].Tokens != 100 {
		t.Fatalf("window not trimmed: %+v %v", w, err)
	}
	// An unlimited provider never throttles and writes nothing.
	u := NewSharedProjector(kv, "ollama", 0, time.Minute, clk)
	if err := u.Record(ctx, 1<<30); err != nil {
		t.Fatal(err)
	}
	if pr, _ := u.Project(ctx, 1000); pr.ShouldThrottle {
		t.Fatalf("unlimited throttles: %+v", pr)
	}
	if _, err := kv.Get(ctx, events.TokensKey("ollama")); !isNotFound(err) {
		t.Fatalf("unlimited provider wrote its usage: %v", err)
	}
}

// A reservation allows its call only once it would survive a power cut;
// one that cannot be made durable refuses the call and stays charged.
func TestReservationAllowsItsCallOnlyOnceDurable(t *testing.T) {
	kv := budgetKV(t)
	b := newBudget(t, kv, 1, clock.NewDeterministic(day1))
	syncs := 0
	b.durable = func(context.Context) error {
		if syncs++; syncs == 1 {
			return errors.New("no space left on device")
		}
		return nil
	}
	if _, _, err := b.Reserve(context.Background(), 100_000); err == nil {
		t.Fatal("a reservation that could not be made durable allowed its call")
	}
	if st := state(t, b, day1); st.SpentMicros != 100_000 {
		t.Fatalf("spent %d µ$ after the failed reservation; it stays charged (100000)", st.SpentMicros)
	}
	if _, d := reserve(t, b, 100_000); !d.Allowed || syncs != 2 {
		t.Fatalf("the next reservation: allowed %v after %d syncs", d.Allowed, syncs)
	}
}
