package resilience

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

func newTestLimiter(t testing.TB, rules map[string]RateRule) (*RateLimiter, *clock.Deterministic) {
	t.Helper()
	clk := clock.NewDeterministic(epoch)
	l, err := NewRateLimiter(rules, clk)
	if err != nil {
		t.Fatal(err)
	}
	return l, clk
}

func refusal(t *testing.T, err error) *RateLimitError {
	t.Helper()
	var rl *RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("want a *RateLimitError, got %v", err)
	}
	return rl
}

func TestRateLimitSeedTable(t *testing.T) {
	table := []struct {
		tool         string
		limit, burst int
		interval     time.Duration
	}{
		{"read_context", 10, 15, 6 * time.Second},
		{"read_doc", 30, 50, 2 * time.Second},
		{"list_tasks", 20, 30, 3 * time.Second},
		{"update_task", 10, 15, 6 * time.Second},
	}
	for _, tt := range table {
		t.Run(tt.tool, func(t *testing.T) {
			l, clk := newTestLimiter(t, nil)
			for i := range tt.burst {
				if err := l.Allow(tt.tool, "agent-1"); err != nil {
					t.Fatalf("call %d of the burst: %v", i+1, err)
				}
			}
			rl := refusal(t, l.Allow(tt.tool, "agent-1"))
			want := RateLimitError{Tool: tt.tool, RetryAfter: tt.interval, RetryAfterSeconds: int(tt.interval / time.Second),
				Limit: tt.limit, WindowSeconds: 60, CurrentCount: tt.burst + 1}
			if *rl != want {
				t.Fatalf("refusal %+v\nwant    %+v", *rl, want)
			}
			// One token comes back per interval, and only one.
			clk.Advance(tt.interval)
			if err := l.Allow(tt.tool, "agent-1"); err != nil {
				t.Fatalf("after one interval: %v", err)
			}
			refusal(t, l.Allow(tt.tool, "agent-1"))
		})
	}
}

func TestRateLimitSustainedRate(t *testing.T) {
	l, clk := newTestLimiter(t, nil)
	for range 15 {
		l.Allow("read_context", "c")
	}
	// Drained: over the next minute, in 1 s steps, exactly 10 more pass.
	allowed := 0
	for range 60 {
		clk.Advance(time.Second)
		if l.Allow("read_context", "c") == nil {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("%d calls passed in a minute, want 10", allowed)
	}
}

func TestRateLimitRetryAfterRoundsUpToAtLeastOne(t *testing.T) {
	l, clk := newTestLimiter(t, nil)
	for range 15 {
		l.Allow("read_context", "c")
	}
	clk.Advance(5500 * ms)
	rl := refusal(t, l.Allow("read_context", "c"))
	if rl.RetryAfter != 500*ms || rl.RetryAfterSeconds != 1 {
		t.Fatalf("0.5 s left: %+v", rl)
	}
	clk.Advance(499 * ms)
	if rl := refusal(t, l.Allow("read_context", "c")); rl.RetryAfterSeconds != 1 || rl.RetryAfter != ms {
		t.Fatalf("1 ms left: %+v", rl)
	}
	clk.Advance(ms)
	if err := l.Allow("read_context", "c"); err != nil {
		t.Fatalf("on time: %v", err)
	}
	if rl := refusal(t, l.Allow("read_context", "c")); rl.RetryAfterSeconds != 6 {
		t.Fatalf("a whole interval: %+v", rl)
	}
}

func TestRateLimitCurrentCountPerWindow(t *testing.T) {
	l, clk := newTestLimiter(t, nil)
	for range 20 {
		l.Allow("read_context", "c")
	}
	if rl := refusal(t, l.Allow("read_context", "c")); rl.CurrentCount != 21 {
		t.Fatalf("count %d, want 21 (15 allowed, 6 refused)", rl.CurrentCount)
	}
	clk.Advance(59 * time.Second) // 9 tokens back; the window still runs
	for range 9 {
		if err := l.Allow("read_context", "c"); err != nil {
			t.Fatal(err)
		}
	}
	if rl := refusal(t, l.Allow("read_context", "c")); rl.CurrentCount != 31 {
		t.Fatalf("count %d, want 31", rl.CurrentCount)
	}
	clk.Advance(time.Second) // a new window begins with the next call
	l.Allow("read_context", "c")
	if rl := refusal(t, l.Allow("read_context", "c")); rl.CurrentCount != 2 {
		t.Fatalf("count %d in the new window, want 2", rl.CurrentCount)
	}
}

func TestRateLimitKeysAreToolAndClient(t *testing.T) {
	l, _ := newTestLimiter(t, nil)
	for range 15 {
		l.Allow("read_context", "a")
	}
	refusal(t, l.Allow("read_context", "a"))
	if err := l.Allow("read_context", "b"); err != nil {
		t.Fatalf("another client: %v", err)
	}
	if err := l.Allow("read_doc", "a"); err != nil {
		t.Fatalf("another tool: %v", err)
	}
	if err := l.Allow("update_task", "a"); err != nil {
		t.Fatalf("a tool with the same numbers keeps its own bucket: %v", err)
	}
}

func TestRateLimitUnlistedToolsAreUnlimited(t *testing.T) {
	l, _ := newTestLimiter(t, nil)
	for range 10000 {
		if err := l.Allow("get_scene", "c"); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.Tracked(); n != 0 {
		t.Fatalf("unlimited tool left %d entries", n)
	}
	empty, _ := newTestLimiter(t, map[string]RateRule{})
	if err := empty.Allow("read_context", "c"); err != nil {
		t.Fatal("an empty table limits nothing")
	}
}

func TestRateLimitErrorData(t *testing.T) {
	l, _ := newTestLimiter(t, nil)
	for range 15 {
		l.Allow("read_context", "c")
	}
	err := l.Allow("read_context", "c")
	data, _ := json.Marshal(refusal(t, err))
	want := `{"retry_after_seconds":6,"limit":10,"window_seconds":60,"current_count":16}`
	if string(data) != want {
		t.Fatalf("data %s\nwant %s", data, want)
	}
	if err.Error() == "" {
		t.Fatal("empty message")
	}
}

func TestRateLimitConfig(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	for _, r := range []RateRule{{Limit: 0, Window: time.Minute}, {Limit: 1}, {Limit: 1, Window: time.Second, Burst: -1}} {
		if _, err := NewRateLimiter(map[string]RateRule{"x": r}, clk); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("%+v: %v", r, err)
		}
	}
	// Burst 0 is Limit; a window of 90 s reports 90.
	l, err := NewRateLimiter(map[string]RateRule{"x": {Limit: 3, Window: 90 * time.Second}}, clk)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.Allow("x", ""); err != nil {
			t.Fatal(err)
		}
	}
	if rl := refusal(t, l.Allow("x", "")); rl.Limit != 3 || rl.WindowSeconds != 90 || rl.RetryAfterSeconds != 30 {
		t.Fatalf("%+v", rl)
	}
}

