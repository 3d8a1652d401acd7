package access

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// BenchmarkAuthenticate is the cost a token adds to each request: one
// SHA-256 and a constant-time comparison with each of 16 tokens.
func BenchmarkAuthenticate(b *testing.B) {
	cfgs := make([]TokenConfig, 16)
	for i := range cfgs {
		cfgs[i] = TokenConfig{Name: fmt.Sprintf("t%d", i), Token: fmt.Sprintf("secret-%02d-0123456789abcdefgh", i), Repos: []string{"*"}}
	}
	tok, err := NewTokens(cfgs)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tok.Authenticate("secret-15-0123456789abcdefgh"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRateLimitedCall is the limiter's cost on an allowed call, over
// 1,000 clients.
func BenchmarkRateLimitedCall(b *testing.B) {
	lim, err := resilience.NewRateLimiter(map[string]resilience.RateRule{tools.ReadContext: {Limit: 1 << 30, Window: 1 << 40}}, clock.System{})
	if err != nil {
		b.Fatal(err)
	}
	next := tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	c := RateLimit(next, lim, nil)
	ctxs := make([]context.Context, 1000)
	for i := range ctxs {
		ctxs[i] = WithIdentity(context.Background(), Identity{Client: fmt.Sprintf("client-%d", i)})
	}
	i := 0
	for b.Loop() {
		if _, err := c.Call(ctxs[i%len(ctxs)], tools.ReadContext, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
