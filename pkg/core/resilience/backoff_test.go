package resilience

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

var epoch = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

const ms = time.Millisecond

func TestJitterMillisEnds(t *testing.T) {
	tests := []struct {
		r    float64
		want int64
	}{
		{0.0, -200},
		{0.5, 0}, // floor(0.5·401) = 200
		{0.9999999, 200},
		{0.9999999999999999, 200},
		{1.0 / 401, -199},
	}
	for _, tt := range tests {
		if got := JitterMillis(tt.r, 200); got != tt.want {
			t.Errorf("JitterMillis(%v, 200) = %d, want %d", tt.r, got, tt.want)
		}
	}
	if got := JitterMillis(0.7, 0); got != 0 {
		t.Errorf("range 0: %d", got)
	}
}

func TestDelayExact(t *testing.T) {
	rng := clock.NewDeterministicRNG(1)
	b := NewBackoff(DefaultBackoffConfig(), rng, clock.NewDeterministic(epoch))

	rng.SetSequence([]float64{0.0, 0.5, 0.9999999})
	for _, want := range []time.Duration{300 * ms, 500 * ms, 700 * ms} {
		if got := b.Delay(0); got != want {
			t.Errorf("attempt 0: %v, want %v", got, want)
		}
	}

	rng.SetSequence([]float64{0.5})
	want := []time.Duration{500, 1000, 2000, 4000, 8000, 8000, 8000}
	for attempt, w := range want {
		if got := b.Delay(attempt); got != w*ms {
			t.Errorf("attempt %d: %v, want %v", attempt, got, w*ms)
		}
	}

	// Jitter is added after the cap.
	rng.SetSequence([]float64{0.9999999, 0.0})
	if got := b.Delay(10); got != 8200*ms {
		t.Errorf("capped high: %v", got)
	}
	if got := b.Delay(10); got != 7800*ms {
		t.Errorf("capped low: %v", got)
	}
	// An attempt so large that 2^attempt overflows a float is still capped.
	if got := DefaultBackoffConfig().Delay(5000, 0.5); got != 8*time.Second {
		t.Errorf("attempt 5000: %v", got)
	}
}

func TestDelayNeverNegative(t *testing.T) {
	cfg := BackoffConfig{Base: 100 * ms}
	if got := cfg.Delay(0, 0); got != 0 {
		t.Fatalf("100 ms − 200 ms jitter: %v, want 0", got)
	}
	cfg.JitterRange = -1
	if got := cfg.Delay(0, 0); got != 100*ms {
		t.Fatalf("jitter off: %v", got)
	}
}

// Seed 003 §10 expects getJitter(200) to give 42, −137, 189 from
// DeterministicRNG(12345). The LCG it specifies gives other numbers: the
// states are 1406932606, 654583775, 1449466924, i.e. rng 0.65515…, 0.30481…,
// 0.67496…, hence jitter 62, −78, 70. The LCG is the reference, so this
// test asserts what it yields. (A JavaScript run of the seed's code agrees on
// 62 and −78 and then drifts, to 53, because its product seed·1103515245
// exceeds 2^53 and is rounded; pkg/core/clock computes it exactly in int64.)
func TestJitterFromSeedLCG(t *testing.T) {
	b := NewBackoff(DefaultBackoffConfig(), clock.NewDeterministicRNG(12345), clock.NewDeterministic(epoch))
	for i, want := range []time.Duration{62 * ms, -78 * ms, 70 * ms} {
		if got := b.Jitter(); got != want {
			t.Errorf("jitter %d = %v, want %v (seed text says 42, −137, 189)", i, got, want)
		}
	}
}

