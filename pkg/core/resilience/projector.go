package resilience

import (
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// ErrUnknownProvider is returned by NewTokenProjector for a provider that has
// no entry in the tokens-per-minute table.
var ErrUnknownProvider = errors.New("resilience: unknown LLM provider")

// ThrottlePercent is seed 003 §3's threshold: a projection throttles when its
// utilisation is strictly above it.
const ThrottlePercent = 80

// DefaultTokensPerMinute is the provider table of seed 003 §3, plus
// "ollama" at 0: a local model has no provider quota, and a limit of 0 means
// unlimited (never throttle).
func DefaultTokensPerMinute() map[string]int64 {
	return map[string]int64{"claude": 40000, "openai": 90000, "ollama": 0}
}

// TokenUsage is the tokens one LLM request consumed, and when.
type TokenUsage struct {
	At          time.Time
	TotalTokens int64
}

// Projection is the outcome of ProjectTokenUsage.
type Projection struct {
	// ProjectedTokens is the moving average per request times the queue
	// depth: what the queued requests are expected to consume.
	ProjectedTokens float64
	// ProjectedTotal is WindowTokensUsed + ProjectedTokens.
	ProjectedTotal float64
	// UtilizationPercent is ProjectedTotal / WindowLimit · 100; 0 when the
	// limit is unlimited.
	UtilizationPercent float64
	// ShouldThrottle is UtilizationPercent > ThrottlePercent, decided in
	// exact arithmetic so that exactly 80 % does not throttle.
	ShouldThrottle bool
	// WindowTokensUsed is the sum of the usage inside the window.
	WindowTokensUsed int64
	// WindowLimit is the provider's quota for one window; 0 is unlimited.
	WindowLimit int64
}

// TokenLimitForWindow is seed 003's getTokenLimitForWindow:
// floor(tokensPerMinute / 60000 · window in ms), computed in integers so the
// floor is exact.
func TokenLimitForWindow(tokensPerMinute int64, window time.Duration) int64 {
	return tokensPerMinute * window.Milliseconds() / 60000
}

// ProjectTokenUsage is seed 003 §3's projectTokenUsage as a pure function:
// it keeps the usage at or after now−window, projects the average request
// onto queueDepth queued requests (a negative depth counts as 0), and
// compares the total with the window's share of tokensPerMinute (0 or less:
// unlimited). With no usage in the window the projection is zero and does
// not throttle; WindowLimit is still filled in.
func ProjectTokenUsage(history []TokenUsage, queueDepth int, window time.Duration, tokensPerMinute int64, now time.Time) Projection {
	p := Projection{WindowLimit: max(TokenLimitForWindow(tokensPerMinute, window), 0)}
	start := now.Add(-window)
	var n int64
	for _, u := range history {
		if !u.At.Before(start) {
			n++
			p.WindowTokensUsed += u.TotalTokens
		}
	}
	if n == 0 {
		return p
	}
	depth := int64(max(queueDepth, 0))
	p.ProjectedTokens = float64(p.WindowTokensUsed) / float64(n) * float64(depth)
	p.ProjectedTotal = float64(p.WindowTokensUsed) + p.ProjectedTokens
	if tokensPerMinute <= 0 {
		return p // unlimited
	}
	if p.WindowLimit == 0 {
		// A window too short to hold one token: any use exceeds it.
		p.ShouldThrottle = p.ProjectedTotal > 0
		return p
	}
	p.UtilizationPercent = p.ProjectedTotal / float64(p.WindowLimit) * 100
	// total = used + used/n·depth = used·(n+depth)/n, so
	// total/limit > 80 %  ⇔  used·(n+depth)·100 > 80·limit·n.
	lhs := new(big.Int).Mul(big.NewInt(p.WindowTokensUsed), big.NewInt(n+depth))
	lhs.Mul(lhs, big.NewInt(100))
	rhs := new(big.Int).Mul(big.NewInt(p.WindowLimit), big.NewInt(n))
	rhs.Mul(rhs, big.NewInt(ThrottlePercent))
	p.ShouldThrottle = lhs.Cmp(rhs) > 0
	return p
}

// ProjectorConfig configures a TokenProjector. Zero fields take defaults.
type ProjectorConfig struct {
	// Provider names the LLM provider whose quota applies; "" is "claude",
	// the seed's fallback. The caller reads it from its own configuration:
	// this package reads no environment.
	Provider string
	// Window is the span of usage that counts; default 60 s.
	Window time.Duration
	// TokensPerMinute is the provider table; nil is DefaultTokensPerMinute.
	TokensPerMinute map[string]int64
}

// TokenProjector records the tokens of each LLM request and projects the
// queue's usage against the provider's quota, so the extractor can slow
// down before the provider refuses it. It is safe for concurrent use.
type TokenProjector struct {
	clk    clock.Clock
	window time.Duration
	tpm    int64

	mu      sync.Mutex
	history []TokenUsage // in recording order; older than the window dropped
}

// NewTokenProjector returns a projector for cfg.Provider. If the provider is
// not in the table, ErrUnknownProvider is returned.
func NewTokenProjector(cfg ProjectorConfig, clk clock.Clock) (*TokenProjector, error) {
	if cfg.Provider == "" {
		cfg.Provider = "claude"
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.TokensPerMinute == nil {
		cfg.TokensPerMinute = DefaultTokensPerMinute()
	}
	tpm, ok := cfg.TokensPerMinute[cfg.Provider]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownProvider, cfg.Provider)
	}
	return &TokenProjector{clk: clk, window: cfg.Window, tpm: tpm}, nil
}

// Record notes that a request consumed totalTokens now. Negative counts are
// recorded as 0.
func (p *TokenProjector) Record(totalTokens int64) {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked(now)
	p.history = append(p.history, TokenUsage{At: now, TotalTokens: max(totalTokens, 0)})
}

// Project projects queueDepth more requests onto the usage of the last
// window.
func (p *TokenProjector) Project(queueDepth int) Projection {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked(now)
	return ProjectTokenUsage(p.history, queueDepth, p.window, p.tpm, now)
}

// pruneLocked drops the leading entries that have left the window, so the
// history holds at most one window of requests.
func (p *TokenProjector) pruneLocked(now time.Time) {
	start := now.Add(-p.window)
	i := 0
	for i < len(p.history) && p.history[i].At.Before(start) {
		i++
	}
	if i > 0 {
		p.history = append(p.history[:0], p.history[i:]...)
	}
}
