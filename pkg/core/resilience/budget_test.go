package resilience

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

type alertLog struct {
	mu     sync.Mutex
	alerts []BudgetAlert
}

func (l *alertLog) add(a BudgetAlert) {
	l.mu.Lock()
	l.alerts = append(l.alerts, a)
	l.mu.Unlock()
}

func (l *alertLog) thresholds() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []int{}
	for _, a := range l.alerts {
		out = append(out, a.Threshold)
	}
	return out
}

func newTestTracker(t *testing.T, daily float64, start time.Time) (*BudgetTracker, *clock.Deterministic, *alertLog) {
	t.Helper()
	clk := clock.NewDeterministic(start)
	log := &alertLog{}
	tr, err := NewBudgetTracker(BudgetConfig{DailyUSD: daily, OnAlert: log.add}, clk)
	if err != nil {
		t.Fatal(err)
	}
	return tr, clk, log
}

func mustCanSpend(t *testing.T, tr *BudgetTracker, usd float64) bool {
	t.Helper()
	ok, err := tr.CanSpend(usd)
	if err != nil {
		t.Fatalf("CanSpend(%v): %v", usd, err)
	}
	return ok
}

func mustSpend(t *testing.T, tr *BudgetTracker, usd float64) {
	t.Helper()
	if err := tr.RecordSpend(usd); err != nil {
		t.Fatalf("RecordSpend(%v): %v", usd, err)
	}
}

func TestBudgetRejectsOnlyAboveTheBudget(t *testing.T) {
	tr, _, _ := newTestTracker(t, 10, epoch)
	mustSpend(t, tr, 7)
	if !mustCanSpend(t, tr, 3) {
		t.Fatal("spent + estimate = budget must be allowed")
	}
	if mustCanSpend(t, tr, 3.000001) {
		t.Fatal("one micro-dollar over must be refused")
	}
	if !mustCanSpend(t, tr, 2.999999) {
		t.Fatal("under must be allowed")
	}
}

func TestBudgetNoFloatDrift(t *testing.T) {
	a, b := 0.1, 0.2
	if !(a+b > 0.3) {
		t.Fatal("float64 no longer drifts; this test's premise is gone")
	}
	tr, _, log := newTestTracker(t, 0.3, epoch)
	mustSpend(t, tr, 0.1)
	if got := log.thresholds(); len(got) != 0 {
		t.Fatalf("alerts at 33%%: %v", got)
	}
	mustSpend(t, tr, 0.2)
	if s := tr.Snapshot(); s.SpentMicros != 300000 {
		t.Fatalf("spent %d µ$, want 300000", s.SpentMicros)
	}
	if !mustCanSpend(t, tr, 0) {
		t.Fatal("a further 0 must be allowed when exactly exhausted")
	}
	if mustCanSpend(t, tr, 0.000001) {
		t.Fatal("0.000001 must be refused when exactly exhausted")
	}
	if got := log.thresholds(); !reflect.DeepEqual(got, []int{70, 90, 100}) {
		t.Fatalf("alerts %v, want 70 90 100 at exactly 100%%", got)
	}
	if u := tr.Utilization(); u != 100 {
		t.Fatalf("utilization %v", u)
	}
}

func TestBudgetDecideExactRequest(t *testing.T) {
	tr, _, _ := newTestTracker(t, 10, epoch)
	mustSpend(t, tr, 7)

	d, _ := tr.Decide(3)
	if want := (BudgetDecision{Allowed: true, Warning: BudgetExhaustWarning, RemainingMicros: 3_000_000}); d != want {
		t.Fatalf("equal: %+v", d)
	}
	d, _ = tr.Decide(2)
	if want := (BudgetDecision{Allowed: true, RemainingMicros: 3_000_000}); d != want {
		t.Fatalf("under: %+v", d)
	}
	d, _ = tr.Decide(4.5)
	if want := (BudgetDecision{Reason: BudgetExceeded, ShortfallMicros: 1_500_000, RemainingMicros: 3_000_000}); d != want || d.ShortfallUSD() != 1.5 {
		t.Fatalf("over: %+v", d)
	}

	// Recorded spend may overrun the budget; then even 0 is refused.
	mustSpend(t, tr, 4)
	d, _ = tr.Decide(0)
	if d.Allowed || d.ShortfallMicros != 1_000_000 || d.RemainingMicros != -1_000_000 {
		t.Fatalf("overrun: %+v", d)
	}
}

