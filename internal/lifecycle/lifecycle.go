// Package lifecycle runs a process's components in order and stops them in
// reverse: a component started later may depend on one started earlier
// (the query service on the edge's store), so it must stop first.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Group runs components, each with its own context, and stops them in the
// reverse of their start order when the parent context ends or any of
// them fails.
type Group struct {
	parent context.Context
	log    *slog.Logger
	mu     sync.Mutex
	comps  []*component
	failed chan struct{}
	once   sync.Once
	err    error
	// stopBound, when set, is how long StopAll waits for each component.
	stopBound time.Duration
}

type component struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// New returns a group whose components stop when ctx ends.
func New(ctx context.Context, log *slog.Logger) *Group {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Group{parent: ctx, log: log, failed: make(chan struct{})}
}

// Start runs run in its own goroutine with its own context, cancelled by
// StopAll. A component that returns while its context is live has failed,
// and the whole group stops.
func (g *Group) Start(name string, run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(g.parent))
	c := &component{name: name, cancel: cancel, done: make(chan struct{})}
	g.mu.Lock()
	g.comps = append(g.comps, c)
	g.mu.Unlock()
	go func() {
		defer close(c.done)
		c.err = run(ctx)
		if ctx.Err() == nil {
			// Stopped on its own: that is a failure of the daemon.
			if c.err == nil {
				c.err = errors.New("stopped unexpectedly")
			}
			g.fail(fmt.Errorf("%s: %w", name, c.err))
		}
	}()
}

func (g *Group) fail(err error) {
	g.once.Do(func() {
		g.err = err
		close(g.failed)
	})
}

// BoundStop makes StopAll wait at most d for each component from now on,
// leaving behind one that does not stop: for a process that stops because
// its state is gone, where closing a store can retry forever (Badger
// flushing into a deleted directory), and the process exits anyway.
func (g *Group) BoundStop(d time.Duration) {
	g.mu.Lock()
	g.stopBound = d
	g.mu.Unlock()
}

// Failed is closed when a component has failed.
func (g *Group) Failed() <-chan struct{} { return g.failed }

// Wait blocks until the parent context ends or a component fails, then
// stops everything in order and returns the first failure.
func (g *Group) Wait() error {
	select {
	case <-g.parent.Done():
	case <-g.failed:
		g.log.Error("shutting down after a failure", "err", g.err)
	}
	g.StopAll()
	return g.err
}

// StopAll cancels the components in reverse start order, each after the
// one started after it has returned.
func (g *Group) StopAll() {
	g.mu.Lock()
	comps := append([]*component(nil), g.comps...)
	g.mu.Unlock()
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		c.cancel()
		g.mu.Lock()
		bound := g.stopBound
		g.mu.Unlock()
		if bound > 0 {
			select {
			case <-c.done:
			case <-time.After(bound):
				g.log.Error("did not stop in time; left behind", "component", c.name, "after", bound)
				continue
			}
		} else {
			<-c.done
		}
		if c.err != nil && !errors.Is(c.err, context.Canceled) {
			g.log.Warn("stopped with error", "component", c.name, "err", c.err)
		}
		g.log.Info("stopped", "component", c.name)
	}
}
