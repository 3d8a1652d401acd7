package tools

import (
	"context"
	"slices"
	"sync"

	"github.com/cuedeck/cuedeck/pkg/core/guard"
)

// Notices collect what a tool call has to tell the agent beside its
// result, such as how far indexing got while it runs, without changing the
// result's shape: seed 002 clients parse read_context's array as it is.
// The transports carry them next to the result: the MCP server as further
// text content blocks, the NATS query service in its reply.
type Notices struct {
	mu    sync.Mutex
	texts []string
}

type noticesKey struct{}

// WithNotices returns a context whose tool calls' notices n collects.
func WithNotices(ctx context.Context) (context.Context, *Notices) {
	n := &Notices{}
	return context.WithValue(ctx, noticesKey{}, n), n
}

// Notify adds text to the notices collected for ctx; without a collector
// (a caller that would not pass them on) it does nothing.
func Notify(ctx context.Context, text string) {
	n, _ := ctx.Value(noticesKey{}).(*Notices)
	if n == nil || text == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.texts, text) {
		n.texts = append(n.texts, text)
	}
}

// Texts returns the notices in the order they came, each once, through
// the security guard like every other text an agent sees.
func (n *Notices) Texts() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.texts))
	for i, t := range n.texts {
		out[i], _ = guard.Redact(t)
	}
	return out
}