func TestNextBackOffWalksAttempts(t *testing.T) {
	rng := clock.NewDeterministicRNG(1)
	rng.SetSequence([]float64{0.5})
	b := NewBackoff(DefaultBackoffConfig(), rng, clock.NewDeterministic(epoch))
	for _, w := range []time.Duration{500, 1000, 2000, 4000, 8000, 8000} {
		if got := b.NextBackOff(); got != w*ms {
			t.Fatalf("NextBackOff = %v, want %v", got, w*ms)
		}
	}
	b.Reset()
	if got := b.NextBackOff(); got != 500*ms {
		t.Fatalf("after Reset: %v", got)
	}
}

// clockTimer is a backoff.Timer that fires at once and moves the
// deterministic clock by the delay, so Retry runs without sleeping.
type clockTimer struct {
	clk    *clock.Deterministic
	c      chan time.Time
	waited []time.Duration
}

func newClockTimer(clk *clock.Deterministic) *clockTimer {
	return &clockTimer{clk: clk, c: make(chan time.Time, 1)}
}

func (t *clockTimer) Start(d time.Duration) {
	t.waited = append(t.waited, d)
	t.clk.Advance(d)
	t.c <- t.clk.Now()
}
func (t *clockTimer) Stop()               {}
func (t *clockTimer) C() <-chan time.Time { return t.c }

func TestRetryStopsAfterMaxAttempts(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	rng := clock.NewDeterministicRNG(1)
	rng.SetSequence([]float64{0.5})
	cfg := DefaultBackoffConfig()
	cfg.MaxAttempts = 4
	b := NewBackoff(cfg, rng, clk)
	b.NextBackOff() // Retry must Reset before its first attempt

	errBusy := errors.New("busy")
	calls := 0
	timer := newClockTimer(clk)
	err := backoff.RetryNotifyWithTimer(func() error { calls++; return errBusy }, b, nil, timer)
	if !errors.Is(err, errBusy) || calls != 4 {
		t.Fatalf("err %v after %d calls, want busy after 4", err, calls)
	}
	want := []time.Duration{500 * ms, 1000 * ms, 2000 * ms}
	if len(timer.waited) != len(want) {
		t.Fatalf("waited %v", timer.waited)
	}
	for i := range want {
		if timer.waited[i] != want[i] {
			t.Fatalf("waited %v, want %v", timer.waited, want)
		}
	}
}

func TestRetryStopsAtMaxElapsedOnInjectedClock(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	rng := clock.NewDeterministicRNG(1)
	rng.SetSequence([]float64{0.5})
	cfg := DefaultBackoffConfig()
	cfg.MaxElapsed = 4 * time.Second // 0.5+1+2 = 3.5 s fit; +4 s would not
	b := NewBackoff(cfg, rng, clk)

	calls := 0
	timer := newClockTimer(clk)
	err := backoff.RetryNotifyWithTimer(func() error { calls++; return errors.New("down") }, b, nil, timer)
	if err == nil || calls != 4 {
		t.Fatalf("err %v after %d calls, want an error after 4", err, calls)
	}
	if got := clk.Now().Sub(epoch); got != 3500*ms {
		t.Fatalf("clock moved %v, want 3.5s", got)
	}

	// A success ends the loop early, a permanent error at once.
	calls = 0
	err = backoff.RetryNotifyWithTimer(func() error {
		calls++
		if calls == 2 {
			return nil
		}
		return errors.New("once")
	}, b, nil, newClockTimer(clk))
	if err != nil || calls != 2 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestBackoffConcurrentUse(t *testing.T) {
	b := NewBackoff(BackoffConfig{MaxAttempts: 50}, clock.NewDeterministicRNG(3), clock.NewDeterministic(epoch))
	var wg sync.WaitGroup
	var mu sync.Mutex
	delays := 0
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if d := b.NextBackOff(); d != backoff.Stop {
					if d < 300*ms || d > 8200*ms {
						t.Errorf("delay %v out of range", d)
					}
					mu.Lock()
					delays++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if delays != 49 {
		t.Fatalf("%d delays handed out, want MaxAttempts−1 = 49", delays)
	}
}
