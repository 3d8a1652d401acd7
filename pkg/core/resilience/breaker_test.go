package resilience

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

type transitions struct {
	mu  sync.Mutex
	got []string
}

func (tr *transitions) record(from, to BreakerState) {
	tr.mu.Lock()
	tr.got = append(tr.got, fmt.Sprintf("%s>%s", from, to))
	tr.mu.Unlock()
}

func (tr *transitions) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return fmt.Sprint(tr.got)
}

func newTestBreaker(cfg BreakerConfig) (*CircuitBreaker, *clock.Deterministic, *transitions) {
	clk := clock.NewDeterministic(epoch)
	tr := &transitions{}
	cfg.OnStateChange = tr.record
	return NewCircuitBreaker(cfg, clk), clk, tr
}

func wantState(t *testing.T, b *CircuitBreaker, want BreakerState) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
}

func TestBreakerStateValues(t *testing.T) {
	for s, v := range map[BreakerState]int{Closed: 0, Open: 1, HalfOpen: 2} {
		if int(s) != v {
			t.Errorf("%s = %d, want %d", s, s, v)
		}
	}
	if HalfOpen.String() != "half_open" {
		t.Error(HalfOpen.String())
	}
}

func TestBreakerWalksEveryTransition(t *testing.T) {
	b, clk, tr := newTestBreaker(BreakerConfig{})
	wantState(t, b, Closed)

	// Successes do not dilute the rate: it is failures over a fixed 20.
	for range 100 {
		b.RecordSuccess()
	}
	for range 9 {
		b.RecordFailure()
	}
	wantState(t, b, Closed) // 9/20 = 0.45
	if !b.CanExecute() {
		t.Fatal("closed must execute")
	}
	b.RecordFailure() // 10/20 = 0.5 ≥ 0.5
	wantState(t, b, Open)
	if b.CanExecute() {
		t.Fatal("open must refuse")
	}

	// Failures while open change nothing.
	b.RecordFailure()
	wantState(t, b, Open)

	// Cooldown, measured from the transition.
	clk.Advance(30*time.Second - 1)
	if b.CanExecute() {
		t.Fatal("open 1 ns before the cooldown ends")
	}
	clk.Advance(1)
	wantState(t, b, Open) // only CanExecute moves it on
	if !b.CanExecute() {
		t.Fatal("half_open must let probes through")
	}
	wantState(t, b, HalfOpen)

	// Any failure in half_open reopens, and the cooldown starts again.
	b.RecordFailure()
	wantState(t, b, Open)
	clk.Advance(29 * time.Second)
	if b.CanExecute() {
		t.Fatal("the cooldown restarts on reopening")
	}
	clk.Advance(time.Second)
	if !b.CanExecute() {
		t.Fatal("half_open again")
	}

	// Three successful probes close it.
	b.RecordSuccess()
	b.RecordSuccess()
	wantState(t, b, HalfOpen)
	b.RecordSuccess()
	wantState(t, b, Closed)

	want := "[closed>open open>half_open half_open>open open>half_open half_open>closed]"
	if got := tr.String(); got != want {
		t.Fatalf("transitions %s\nwant        %s", got, want)
	}
}

func TestBreakerProbesCountAfterEachReopen(t *testing.T) {
	b, clk, _ := newTestBreaker(BreakerConfig{})
	for range 10 {
		b.RecordFailure()
	}
	clk.Advance(30 * time.Second)
	b.CanExecute()
	b.RecordSuccess()
	b.RecordSuccess()
	b.RecordFailure() // reopen: the two probes are forgotten
	clk.Advance(30 * time.Second)
	b.CanExecute()
	b.RecordSuccess()
	b.RecordSuccess()
	wantState(t, b, HalfOpen)
	b.RecordSuccess()
	wantState(t, b, Closed)
}

