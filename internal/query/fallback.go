package query

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// Route is one place a call can be answered from, named for the logs.
type Route struct {
	Name   string // e.g. "team", "local"
	Prefix string // logged with the name
	Caller tools.Caller
}

// Fallback is a tools.Caller that asks its primary route and, when no edge
// there answers (an error matching ErrNoEdge: no responders, or no reply
// in time), its secondary. A laptop's `cue mcp` asks the team's edges
// through the leaf node first and its own daemon when the team is out of
// reach. An edge that answers with a tool error has answered: the error is
// returned, not retried elsewhere.
type Fallback struct {
	primary, secondary Route
	log                *slog.Logger
	mu                 sync.Mutex
	answering          string // name of the route that answered last
}

// NewFallback returns a Fallback; log (nil discards) hears which route
// answers whenever that changes.
func NewFallback(primary, secondary Route, log *slog.Logger) *Fallback {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Fallback{primary: primary, secondary: secondary, log: log}
}

// Call implements tools.Caller. When neither route answers, the error is
// the secondary's.
func (f *Fallback) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	out, err := f.primary.Caller.Call(ctx, tool, args)
	if !errors.Is(err, ErrNoEdge) {
		f.answered(f.primary, nil)
		return out, err
	}
	if ctx.Err() != nil {
		return out, err
	}
	out, err2 := f.secondary.Caller.Call(ctx, tool, args)
	if !errors.Is(err2, ErrNoEdge) {
		f.answered(f.secondary, err)
	}
	return out, err2
}

// Answering names the route that answered the last call ("" before any).
func (f *Fallback) Answering() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answering
}

func (f *Fallback) answered(r Route, cause error) {
	f.mu.Lock()
	changed := f.answering != r.Name
	f.answering = r.Name
	f.mu.Unlock()
	if !changed {
		return
	}
	if cause != nil {
		f.log.Warn("no edge of "+f.primary.Name+" answers; answering from "+r.Name,
			"route", r.Name, "prefix", r.Prefix, "unanswered_prefix", f.primary.Prefix, "err", cause)
		return
	}
	f.log.Info("answering from "+r.Name, "route", r.Name, "prefix", r.Prefix)
}
