package workspace

import (
	"testing"

	"github.com/cuedeck/cuedeck/internal/access"
)

// The per-tool limits slow only those they protect: off on a laptop's
// daemon, per token once tokens are configured, as the mode says.
func TestRateLimitsFitWhereTheyRun(t *testing.T) {
	tokens := []access.TokenConfig{{Name: "alpha", Token: "s3cret-s3cret-s3cret-s3cret", Repos: []string{"*"}}}
	for _, c := range []struct {
		name string
		mcp  MCPConfig
		on   bool
	}{
		{"laptop default", MCPConfig{}, false},
		{"tokens configured", MCPConfig{Tokens: tokens}, true},
		{"a limit overridden", MCPConfig{RateLimits: map[string]RateLimitConfig{"read_doc": {Limit: 5}}}, true},
		{"on", MCPConfig{RateLimitsMode: "on"}, true},
		{"off with tokens", MCPConfig{RateLimitsMode: "off", Tokens: tokens}, false},
		{"older configs' disabled", MCPConfig{RateLimitsDisabled: true, Tokens: tokens}, false},
	} {
		if got := c.mcp.RateLimitsOn(); got != c.on || (c.mcp.RateRules() != nil) != c.on {
			t.Errorf("%s: limits on = %v, want %v", c.name, got, c.on)
		}
	}
}