func TestBreakerFailuresExpireAfterTheWindow(t *testing.T) {
	b, clk, _ := newTestBreaker(BreakerConfig{})
	for range 9 {
		b.RecordFailure()
	}
	clk.Advance(time.Minute - 1) // still within the window: 10/20 opens
	b2, clk2, _ := newTestBreaker(BreakerConfig{})
	for range 9 {
		b2.RecordFailure()
	}
	clk2.Advance(time.Minute) // t > now−60 s fails exactly at 60 s: gone
	b.RecordFailure()
	b2.RecordFailure()
	wantState(t, b, Open)
	wantState(t, b2, Closed)
	if got := b2.FailureRate(); got != 0.05 {
		t.Fatalf("rate %v, want 1/20", got)
	}
}

// The seed never clears the failures on closing, so those that opened the
// circuit still count for the rest of their minute: one more failure right
// after closing reopens it. This follows the seed.
func TestBreakerRemembersFailuresAcrossClosing(t *testing.T) {
	b, clk, _ := newTestBreaker(BreakerConfig{})
	for range 10 {
		b.RecordFailure()
	}
	clk.Advance(30 * time.Second)
	b.CanExecute()
	for range 3 {
		b.RecordSuccess()
	}
	wantState(t, b, Closed)
	clk.Advance(time.Second)
	b.RecordFailure() // 11/20 within the minute
	wantState(t, b, Open)

	// Once they have aged out, a lone failure does not.
	clk.Advance(30 * time.Second)
	b.CanExecute()
	for range 3 {
		b.RecordSuccess()
	}
	clk.Advance(time.Minute)
	b.RecordFailure()
	wantState(t, b, Closed)
}

func TestBreakerCustomConfig(t *testing.T) {
	b, clk, _ := newTestBreaker(BreakerConfig{ErrorThreshold: 1, WindowSize: 4, Window: time.Second, Cooldown: 100 * ms, ProbesRequired: 1})
	for range 3 {
		b.RecordFailure()
	}
	wantState(t, b, Closed)
	b.RecordFailure()
	wantState(t, b, Open)
	clk.Advance(100 * ms)
	b.CanExecute()
	b.RecordSuccess()
	wantState(t, b, Closed)
}

func TestBreakerKeepsAtMostWindowSizeFailures(t *testing.T) {
	b, _, _ := newTestBreaker(BreakerConfig{})
	for range 1000 {
		b.RecordFailure()
	}
	b.mu.Lock()
	n := len(b.failures)
	b.mu.Unlock()
	if n != 20 {
		t.Fatalf("%d failures kept, want 20", n)
	}
}

func TestBreakerConcurrent(t *testing.T) {
	b, clk, tr := newTestBreaker(BreakerConfig{Cooldown: 10 * ms, ProbesRequired: 2})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if b.CanExecute() {
					if (i+g)%3 == 0 {
						b.RecordFailure()
					} else {
						b.RecordSuccess()
					}
				}
				_ = b.State()
				clk.Advance(ms)
			}
		})
	}
	wg.Wait()
	// Transitions are reported in order: each starts where the last ended.
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.got) == 0 {
		t.Fatal("no transitions under a 1/3 failure mix")
	}
	prev := "closed"
	for _, s := range tr.got {
		from, to, _ := strings.Cut(s, ">")
		if from != prev {
			t.Fatalf("transition %s after state %s: %v", s, prev, tr.got)
		}
		prev = to
	}
	if prev != b.State().String() {
		t.Fatalf("last transition to %s, state %s", prev, b.State())
	}
}

func BenchmarkBreakerCanExecute(b *testing.B) {
	clk := clock.NewDeterministic(epoch)
	b.Run("closed", func(b *testing.B) {
		br := NewCircuitBreaker(BreakerConfig{}, clk)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				br.CanExecute()
			}
		})
	})
	b.Run("open", func(b *testing.B) {
		br := NewCircuitBreaker(BreakerConfig{}, clk)
		for range 10 {
			br.RecordFailure()
		}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				br.CanExecute()
			}
		})
	})
}