func TestBudgetDisabled(t *testing.T) {
	for _, daily := range []float64{0, -5, -math.SmallestNonzeroFloat64} {
		tr, _, log := newTestTracker(t, daily, epoch)
		mustSpend(t, tr, 1e9)
		if !mustCanSpend(t, tr, 1e12) {
			t.Fatalf("budget %v must allow everything", daily)
		}
		if d, _ := tr.Decide(1e12); !d.Allowed || d.Warning != "" {
			t.Fatalf("budget %v: %+v", daily, d)
		}
		if got := log.thresholds(); len(got) != 0 || tr.Utilization() != 0 {
			t.Fatalf("budget %v alerted %v", daily, got)
		}
	}
}

func TestBudgetInvalidAmounts(t *testing.T) {
	tr, _, _ := newTestTracker(t, 10, epoch)
	mustSpend(t, tr, 1)
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.000001, -1, MaxSafeAmountUSD, 1 << 53, MaxAmountUSD + 1, math.MaxFloat64}
	for _, v := range bad {
		if _, err := tr.CanSpend(v); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("CanSpend(%v): %v", v, err)
		}
		if err := tr.RecordSpend(v); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("RecordSpend(%v): %v", v, err)
		}
	}
	if s := tr.Snapshot(); s.SpentMicros != 1_000_000 {
		t.Fatalf("invalid amounts changed the spend: %d", s.SpentMicros)
	}
	// The largest accepted amount is refused by the budget, not as invalid.
	if ok, err := tr.CanSpend(MaxAmountUSD); ok || err != nil {
		t.Fatalf("CanSpend(MaxAmountUSD) = %v, %v", ok, err)
	}
	for _, daily := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e15} {
		if _, err := NewBudgetTracker(BudgetConfig{DailyUSD: daily}, clock.NewDeterministic(epoch)); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("budget %v: %v", daily, err)
		}
	}
}

func TestBudgetAlertsOncePerThreshold(t *testing.T) {
	tr, _, log := newTestTracker(t, 10, epoch)
	mustSpend(t, tr, 6.99)
	if got := log.thresholds(); len(got) != 0 {
		t.Fatalf("69.9%%: %v", got)
	}
	mustSpend(t, tr, 0.01) // exactly 70 %
	mustSpend(t, tr, 1.99)
	mustSpend(t, tr, 0.01) // exactly 90 %
	mustSpend(t, tr, 0.5)
	mustSpend(t, tr, 0.5) // exactly 100 %
	mustSpend(t, tr, 5)   // 150 %: nothing new
	if got := log.thresholds(); !reflect.DeepEqual(got, []int{70, 90, 100}) {
		t.Fatalf("alerts %v", got)
	}
	log.mu.Lock()
	first := log.alerts[0]
	log.mu.Unlock()
	if first.UtilizationPercent != 70 || first.SpentMicros != 7_000_000 || first.BudgetMicros != 10_000_000 || !first.WindowStart.Equal(WindowStart(epoch)) {
		t.Fatalf("70%% alert: %+v", first)
	}
	if s := tr.Snapshot(); !reflect.DeepEqual(s.AlertsFired, []int{70, 90, 100}) {
		t.Fatalf("snapshot alerts %v", s.AlertsFired)
	}
}

func TestBudgetResetsAtUTCMidnight(t *testing.T) {
	// Seed 003 §10: 23:59:59, advance 1 s, the window is 2025-01-02.
	start := time.Date(2025, 1, 1, 23, 59, 59, 0, time.UTC)
	tr, clk, log := newTestTracker(t, 10, start)
	mustSpend(t, tr, 9.5)
	if mustCanSpend(t, tr, 1) {
		t.Fatal("before midnight the spend counts")
	}
	clk.Advance(time.Second)
	if !mustCanSpend(t, tr, 10) {
		t.Fatal("after midnight the budget is whole again")
	}
	s := tr.Snapshot()
	if !s.WindowStart.Equal(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) || s.SpentMicros != 0 || len(s.AlertsFired) != 0 {
		t.Fatalf("new window: %+v", s)
	}
	mustSpend(t, tr, 7) // 70 % alerts again in the new day
	if got := log.thresholds(); !reflect.DeepEqual(got, []int{70, 90, 70}) {
		t.Fatalf("alerts %v", got)
	}

	// A clock moved back does not reopen the earlier day.
	clk.Advance(-2 * time.Second)
	if s := tr.Snapshot(); s.SpentMicros != 7_000_000 {
		t.Fatalf("clock moved back: %+v", s)
	}
}

