package resilience

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

func TestTokenLimitForWindow(t *testing.T) {
	tests := []struct {
		tpm    int64
		window time.Duration
		want   int64
	}{
		{40000, time.Minute, 40000},
		{90000, time.Minute, 90000},
		{40000, 30 * time.Second, 20000},
		{40000, time.Second, 666}, // 666.67 floored
		{90000, time.Second, 1500},
		{40000, 12345 * ms, 8230},
		{40000, ms, 0},
		{0, time.Minute, 0},
	}
	for _, tt := range tests {
		if got := TokenLimitForWindow(tt.tpm, tt.window); got != tt.want {
			t.Errorf("TokenLimitForWindow(%d, %v) = %d, want %d", tt.tpm, tt.window, got, tt.want)
		}
	}
}

func TestProjectEmptyWindow(t *testing.T) {
	now := epoch
	old := []TokenUsage{{At: now.Add(-time.Minute - ms), TotalTokens: 50000}}
	for _, h := range [][]TokenUsage{nil, old} {
		p := ProjectTokenUsage(h, 10, time.Minute, 40000, now)
		if p.ProjectedTokens != 0 || p.ShouldThrottle || p.WindowTokensUsed != 0 {
			t.Errorf("empty window: %+v", p)
		}
	}
}

func TestProjectWindowStartIsInclusive(t *testing.T) {
	now := epoch
	h := []TokenUsage{
		{At: now.Add(-time.Minute), TotalTokens: 1000},    // exactly at the start: counts
		{At: now.Add(-time.Minute - 1), TotalTokens: 500}, // 1 ns before: does not
	}
	if p := ProjectTokenUsage(h, 0, time.Minute, 40000, now); p.WindowTokensUsed != 1000 {
		t.Fatalf("used %d, want 1000", p.WindowTokensUsed)
	}
}

func TestProjectMovingAverage(t *testing.T) {
	now := epoch
	h := []TokenUsage{{At: now.Add(-30 * time.Second), TotalTokens: 1000}, {At: now, TotalTokens: 3000}}
	p := ProjectTokenUsage(h, 5, time.Minute, 40000, now)
	want := Projection{ProjectedTokens: 10000, ProjectedTotal: 14000, UtilizationPercent: 35, WindowTokensUsed: 4000, WindowLimit: 40000}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	if q := ProjectTokenUsage(h, -3, time.Minute, 40000, now); q.ProjectedTokens != 0 || q.ProjectedTotal != 4000 {
		t.Fatalf("negative depth: %+v", q)
	}
}

func TestProjectThrottleBoundary(t *testing.T) {
	now := epoch
	one := func(tokens int64) []TokenUsage { return []TokenUsage{{At: now, TotalTokens: tokens}} }

	// 16000 used + 16000 projected = 32000 = 80 % of 40000: not above 80.
	if p := ProjectTokenUsage(one(16000), 1, time.Minute, 40000, now); p.ShouldThrottle || p.UtilizationPercent != 80 {
		t.Fatalf("exactly 80%%: %+v", p)
	}
	if p := ProjectTokenUsage(one(16001), 1, time.Minute, 40000, now); !p.ShouldThrottle {
		t.Fatalf("80.005%%: %+v", p)
	}

	// Five requests of 644 tokens in all, six queued: the total is
	// 644·11/5 = 1416.8, exactly 80 % of 1771, but float arithmetic makes
	// the utilisation 80.00000000000001. The exact comparison does not
	// throttle.
	h := []TokenUsage{{At: now, TotalTokens: 128}, {At: now, TotalTokens: 129}, {At: now, TotalTokens: 129}, {At: now, TotalTokens: 129}, {At: now, TotalTokens: 129}}
	p := ProjectTokenUsage(h, 6, time.Minute, 1771, now)
	if p.ShouldThrottle || p.UtilizationPercent <= 80 {
		t.Fatalf("exactly 80%% with float drift: %+v", p)
	}
	h[4].TotalTokens++
	if p := ProjectTokenUsage(h, 6, time.Minute, 1771, now); !p.ShouldThrottle {
		t.Fatalf("just above 80%%: %+v", p)
	}
}

func TestProjectUnlimitedNeverThrottles(t *testing.T) {
	now := epoch
	h := []TokenUsage{{At: now, TotalTokens: 1 << 40}}
	p := ProjectTokenUsage(h, 1000, time.Minute, 0, now)
	if p.ShouldThrottle || p.WindowLimit != 0 || p.UtilizationPercent != 0 {
		t.Fatalf("unlimited: %+v", p)
	}
	// A window too short for one token throttles any use.
	if p := ProjectTokenUsage(h, 0, ms, 40000, now); !p.ShouldThrottle {
		t.Fatalf("zero-token window: %+v", p)
	}
}

func TestTokenProjectorProviders(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	for provider, limit := range map[string]int64{"": 40000, "claude": 40000, "openai": 90000, "ollama": 0} {
		p, err := NewTokenProjector(ProjectorConfig{Provider: provider}, clk)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Project(1).WindowLimit; got != limit {
			t.Errorf("%q: limit %d, want %d", provider, got, limit)
		}
	}
	if _, err := NewTokenProjector(ProjectorConfig{Provider: "gemini"}, clk); !errors.Is(err, ErrUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	p, err := NewTokenProjector(ProjectorConfig{Provider: "gemini", TokensPerMinute: map[string]int64{"gemini": 120000}}, clk)
	if err != nil || p.Project(0).WindowLimit != 120000 {
		t.Fatalf("custom table: %v", err)
	}
}

func TestTokenProjectorUsesTheClock(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	p, _ := NewTokenProjector(ProjectorConfig{}, clk)
	p.Record(20000)
	clk.Advance(30 * time.Second)
	p.Record(10000)
	// avg 15000 · 1 queued + 30000 used = 45000 > 80 % of 40000.
	if got := p.Project(1); !got.ShouldThrottle || got.ProjectedTotal != 45000 {
		t.Fatalf("both in window: %+v", got)
	}
	clk.Advance(30*time.Second + ms) // the first leaves the window
	if got := p.Project(1); got.ShouldThrottle || got.WindowTokensUsed != 10000 || got.ProjectedTotal != 20000 {
		t.Fatalf("one in window: %+v", got)
	}
	clk.Advance(time.Minute)
	if got := p.Project(100); got.ProjectedTokens != 0 || got.ShouldThrottle {
		t.Fatalf("empty window: %+v", got)
	}
	p.mu.Lock()
	n := len(p.history)
	p.mu.Unlock()
	if n != 0 {
		t.Fatalf("history keeps %d expired entries", n)
	}
}

func TestTokenProjectorConcurrent(t *testing.T) {
	clk := clock.NewDeterministic(epoch)
	p, _ := NewTokenProjector(ProjectorConfig{Provider: "openai"}, clk)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				p.Record(10)
				p.Project(2)
				clk.Advance(ms)
			}
		})
	}
	wg.Wait()
	if got := p.Project(0).WindowTokensUsed; got != 8000 {
		t.Fatalf("used %d, want 8000", got)
	}
}