func TestRateLimitEvictsIdleClients(t *testing.T) {
	l, clk := newTestLimiter(t, nil)
	for i := range 1000 {
		l.Allow("read_doc", fmt.Sprint("old-", i))
	}
	for range 50 {
		l.Allow("read_doc", "busy") // drained: tat 100 s ahead
	}
	if n := l.Tracked(); n != 1001 {
		t.Fatalf("tracked %d", n)
	}
	clk.Advance(time.Minute)
	for i := range 1000 {
		l.Allow("read_doc", fmt.Sprint("new-", i))
	}
	// Every shard a new client landed in was swept; with 1000 clients over
	// 64 shards that is all of them but for a vanishing chance.
	if n := l.Tracked(); n > 1100 {
		t.Fatalf("tracked %d after the old clients went idle", n)
	}
	l.sweepAll()
	if n := l.Tracked(); n != 1001 {
		t.Fatalf("tracked %d, want the 1000 new and the drained one", n)
	}
	// The drained client is kept until its bucket is full again (100 s after
	// its burst), the new ones until their window is over (at 120 s).
	clk.Advance(40 * time.Second)
	l.sweepAll()
	if n := l.Tracked(); n != 1000 {
		t.Fatalf("tracked %d at 100 s, want the 1000 new", n)
	}
	clk.Advance(20 * time.Second)
	l.sweepAll()
	if n := l.Tracked(); n != 0 {
		t.Fatalf("tracked %d once every bucket is full and window over", n)
	}
}

// sweepAll sweeps every shard, as calls in each would.
func (l *RateLimiter) sweepAll() {
	now := l.clk.Now().Sub(l.epoch)
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		sh.sweepLocked(l.rules, now)
		sh.mu.Unlock()
	}
}

func TestRateLimitConcurrent(t *testing.T) {
	l, clk := newTestLimiter(t, nil)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if l.Allow("read_context", "shared") == nil {
					allowed.Add(1)
				}
				l.Allow("read_doc", fmt.Sprint(g, "-", i%17))
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 15 {
		t.Fatalf("%d calls of one client passed at one instant, want the burst of 15", got)
	}
	clk.Advance(time.Hour)
	wg.Go(func() { l.Allow("read_doc", "late") })
	wg.Wait()
}

func BenchmarkRateLimiterAllow(b *testing.B) {
	rules := map[string]RateRule{"read_doc": {Limit: 1 << 30, Burst: 1 << 30, Window: time.Minute}}
	b.Run("allowed", func(b *testing.B) {
		l, err := NewRateLimiter(rules, clock.System{})
		if err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			client := fmt.Sprint("client-", next.Add(1))
			for pb.Next() {
				if err := l.Allow("read_doc", client); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("refused", func(b *testing.B) {
		l, _ := NewRateLimiter(nil, clock.System{})
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			client := fmt.Sprint("client-", next.Add(1))
			for pb.Next() {
				_ = l.Allow("read_context", client)
			}
		})
	})
	b.Run("unlimited", func(b *testing.B) {
		l, _ := NewRateLimiter(nil, clock.System{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = l.Allow("get_scene", "c")
			}
		})
	})
}