func TestWindowStartIsUTCWhateverTheZone(t *testing.T) {
	// 2025-01-02 05:00 in UTC+14 is 2025-01-01 15:00 UTC.
	kiribati := time.FixedZone("UTC+14", 14*3600)
	now := time.Date(2025, 1, 2, 5, 0, 0, 0, kiribati)
	if got := WindowStart(now); !got.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) || got.Location() != time.UTC {
		t.Fatalf("WindowStart = %v", got)
	}
}

func TestBudgetSnapshotRoundTrip(t *testing.T) {
	tr, clk, _ := newTestTracker(t, 1, epoch)
	mustSpend(t, tr, 0.75)
	data, err := json.Marshal(tr.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"window_start":"2025-01-01T00:00:00Z","spent_micros":750000,"alerts_fired":[70]}`
	if string(data) != want {
		t.Fatalf("JSON %s\nwant %s", data, want)
	}

	var s BudgetSnapshot
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	other, _ := NewBudgetTracker(BudgetConfig{DailyUSD: 1}, clk)
	if err := other.Restore(s); err != nil {
		t.Fatal(err)
	}
	if mustCanSpend(t, other, 0.250001) || !mustCanSpend(t, other, 0.25) {
		t.Fatal("restored tracker must continue from 0.75 spent")
	}
	if err := other.Restore(BudgetSnapshot{SpentMicros: -1}); !errors.Is(err, ErrInvalidAmount) {
		t.Fatalf("negative spend restored: %v", err)
	}
	// The zero snapshot is a window not yet begun.
	if err := other.Restore(BudgetSnapshot{}); err != nil {
		t.Fatal(err)
	}
	if s := other.Snapshot(); !s.WindowStart.Equal(WindowStart(epoch)) || s.SpentMicros != 0 {
		t.Fatalf("zero snapshot: %+v", s)
	}
}

// The pure form, as workers sharing a KV bucket would use it: the input
// snapshot is never modified.
func TestBudgetPureFunctions(t *testing.T) {
	b, err := NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	s0 := BudgetSnapshot{WindowStart: WindowStart(epoch), SpentMicros: 650_000, AlertsFired: make([]int, 0, 4)}
	s1, alerts, err := b.Spend(s0, 0.3, epoch)
	if err != nil || len(alerts) != 2 || alerts[0].Threshold != 70 || alerts[1].Threshold != 90 {
		t.Fatalf("Spend: %v %+v", err, alerts)
	}
	// s0's alerts have spare capacity: an append into it would show there.
	if s0.SpentMicros != 650_000 || len(s0.AlertsFired) != 0 || s0.AlertsFired[:1][0] != 0 {
		t.Fatalf("input snapshot modified: %+v", s0)
	}
	s2, d, err := b.Decide(s1, 0.05, epoch)
	if err != nil || !d.Allowed || d.Warning != BudgetExhaustWarning || !reflect.DeepEqual(s2, s1) {
		t.Fatalf("Decide: %v %+v %+v", err, d, s2)
	}
	// Decide rolls the window: the next day starts empty.
	s3, d, _ := b.Decide(s1, 1, epoch.Add(24*time.Hour))
	if !d.Allowed || s3.SpentMicros != 0 || !s3.WindowStart.Equal(WindowStart(epoch).Add(24*time.Hour)) {
		t.Fatalf("next day: %+v %+v", d, s3)
	}
}

func TestBudgetConcurrent(t *testing.T) {
	tr, _, log := newTestTracker(t, 10, epoch)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			for range 10 {
				_, _ = tr.CanSpend(0.01)
				if err := tr.RecordSpend(0.01); err != nil {
					t.Error(err)
				}
				_ = tr.Snapshot()
			}
		})
	}
	wg.Wait()
	if s := tr.Snapshot(); s.SpentMicros != 10_000_000 {
		t.Fatalf("spent %d µ$, want exactly 10 USD", s.SpentMicros)
	}
	got := log.thresholds()
	if len(got) != 3 {
		t.Fatalf("alerts %v, want each threshold once", got)
	}
}
